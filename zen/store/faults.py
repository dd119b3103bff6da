"""Injected crash points: `ZEN_CRASH_AT=<step>` makes the process that reaches that step of intake
or spawn kill itself (SIGKILL, as `kill -9` would: no cleanup, no flush) at that very instant.

The tests of "spawn exactly once" (issue 15) crash the supervisor at every step in turn, restart
it, and check that every task still runs, once. Unset (always, outside those tests) a step costs
one environment lookup. The variable never reaches an agent (zen.orchestration.job.spawn.pane_env
drops it), so an agent's hooks and commands cannot crash.
"""

from __future__ import annotations

import os
import signal

ENV = "ZEN_CRASH_AT"

# every step, in the order a task meets them
STEPS = (
    "intake.linked",          # the task file is linked into spool/cur, still in spool/new
    "intake.claimed",         # claimed (only in spool/cur), no job record yet
    "intake.task_written",    # jobs/<id>/task.yaml written, no event yet (then task.received
                              # and job.queued are written together)
    "intake.recorded",        # the record is complete (queued)
    "spawn.preflight",        # preflight.passed recorded, no worktree yet
    "spawn.worktree",         # `git worktree add` done, worktree.created not recorded
    "spawn.worktree_recorded",  # worktree.created recorded, no handoff yet
    "spawn.prepared",         # handoff and prompt written, no spawn.intent yet
    "spawn.intended",         # spawn.intent recorded, no tmux session yet
    "tmux.session",           # the job's tmux session exists on its placeholder, no agent yet
    "tmux.agent",             # the agent runs in its session, agent.spawned not recorded
    "spawn.spawned",          # agent.spawned recorded
)


def crash_point(step: str) -> None:
    """Die here, at once, if ZEN_CRASH_AT names this step."""
    if os.environ.get(ENV) == step:
        os.kill(os.getpid(), signal.SIGKILL)

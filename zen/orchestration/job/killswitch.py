"""The kill switch as every caller engages it (the CLI, the dashboard): control/KILL written (zen.
orchestration.autonomy), and the agents the guardian does not see held where they stand.

Engaged, the kill switch makes every domain observe-only, and an agent with a pre-execution hook
(Claude Code, Codex, Gemini CLI) is clamped at its very next call, since the guardian reads
control/KILL on every decision. An agent without one (aider, a `cmd`) would go on editing its
worktree unseen, so it is paused (SIGSTOP, `job.paused` by "kill switch") at once: it does nothing
at all, which is less than observe. Released, the kill switch resumes exactly the agents it paused;
an agent a human paused stays paused.
"""

from __future__ import annotations

from dataclasses import replace

from zen.agents.unguarded import is_guarded
from zen.core.events import EventType as E
from zen.errors import ZenError
from zen.orchestration.job.pause import pause, resume
from zen.orchestration.safety import autonomy
from zen.store.home import Home
from zen.store.jobs import JobStore

BY = "kill switch"


def engage(home: Home, reason: str | None) -> autonomy.KillSwitch:
    """Engage the kill switch and hold every live agent the guardian does not see."""
    result = autonomy.engage_kill_switch(home, reason)
    store = JobStore(home)
    held = []
    for job_id in autonomy.live_jobs(home):
        try:
            if is_guarded(store.task(job_id).agent):
                continue
            pause(home, job_id, by=BY)
        except (ZenError, OSError):
            continue     # not running, or already paused: nothing to hold
        held.append(job_id)
    return replace(result, held=tuple(held))


def release(home: Home) -> autonomy.Released:
    """Release the kill switch and resume the agents it held (never one a human paused)."""
    result = autonomy.release_kill_switch(home)
    store = JobStore(home)
    for job_id in autonomy.live_jobs(home):
        last = next((e for e in reversed(store.events(job_id)) if e.get("type") in (E.JOB_PAUSED, E.JOB_RESUMED)),
                    None)
        if last is None or last.get("type") != E.JOB_PAUSED or last.get("by") != BY:
            continue
        try:
            resume(home, job_id, by=BY)
        except ZenError:
            continue
    return result


__all__ = ["BY", "engage", "release"]

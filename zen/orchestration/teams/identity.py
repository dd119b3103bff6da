"""Whom a `zen mcp serve` process acts for (DESIGN 13: a job controls only its own workers).

$ZEN_JOB_ID names the job, but an agent can write an MCP configuration of its own (a `.mcp.json`
in its worktree, a Codex profile) that starts zen's server with another job's id. So the name is
believed only with proof the agent cannot make:

- the server runs under that job's agent: the process of the job's tmux pane (zen's exit wrapper,
  the agent below it) is one of the server's ancestors. A server an agent starts, however it is
  configured, runs under its own pane, never another job's; a process that escapes its parent
  (double fork) has no pane above it at all. Or
- it holds the job's token ($ZEN_MCP_TOKEN, zen.store.teamkey), made from the home's team key,
  which no agent reads: a person or a test speaking for the job from outside it.

Anything else is refused before a tool is served (fail-closed: no tmux answer is a refusal).
"""

from __future__ import annotations

import time
from collections.abc import Mapping

from zen.adapters import procs
from zen.adapters.tmux import Tmux
from zen.errors import Refused, ZenError
from zen.orchestration.job.spawn import session_name
from zen.orchestration.teams.workers import Caller, caller_from_env
from zen.store import teamkey
from zen.store.home import Home

TOKEN_ENV = "ZEN_MCP_TOKEN"
# an agent may start its servers before zen has its pane on record: wait that long for the pane
PANE_WAIT_S = 10.0


def server_caller(home: Home, env: Mapping[str, str], pid: int, *, wait_s: float = PANE_WAIT_S) -> Caller:
    """The job process `pid` (a `zen mcp serve`) may act for; Refused when it cannot prove it."""
    caller = caller_from_env(home, dict(env))
    job = caller.job
    if job is None:
        raise ZenError("zen mcp serve acts for one job: $ZEN_JOB_ID is not set (zen sets it for every "
                       "job's agent)")
    if teamkey.valid(home, job, env.get(TOKEN_ENV)):
        return caller
    above = set(procs.ancestors(pid))
    tmux = Tmux.for_home(home)
    deadline = time.monotonic() + wait_s
    while True:
        info = tmux.pane(session_name(job))
        if info is not None and info.pid is not None and not info.dead:
            if info.pid in above:
                return caller
            break
        if time.monotonic() >= deadline:
            break
        time.sleep(0.1)
    raise Refused(f"zen mcp serve for job {job} is refused: it does not run under that job's agent "
                  "(a job's team tools act only for the job whose agent started them)")


__all__ = ["TOKEN_ENV", "server_caller"]

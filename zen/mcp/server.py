"""`zen mcp serve`: zen's team tools for one job's agent, over stdio (DESIGN 13).

The official MCP Python SDK (`mcp`, v2: `MCPServer`, the former FastMCP) serves them; only this
command imports it (zen/cli/mcp.py imports this module when the command runs). One server runs per
job, started by the job's agent from the MCP configuration zen wrote for it, and it acts as that
job: $ZEN_JOB_ID names it, and zen.orchestration.teams.identity believes the name only for a server
running under that job's agent (or holding the job's token), so an agent that starts zen's server
with another job's id is refused before any tool runs. Each tool is a thin call into zen.orchestration (teams,
team_ops), the same code `zen team` runs.

Errors come back as MCP tool errors whose text is one JSON object: {"error": KIND, "message":
SENTENCE, ...}, KIND the error's kind in zen/errors.py, e.g. {"error": "revision-mismatch",
"current_revision": 12, ...} or {"error": "refused", ...}. stdout is the
JSON-RPC channel: nothing else may print there (logging goes to stderr).
"""

from __future__ import annotations

import json
import logging
import sys
from collections.abc import Callable
from typing import Any, TypeVar

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError

from zen import __version__
from zen.errors import RevisionMismatch, ZenError
from zen.orchestration.teams import ops as team_ops
from zen.orchestration.teams import workers as teams
from zen.orchestration.teams.workers import Caller, SpawnRequest
from zen.store.home import Home

log = logging.getLogger(__name__)
T = TypeVar("T")

INSTRUCTIONS = """zen's team tools. You are a zen job: agent_spawn starts a worker job (its own git
worktree, terminal and guardian, on your lane) for part of your work; agent_wait holds until your
workers report or end; agent_status shows them with their revision, which agent_control needs
(compare-and-set: a stale revision is refused with the current one). A worker reports to its parent
with agent_report (done | blocked | progress) and may message it with agent_message. agent_lock
leases a path of the repository for you. get_agent_brief says who you are, your goal and parent."""


def _error(kind: str, message: str, **extra: Any) -> ToolError:
    return ToolError(json.dumps({"error": kind, "message": message, **extra}))


def _call(fn: Callable[[], T]) -> T:
    """Run one tool's body; zen's sentences become tool errors the model can read, named by the
    error's kind (zen/errors.py), never by its text."""
    try:
        return fn()
    except RevisionMismatch as exc:
        raise _error(exc.kind, str(exc), job=exc.job, expected_revision=exc.expected,
                     current_revision=exc.current) from None
    except ZenError as exc:
        raise _error(exc.kind, str(exc)) from None


def build(home: Home, caller: Caller) -> MCPServer[Any]:
    """The server with every team tool bound to `caller`'s job."""
    server: MCPServer[Any] = MCPServer("zen", version=__version__, instructions=INSTRUCTIONS,
                                       log_level="WARNING")

    @server.tool()
    def agent_spawn(goal: str, agent: str | None = None, paths: list[str] | None = None,
                    name: str | None = None, request_id: str | None = None, until_done: bool = False,
                    budget_tokens: int | None = None, budget_cost_usd: float | None = None,
                    budget_wall: str | None = None,
                    script: list[dict[str, Any]] | None = None) -> dict[str, Any]:
        """Start a worker job for part of your work: its own worktree on your lane, its own agent
        (claude, codex or sim; default: yours), the paths it leases from the start. Returns {id,
        revision, state}. A request_id makes a retried call return the same worker. until_done keeps
        it going turn after turn until it reports done (budget_* are hard caps). Refused, with the
        reason, over teams.max_active_workers or teams.max_depth."""
        budget = {k: v for k, v in (("tokens", budget_tokens), ("cost_usd", budget_cost_usd),
                                    ("wall", budget_wall)) if v is not None} or None
        req = SpawnRequest(goal=goal, agent=agent, paths=tuple(paths or ()), name=name, request_id=request_id,
                           until_done=until_done, budget=budget, script=script)
        return _call(lambda: teams.spawn(home, caller, req))

    @server.tool()
    def agent_status(ids: list[str] | None = None) -> dict[str, Any]:
        """Your workers (all, or those named): state, revision, last report, whether settled."""
        return {"workers": _call(lambda: team_ops.status(home, caller, ids))}

    @server.tool()
    def agent_wait(ids: list[str] | None = None, timeout_s: float = 300.0) -> dict[str, Any]:
        """Hold until every named worker (default: all yours) has reported done or blocked, or ended,
        or timeout_s passed. Returns {done, waited_s, workers}; call again if done is false."""
        return _call(lambda: team_ops.wait(home, caller, ids, timeout_s))

    @server.tool()
    def agent_report(status: str, summary: str = "", blocker: str = "") -> dict[str, Any]:
        """Report to your parent job: status done (with a summary of what you did), blocked (with
        the blocker: what stops you and what you need), or progress."""
        return _call(lambda: team_ops.report(home, caller, status, summary, blocker))

    @server.tool()
    def agent_control(id: str, action: str, expected_revision: int) -> dict[str, Any]:
        """pause, resume, cancel, finish or continue one of your workers. expected_revision is the
        revision agent_status showed; if the worker moved on since, nothing is done and the error
        carries its current revision."""
        return _call(lambda: team_ops.control(home, caller, id, action, expected_revision))

    @server.tool()
    def agent_message(id: str, text: str) -> dict[str, Any]:
        """Send text to one of your workers or to your parent: typed in if it waits at its prompt,
        else delivered when its current turn ends."""
        return _call(lambda: team_ops.message(home, caller, id, text))

    @server.tool()
    def agent_lock(path: str, shared: bool = False, reason: str = "") -> dict[str, Any]:
        """Lease a path (file, directory/ or glob) of the repository for your job: other jobs'
        writes to it are refused while you hold it. Refused, naming the holder, if another job has it."""
        return _call(lambda: team_ops.lock(home, caller, path, shared=shared, reason=reason))

    @server.tool()
    def agent_unlock(paths: list[str] | None = None) -> dict[str, Any]:
        """End your leases (all, or those on the paths given)."""
        return {"released": _call(lambda: team_ops.unlock(home, caller, paths))}

    @server.tool()
    def get_agent_brief() -> dict[str, Any]:
        """Who you are in zen: your job, goal, parent, workers, paths, and your handoff text."""
        return _call(lambda: team_ops.brief(home, caller))

    return server


def serve(home: Home, caller: Caller) -> int:
    """Serve on stdin/stdout until the client closes them."""
    logging.basicConfig(stream=sys.stderr, level=logging.WARNING)
    build(home, caller).run("stdio")
    return 0


__all__ = ["build", "serve"]

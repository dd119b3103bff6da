"""zen mcp serve: the team tools for one job's agent, over stdio (DESIGN 13)."""

from __future__ import annotations

import os

import typer

from zen.cli import common
from zen.errors import ZenError
from zen.orchestration.teams import caller_from_env


def serve() -> int:
    """Serve zen's team tools (agent_spawn, agent_status, agent_wait, agent_report, agent_control,
    agent_message, agent_lock, agent_unlock, get_agent_brief) over stdio for the job in
    $ZEN_JOB_ID. zen starts one for every job's agent through the agent's MCP settings; it is not
    meant to be run by hand."""
    home = common.home()
    caller = caller_from_env(home)
    if caller.job is None or not os.environ.get("ZEN_JOB_ID"):
        raise ZenError("zen mcp serve acts for one job: $ZEN_JOB_ID is not set (zen sets it for every "
                       "job's agent)")
    # the MCP SDK is imported by this command only: nothing else in zen pays for it
    from zen.mcp.server import serve as run

    return run(home, caller)


def register(app: typer.Typer) -> None:
    group = typer.Typer(name="mcp", help="zen's MCP server (the team tools an agent calls).",
                        no_args_is_help=True)
    group.command("serve")(serve)
    app.add_typer(group)

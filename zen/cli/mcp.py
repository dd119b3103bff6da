"""zen mcp serve: the team tools for one job's agent, over stdio (DESIGN 13)."""

from __future__ import annotations

import os

import typer

from zen.cli import common
from zen.orchestration.teams.identity import server_caller


def serve() -> int:
    """Serve zen's team tools (agent_spawn, agent_status, agent_wait, agent_report, agent_control,
    agent_message, agent_lock, agent_unlock, get_agent_brief) over stdio for the job in
    $ZEN_JOB_ID. zen starts one for every job's agent through the agent's MCP settings, and it acts
    only under that job's agent: started anywhere else, it is refused. Not meant to be run by hand."""
    home = common.home()
    caller = server_caller(home, os.environ, os.getpid())
    # the MCP SDK is imported by this command only: nothing else in zen pays for it
    from zen.mcp.server import serve as run

    return run(home, caller)


def register(app: typer.Typer) -> None:
    group = typer.Typer(name="mcp", help="zen's MCP server (the team tools an agent calls).",
                        no_args_is_help=True)
    group.command("serve")(serve)
    app.add_typer(group)

"""zen run: an agent in this terminal and directory, as an attached job (issue 39)."""

from __future__ import annotations

import typer

from zen.cli import common


def run(ctx: typer.Context,
        agent: str = typer.Argument(..., help="claude, codex, gemini or aider."),
        lane: str = typer.Option(None, "--lane", help="The lane this directory belongs to (else found "
                                 "from the lanes' checkouts; none: the home's default level)."),
        name: str = typer.Option(None, "--name", help="The job's name (else AGENT-<directory>).")) -> int:
    """Start AGENT here as an attached job: zen's guardian, its wall, turns, usage and leases.

    Everything after AGENT goes to the agent unchanged (zen run claude -p "fix the test"). zen's
    options come before AGENT. The job ends with the agent's exit code, and nothing is harvested:
    files.changed records what the session changed in the checkout.
    """
    from zen.orchestration.attach.run import run as run_attached  # only this command pays for it

    return run_attached(common.home(), agent, list(ctx.args), lane=lane, name=name)


def register(app: typer.Typer) -> None:
    app.command("run", context_settings={"allow_extra_args": True, "ignore_unknown_options": True,
                                         "allow_interspersed_args": False})(run)

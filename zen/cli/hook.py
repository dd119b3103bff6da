"""zen hook EVENT: an agent's turn signal.

Agents reach it without the CLI framework (zen/__main__.py hands it straight to the turn hook);
this entry gives it --help and the same behaviour when it is reached through the CLI.
"""

from __future__ import annotations

import typer

from zen.orchestration.job.turnhook import main as turn_hook


def hook(ctx: typer.Context,
         event: str = typer.Argument(..., help="Stop, Notification, PermissionRequest, UserPromptSubmit, "
                                     "SessionEnd, codex-notify or aider-notify.")) -> int:
    """An agent's turn signal (its hook JSON on stdin) appended to the job in $ZEN_JOB_ID; always exits 0."""
    return turn_hook([event, *ctx.args])


def register(app: typer.Typer) -> None:
    app.command("hook", context_settings={"allow_extra_args": True, "ignore_unknown_options": True})(hook)

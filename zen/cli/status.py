"""zen status."""

from __future__ import annotations

import typer

from zen.cli import common, render
from zen.cli.common import JSON
from zen.cli.views import status_lines
from zen.orchestration.read import overview


def status(json_out: bool = JSON,
           tmux: bool = typer.Option(False, "--tmux", help="One short line for a tmux status bar, e.g. "
                                     "set -g status-right '#(zen --home H status --tmux)'.")) -> int:
    """Tasks waiting in the spool, every job with its state, and whether a supervisor runs."""
    if tmux:
        from zen.tui.segment import tmux_segment  # only this form reads the live views' model

        render.say(tmux_segment(common.home()))
        return 0
    render.emit(overview.status(common.home(), full=json_out), json_out, status_lines)
    return 0


def register(app: typer.Typer) -> None:
    app.command("status")(status)

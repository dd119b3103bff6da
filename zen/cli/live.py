"""zen watch, zen grid: the live views in the terminal (DESIGN section 12; zen/tui)."""

from __future__ import annotations

import os
import sys

import typer

from zen.cli import common


def watch(
    plain: bool = typer.Option(False, "--plain", help="A plain live table (piped: one line per change), "
                               "for logs and dumb terminals."),
) -> int:
    """Every job, live, who needs you on top. Keys: a attach, s send, f finish, c cancel, h harvest,
    d review diff, l lane, v view, / filter, q quit."""
    home = common.home()
    dumb = os.environ.get("TERM", "") in ("", "dumb")
    if plain or dumb or not (sys.stdin.isatty() and sys.stdout.isatty()):
        from zen.tui.plain import run_plain  # rich only: the full-screen app is not loaded

        return run_plain(home, tty=sys.stdout.isatty() and not dumb)
    from zen.tui.app import WatchApp  # Textual is loaded by this command only

    WatchApp(home).run()
    return 0


def register(app: typer.Typer) -> None:
    app.command("watch")(watch)

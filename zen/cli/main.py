"""The error funnel (DESIGN section 9) and the assembly of every command group.

0 ok · 1 expected error with one sentence · 2 usage · 3 bug (traceback in a log file, path
printed) · 4 guardian deny · 130 interrupted.
"""

from __future__ import annotations

import os
import sys
import time
import traceback
from pathlib import Path

import typer

from zen import __version__
from zen.cli import common
from zen.errors import ZenError

HELP = """zen runs many AI coding agents side by side, each in its own git worktree and tmux
session, watched by a supervisor and checked by a fail-closed guardian.

Start with: zen init DIR, zen lane add NAME PATH, zen supervise --detach, zen dispatch "PROMPT".
"""


def build_app() -> typer.Typer:
    app = typer.Typer(
        name="zen",
        help=HELP,
        no_args_is_help=True,
        add_completion=False,
        pretty_exceptions_enable=False,
        rich_markup_mode=None,
        context_settings={"help_option_names": ["-h", "--help"]},
    )

    def show_version(value: bool) -> None:
        if value:
            common.say(f"zen {__version__}")
            raise typer.Exit(0)

    @app.callback()
    def root(
        home: str = typer.Option(None, "--home", help="The zen home (else $ZEN_HOME, else the nearest ancestor with zen.yaml)."),
        version: bool = typer.Option(False, "--version", help="Print the version and exit.", is_eager=True,
                                     callback=show_version),
    ) -> None:
        common.set_home_option(home)

    from zen.cli import (
        cmd_autonomy,
        cmd_guard,
        cmd_home,
        cmd_incidents,
        cmd_jobs,
        cmd_schedule,
        cmd_supervise,
    )

    for module in (cmd_home, cmd_jobs, cmd_supervise, cmd_guard, cmd_autonomy, cmd_incidents, cmd_schedule):
        module.register(app)
    cmd_supervise.register_hook(app)  # plumbing called by agents: listed last
    return app


def _crash_log() -> Path:
    home = common.home_or_none()
    if home is not None:
        directory = home.logs
    else:
        directory = Path(os.environ.get("XDG_STATE_HOME") or Path.home() / ".local" / "state") / "zen"
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except OSError:
        directory = Path("/tmp")
    path = directory / f"crash-{time.strftime('%Y%m%dT%H%M%S')}-{os.getpid()}.log"
    path.write_text(f"zen {__version__}\nargv: {sys.argv!r}\n\n{traceback.format_exc()}")
    return path


def main(argv: list[str] | None = None) -> int:
    app = build_app()
    try:
        rv = app(args=argv, prog_name="zen", standalone_mode=False)
    except typer.Exit as exc:
        return int(exc.exit_code or 0)
    except typer.Abort:
        return 130
    except typer.TyperException as exc:  # usage errors (bad option, missing argument, ...)
        show = getattr(exc, "show", None)
        if show is not None:
            show()
        else:
            sys.stderr.write(f"zen: {exc}\n")
        return int(getattr(exc, "exit_code", 2) or 2)
    except ZenError as exc:
        sys.stderr.write(f"zen: {exc}\n")
        return exc.exit_code
    except KeyboardInterrupt:
        sys.stderr.write("zen: interrupted\n")
        return 130
    except BrokenPipeError:
        return 0
    except Exception:
        path = _crash_log()
        sys.stderr.write(f"zen: unexpected error; the details are in {path}\n")
        return 3
    if isinstance(rv, int):
        return rv
    return 0

"""What every command shares: the home it works on, the --json option, and stdin arguments."""

from __future__ import annotations

import os
import sys

import typer

from zen.errors import ZenError
from zen.store.home import Home, find_home

_home_option: str | None = None

# the option every command that shows data takes
JSON = typer.Option(False, "--json", help="Print the result as one JSON document.")
JOB = typer.Argument(..., help="Job id, unique prefix, or name.")


def set_home_option(value: str | None) -> None:
    global _home_option
    _home_option = value


def home_option() -> str | None:
    return _home_option


def home() -> Home:
    return find_home(_home_option)


def home_or_none() -> Home | None:
    try:
        return home()
    except (ZenError, OSError):  # no home, or the cwd is gone
        return None


def home_root_or_none() -> str | None:
    """The home as --home / $ZEN_HOME / discovery give it, or None when there is none; a home
    named by --home or $ZEN_HOME that does not exist is an error, not a fallback."""
    h = home_or_none()
    if h is None and (_home_option or os.environ.get("ZEN_HOME")):
        home()  # raises the one-sentence NoHome error
    return str(h.root) if h is not None else None


def text_or_stdin(text: str | None) -> str | None:
    """`-` means: read the text from stdin."""
    return sys.stdin.read() if text == "-" else text

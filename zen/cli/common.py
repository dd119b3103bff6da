"""What every command shares: the home, JSON output, and the one renderer for text."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from zen.store.home import Home, find_home

_home_option: str | None = None


def set_home_option(value: str | None) -> None:
    global _home_option
    _home_option = value


def home() -> Home:
    return find_home(_home_option)


def home_or_none() -> Home | None:
    try:
        return home()
    except Exception:
        return None


def emit_json(data: Any) -> None:
    sys.stdout.write(json.dumps(data, indent=2, default=str, ensure_ascii=False) + "\n")


def console() -> Any:
    from rich.console import Console

    # Piped output keeps whole ids on a line: scripts and people both grep it.
    width = None if sys.stdout.isatty() else 250
    return Console(highlight=False, soft_wrap=True, width=width)


def escape(text: str) -> str:
    """Agent-produced text is data: never let it be read as rich markup."""
    from rich.markup import escape as rich_escape

    return rich_escape(text)


def table(columns: list[str], rows: list[list[str]], title: str | None = None) -> None:
    from rich.table import Table

    t = Table(title=title, box=None, pad_edge=False, header_style="bold")
    for col in columns:
        t.add_column(col, no_wrap=True, overflow="fold")
    for row in rows:
        t.add_row(*(escape(str(c)) for c in row))
    console().print(t)


def say(text: str) -> None:
    """Plain text to stdout (no markup interpretation)."""
    sys.stdout.write(text + "\n")


def err(text: str) -> None:
    sys.stderr.write(text + "\n")


def rel(path: str | Path | None, base: Path | None = None) -> str:
    if path is None:
        return "-"
    p = Path(path)
    if base is not None:
        try:
            return str(p.relative_to(base))
        except ValueError:
            pass
    return str(p)

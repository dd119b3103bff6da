"""zen init."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import typer

from zen.cli import render
from zen.cli.common import JSON
from zen.store.home import init_home


@dataclass(frozen=True)
class Initialised:
    home: str
    created: list[str] = field(default_factory=list)


def _text(r: Initialised) -> Iterator[render.Out]:
    if r.created:
        yield f"initialised zen home at {r.home} ({len(r.created)} entries created)"
    else:
        yield f"zen home at {r.home} is already complete; nothing changed"
    yield f"next: export ZEN_HOME={r.home}; zen lane add NAME /path/to/repo"


def init(
    directory: Path = typer.Argument(Path("."), help="Where to create the home (default: here)."),
    json_out: bool = JSON,
) -> int:
    """Create a zen home (idempotent: never overwrites a file you may have edited)."""
    home, created = init_home(directory)
    render.emit(Initialised(str(home.root), created), json_out, _text)
    return 0


def register(app: typer.Typer) -> None:
    app.command("init")(init)

"""zen init."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import typer

from zen.cli import render
from zen.cli.common import JSON
from zen.orchestration.home.fastsetup import fast_setup
from zen.store.home import init_home_report


@dataclass(frozen=True)
class Initialised:
    home: str
    created: list[str] = field(default_factory=list)
    preset: list[str] = field(default_factory=list)    # zen.yaml fields --fast filled
    private: list[str] = field(default_factory=list)   # folders other users could enter, now 0700


def _text(r: Initialised) -> Iterator[render.Out]:
    if r.created:
        yield f"initialised zen home at {r.home} ({len(r.created)} entries created)"
    else:
        yield f"zen home at {r.home} is already complete" + ("" if r.private else "; nothing changed")
    if r.private:
        yield f"made private to you (chmod 700, other users could enter them): {', '.join(r.private)}"
    if r.preset:
        yield f"recommended preset: filled {len(r.preset)} missing field(s) of zen.yaml"
    yield f"next: export ZEN_HOME={r.home}; zen lane add NAME /path/to/repo"


def init(
    directory: Path = typer.Argument(Path("."), help="Where to create the home (default: here)."),
    fast: bool = typer.Option(False, "--fast", help="Also fill zen.yaml's missing fields with the recommended "
                              "preset (zen config fast-setup), in one save; nothing that widens what agents may do."),
    json_out: bool = JSON,
) -> int:
    """Create a zen home, private to you (0700), with the default policy and seed incidents
    (idempotent: never overwrites a file you may have edited; run it again to restore a missing one)."""
    home, created, private = init_home_report(directory)
    filled = fast_setup(home) if fast else []
    render.emit(Initialised(str(home.root), created, filled, private), json_out, _text)
    return 0


def register(app: typer.Typer) -> None:
    app.command("init")(init)

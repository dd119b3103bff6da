"""zen config fast-setup: the recommended preset in zen.yaml (missing fields only)."""

from __future__ import annotations

from collections.abc import Iterator

import typer

from zen.cli import common, render
from zen.cli.common import JSON
from zen.orchestration.home.fastsetup import fast_setup

config = typer.Typer(help="zen.yaml helpers.", no_args_is_help=True)


def filled_text(filled: list[str]) -> Iterator[render.Out]:
    if not filled:
        yield "zen.yaml already has every field of the recommended preset; nothing changed"
        return
    yield f"filled {len(filled)} missing field(s) of zen.yaml with the recommended preset:"
    yield from (f"  {name}" for name in filled)


@config.command("fast-setup")
def fast_setup_cmd(json_out: bool = JSON) -> int:
    """Write the recommended preset into zen.yaml in one save: only fields that are missing are
    filled (yours stay, comments too), and nothing in it widens what agents may do."""
    filled = fast_setup(common.home())
    render.emit({"filled": filled}, json_out, lambda r: filled_text(r["filled"]))
    return 0


def register(app: typer.Typer) -> None:
    app.add_typer(config, name="config")

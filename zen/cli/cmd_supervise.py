"""Commands of this group are registered here (filled in by its issue)."""

from __future__ import annotations

import typer


def register(app: typer.Typer) -> None:
    return None

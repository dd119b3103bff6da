"""zen demo: the main job end to end (what `make demo` runs), from any directory."""

from __future__ import annotations

import typer

from zen.demo import main as run_demo


def demo() -> int:
    """Run zen's main job in a temp dir, offline, in under a minute: a fresh home and a sample
    lane, the supervisor, three simulated agents (one edits and commits, one asks a question the
    demo answers, one tries commands the guardian denies), their review branches, a clean stop.
    Exits 1 when anything does not happen as narrated."""
    return run_demo()


def register(app: typer.Typer) -> None:
    app.command("demo")(demo)

"""zen remote-turn: the entrypoint of a turn that runs as a Ray job (DESIGN section 14).

Plumbing: zen's Ray executor submits it with the turn's spec in $ZEN_TURN_SPEC; people never
run it by hand. See zen/orchestration/job/remote_turn.py for what it does.
"""

from __future__ import annotations

import typer

from zen.orchestration.job.remote_turn import main as run_turn


def remote_turn() -> int:
    """Run one turn of a job on this (Ray worker) node and push its work to the lane's remote."""
    return run_turn()


def register(app: typer.Typer) -> None:
    app.command("remote-turn")(remote_turn)

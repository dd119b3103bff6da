"""The resident guardian as zen starts it (`zen guard serve`): the guard hook's own verdict for
every call, and the turn signals of walled agents' hooks recorded for them (zen/guard/resident
knows neither: it is given both here)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from zen.guard.hook import verdict
from zen.guard.resident.server import main as resident_main
from zen.orchestration.job.turnhook import relayed


def serve(argv: list[str], writes_check: Callable[[], Any] | None = None) -> int:
    return resident_main(argv, verdict, writes_check=writes_check, turns=relayed)

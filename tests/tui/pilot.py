"""Driving `zen watch` headless: wait for what the screen shows, move the cursor with keys."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from textual.pilot import Pilot

from zen.tui.app import WatchApp


async def until(pilot: Pilot[Any], predicate: Callable[[], Any], timeout: float = 20.0,
                message: str = "the screen") -> Any:
    deadline = time.monotonic() + timeout
    last: Any = None
    while time.monotonic() < deadline:
        try:
            last = predicate()
        except (AssertionError, KeyError, LookupError) as exc:
            last = exc
        else:
            if last:
                return last
        await pilot.pause(0.05)
    raise AssertionError(f"timed out after {timeout}s waiting for {message} (last: {last!r})")


def shown(app: WatchApp) -> list[tuple[str, str]]:
    """(job, state cell) as drawn, top first."""
    return app.table.rows_shown()


async def select(pilot: Pilot[Any], app: WatchApp, job: str) -> None:
    """Move the cursor onto `job`'s row with the arrow keys, as a user would."""
    order = [j for j, _ in shown(app)]
    delta = order.index(job) - app.table.cursor_row
    for _ in range(abs(delta)):
        await pilot.press("down" if delta > 0 else "up")
    assert app.table.selected() == job

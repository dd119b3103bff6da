"""The circuit breaker on automatic work (DESIGN section 3): pure, and stdlib-free, since
`zen status` shows it on every call (zen.core.schedule re-exports it)."""

from __future__ import annotations

from collections.abc import Sequence

CONTROL_VERSION = 1   # the format of control/heartbeat and control/breaker.json (zen.core.model re-exports it)


def breaker(automatic_starts: Sequence[float], *, now: float, window_s: float, limit: int, hold_s: float,
            open_until: float | None) -> float | None:
    """When the breaker stays open until (epoch s), or None when closed.

    It opens when more than `limit` automatic starts fall in the rolling window, and holds for
    `hold_s` from that moment; an open breaker is not extended by the starts that opened it.
    """
    if open_until is not None and open_until > now:
        return open_until
    recent = [t for t in automatic_starts if now - window_s <= t <= now]
    if len(recent) > limit:
        return now + hold_s
    return None

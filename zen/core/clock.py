"""The clock, injected: the supervisor and the job context ask it for the time, so tests can
replay a recorded history without real time passing (as honcho injects its clock).

    Clock.time()       wall clock, epoch seconds (deadlines, timestamps in files)
    Clock.monotonic()  for intervals (idle detection, grace periods)
"""

from __future__ import annotations

import time
from typing import Protocol


class Clock(Protocol):
    def time(self) -> float: ...

    def monotonic(self) -> float: ...


class SystemClock:
    """The real clocks of the machine."""

    def time(self) -> float:
        return time.time()

    def monotonic(self) -> float:
        return time.monotonic()


class ManualClock:
    """A clock that moves only when told to: `advance(s)` moves both readings together."""

    def __init__(self, wall: float = 1_764_583_200.0, mono: float = 1000.0) -> None:
        self._wall = wall
        self._mono = mono

    def time(self) -> float:
        return self._wall

    def monotonic(self) -> float:
        return self._mono

    def advance(self, seconds: float) -> None:
        if seconds < 0:
            raise ValueError("a clock does not run backwards")
        self._wall += seconds
        self._mono += seconds


SYSTEM = SystemClock()

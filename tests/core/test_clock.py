"""The injected clock (zen.core.clock): the manual clock moves only when told, both readings
together; the system clock is the machine's."""

from __future__ import annotations

import time

import pytest

from zen.core.clock import SYSTEM, Clock, ManualClock, SystemClock


def elapsed(clock: Clock, since: float) -> float:
    """What the supervisor does with a clock: intervals from monotonic()."""
    return clock.monotonic() - since


def test_a_manual_clock_stands_still_until_advanced() -> None:
    c = ManualClock(wall=1_000_000.0, mono=50.0)
    assert (c.time(), c.monotonic()) == (1_000_000.0, 50.0)
    assert (c.time(), c.monotonic()) == (1_000_000.0, 50.0)  # no time passes by itself


def test_advancing_moves_wall_and_monotonic_together() -> None:
    c = ManualClock(wall=1_000_000.0, mono=50.0)
    start = c.monotonic()
    c.advance(2.5)
    c.advance(0.5)
    assert c.time() == 1_000_003.0
    assert elapsed(c, start) == 3.0


def test_advancing_by_zero_is_allowed_and_changes_nothing() -> None:
    c = ManualClock()
    before = (c.time(), c.monotonic())
    c.advance(0)
    assert (c.time(), c.monotonic()) == before


def test_a_clock_never_runs_backwards() -> None:
    c = ManualClock(wall=10.0, mono=10.0)
    with pytest.raises(ValueError, match="backwards"):
        c.advance(-0.001)
    assert (c.time(), c.monotonic()) == (10.0, 10.0)  # the refused step left no trace


def test_the_default_manual_clock_reads_a_plausible_date() -> None:
    # timestamps written from it (events' ts) must parse as a real date, not 1970
    assert ManualClock().time() > 1_600_000_000


def test_the_system_clock_is_the_machines() -> None:
    assert isinstance(SYSTEM, SystemClock)
    before = time.time()
    wall = SYSTEM.time()
    after = time.time()
    assert before <= wall <= after
    m1 = SYSTEM.monotonic()
    m2 = SYSTEM.monotonic()
    assert m2 >= m1
    assert abs(m1 - time.monotonic()) < 1.0

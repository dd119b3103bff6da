"""The background worker the threads zen starts are made of (zen.adapters.worker): a named
daemon thread, a pass at once when poked, a pass that raises logged by the worker's name and
the loop going on, a stop that wakes a waiting worker at once."""

from __future__ import annotations

import logging
import threading
import time

import pytest

from tests.helpers import wait_until
from zen.adapters.worker import Worker

log = logging.getLogger("zen.test.worker")


def test_a_poke_runs_a_pass_now_and_stop_does_not_wait_out_the_timeout() -> None:
    passes: list[float] = []
    w = Worker("zen-test-worker", lambda: passes.append(time.monotonic()) or 3600.0, log).start()
    try:
        wait_until(lambda: len(passes) == 1, timeout=5, message="the first pass")
        names = {t.name: t.daemon for t in threading.enumerate()}
        assert names.get("zen-test-worker") is True
        w.poke()
        wait_until(lambda: len(passes) == 2, timeout=5, message="the poked pass")
    finally:
        started = time.monotonic()
        w.stop(timeout_s=5)
    assert time.monotonic() - started < 2 and not w.alive


def test_a_failing_pass_is_logged_by_name_and_the_next_one_runs(caplog: pytest.LogCaptureFixture) -> None:
    calls: list[int] = []

    def step() -> float:
        calls.append(1)
        if len(calls) == 1:
            raise RuntimeError("boom")
        return 3600.0

    w = Worker("zen-test-failing", step, log)
    with caplog.at_level(logging.ERROR, logger="zen.test.worker"):
        w.start()
        wait_until(lambda: calls, timeout=5, message="the first pass")
        w.poke()
        wait_until(lambda: len(calls) == 2, timeout=5, message="a pass after the failure")
        w.stop()
    assert any("zen-test-failing" in r.getMessage() and r.exc_info for r in caplog.records)


def test_wait_first_and_finish() -> None:
    passes: list[int] = []
    gate = threading.Event()

    def step() -> None:
        passes.append(1)
        gate.wait(5)

    w = Worker("zen-test-finish", step, log, wait_first=3600.0, finish=True).start()
    time.sleep(0.2)
    assert passes == []            # it waits before its first pass
    w.poke()
    wait_until(lambda: passes, timeout=5, message="the poked first pass")
    w.poke()                       # poked while the pass runs, then stopped: the poke still gets its pass
    stopper = threading.Thread(target=w.stop, kwargs={"timeout_s": 5})
    stopper.start()
    gate.set()
    stopper.join(6)
    assert len(passes) == 2 and not w.alive

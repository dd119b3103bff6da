"""A background worker: a named daemon thread that runs one step over and over until stopped.

The threads zen starts beside its main work (the notifier, the webhook feed, the coordinator,
the server's sweep) are all this loop: do a pass, wait until poked or until the pass's own
timeout, stop when asked. A pass that raises is logged with the worker's name and the loop goes
on (the next pass tries again); `stop()` wakes a waiting worker at once and joins it.

    w = Worker("zen-notify", step, log)   # step() -> seconds to wait before the next (None: until poked)
    w.start(); w.poke(); w.stop(timeout_s=5)
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

RETRY_S = 5.0        # a pass that raised: the wait before the next, unless poked


class Worker:
    def __init__(self, name: str, step: Callable[[], float | None], log: logging.Logger, *,
                 wait_first: float | None = None, finish: bool = False) -> None:
        """`wait_first`: wait this long (or until poked) before the first pass; None: at once.
        `finish`: a poke that came before `stop()` still gets its pass (what it was poked for
        is not dropped at the exit)."""
        self.name = name
        self.step = step
        self.log = log
        self.wait_first = wait_first
        self.finish = finish
        self.cond = threading.Condition()     # callers may guard their own wake-up state with it
        self._poked = False
        self._stopping = False
        self._thread: threading.Thread | None = None

    @property
    def stopping(self) -> bool:
        return self._stopping

    @property
    def alive(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def start(self) -> Worker:
        self._thread = threading.Thread(target=self._run, name=self.name, daemon=True)
        self._thread.start()
        return self

    def poke(self) -> None:
        """Run the next pass now (or as soon as the current one ends)."""
        with self.cond:
            self._poked = True
            self.cond.notify()

    def stop(self, timeout_s: float = 10.0) -> None:
        with self.cond:
            self._stopping = True
            self.cond.notify()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(timeout=timeout_s)

    def _wait(self, timeout: float | None) -> bool:
        """Wait until poked, stopped or `timeout` passed; False when stopping (after the last
        pass a `finish` worker owes its poke)."""
        with self.cond:
            if not self._poked and not self._stopping:
                self.cond.wait(timeout)
            poked, self._poked = self._poked, False
            if not self._stopping:
                return True
        if poked and self.finish:
            self._once()
        return False

    def _once(self) -> float | None:
        try:
            return self.step()
        except Exception:
            self.log.exception("%s: a pass failed; trying again", self.name)
            return RETRY_S

    def _run(self) -> None:
        if self.wait_first is not None and not self._wait(self.wait_first):
            return
        while not self._stopping:
            if not self._wait(self._once()):
                return

"""The coordinator's thread inside `zen supervise`: leases kept, changes and conflicts watched.

The supervisor makes one `Coordinator(home, live_jobs)` and calls four small things on it:

    start() / stop()      with the supervisor's own life
    reconcile()           once at start, after the jobs are recovered: leases of jobs that ended
                          while no supervisor ran are released
    poke(job_id)          after a turn ends: scan now rather than at the next interval
    job_ended(job_id)     the moment an end is recorded (exit, cancel, failure): its leases go

The thread wakes every `coordinator.scan_interval` (or when poked) and runs one pass of the
change scanner (zen.coord.changes) over the live jobs (those `quiet(since)` names, agents
waiting for a human with nothing new since the last pass, keep what was last read of them: an
idle fleet costs no git); every third of `lock_timeout` it renews
the live jobs' leases, and every `RECONCILE_S` it releases leases whose job has ended by a path
the supervisor did not see (a `zen cancel` with no supervisor, a crash). Errors are logged and
the next pass tries again: the coordinator never takes the supervisor down.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable

from zen.coord import leases
from zen.coord.changes import Scanner
from zen.coord.settings import Settings
from zen.errors import ZenError
from zen.store.home import Home

log = logging.getLogger(__name__)

RECONCILE_S = 30.0


def release_ended(home: Home, job_id: str, why: str) -> int:
    """Release every lease of a job whose end was just recorded; the number released. Safe to
    call from anywhere (supervisor, CLI) and more than once."""
    try:
        return len(leases.release_job(home.root, job_id, why))
    except OSError as exc:
        log.warning("could not release the leases of %s: %s", job_id, exc)
        return 0


class Coordinator:
    def __init__(self, home: Home, live_jobs: Callable[[], list[str]],
                 quiet: Callable[[float], set[str]] = lambda since: set()) -> None:
        self.home = home
        self.live_jobs = live_jobs
        self.quiet = quiet            # live jobs with nothing new since a monotonic time
        self._scanned = float("-inf")
        self.scanner = Scanner(home)
        self._wake = threading.Condition()
        self._poked: set[str] = set()
        self._stopping = False
        self._thread: threading.Thread | None = None
        self._renewed = 0.0
        self._reconciled = time.monotonic()

    def settings(self) -> Settings:
        try:
            return Settings.load(self.home)
        except ZenError as exc:        # zen.yaml mid-edit: the defaults until it reads again
            log.warning("coordinator settings unreadable (%s); using the defaults", exc)
            return Settings({})

    # -- the supervisor's calls --------------------------------------------------------------------
    def start(self) -> None:
        self._thread = threading.Thread(target=self._loop, name="zen-coord", daemon=True)
        self._thread.start()

    def stop(self, timeout_s: float = 10.0) -> None:
        with self._wake:
            self._stopping = True
            self._wake.notify()
        if self._thread is not None:
            self._thread.join(timeout=timeout_s)

    def reconcile(self) -> int:
        try:
            gone = leases.reconcile(self.home.root)
        except OSError as exc:
            log.warning("could not reconcile leases: %s", exc)
            return 0
        if gone:
            log.info("released %d leases of jobs that ended while no supervisor watched", len(gone))
        self._reconciled = time.monotonic()
        return len(gone)

    def poke(self, job_id: str | None = None) -> None:
        with self._wake:
            self._poked.add(job_id or "")
            self._wake.notify()

    def job_ended(self, job_id: str, why: str = "job ended") -> int:
        self.scanner.forget(job_id)
        return release_ended(self.home, job_id, why)

    # -- the thread ---------------------------------------------------------------------------------
    def _loop(self) -> None:
        while True:
            settings = self.settings()
            with self._wake:
                if not self._poked and not self._stopping:
                    self._wake.wait(settings.scan_interval_s)
                if self._stopping:
                    return
                poked, self._poked = self._poked, set()
            try:
                self.step(settings, "turn" if poked else "interval", poked)
            except Exception:
                log.exception("coordinator pass failed; trying again next time")

    def step(self, settings: Settings, by: str, poked: set[str] | None = None) -> None:
        now = time.monotonic()
        jobs = sorted(self.live_jobs())
        quiet = self.quiet(self._scanned) - (poked or set())
        self._scanned = now
        if settings.leases and now - self._renewed >= settings.lock_timeout_s / 3:
            leases.renew_job(self.home.root, jobs)
            self._renewed = now
        if now - self._reconciled >= RECONCILE_S:
            self.reconcile()
        self.scanner.scan(jobs, by, quiet=quiet)

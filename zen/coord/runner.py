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
import time
from collections.abc import Callable

from zen.adapters.worker import Worker
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
        self._poked: set[str] = set()
        self._worker = Worker("zen-coord", self._pass, log)
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
        self._worker.wait_first = self.settings().scan_interval_s
        self._worker.start()

    def stop(self, timeout_s: float = 10.0) -> None:
        self._worker.stop(timeout_s)

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
        with self._worker.cond:
            self._poked.add(job_id or "")
        self._worker.poke()

    def job_ended(self, job_id: str, why: str = "job ended") -> int:
        self.scanner.forget(job_id)
        return release_ended(self.home, job_id, why)

    # -- the thread ---------------------------------------------------------------------------------
    def _pass(self) -> float:
        """One pass (after a turn poked it, or the scan interval passed); the wait until the next."""
        settings = self.settings()
        with self._worker.cond:
            poked, self._poked = self._poked, set()
        self.step(settings, "turn" if poked else "interval", poked)
        return settings.scan_interval_s

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

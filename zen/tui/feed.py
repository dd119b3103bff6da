"""The watch's feed: file events under the home (watchdog) turned into row updates.

File events only say *where* something changed; the feed's own thread then reads just that
(a job's new timeline lines, its output tail, the spool, the approvals, control/), off the view's
thread, and hands an `Update` to the view. Nothing is polled: the only timer is a slow check that
the supervisor still holds its lock, since a process that dies releases a lock without touching
a file. Output (pane.log) changes at the agent's pace, so output alone re-reads a job's last line
at most every `OUTPUT_EVERY_S`; timeline changes go through at once.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from zen.adapters.watch import FileEvents
from zen.adapters.worker import Worker
from zen.store import layout
from zen.store.home import Home
from zen.tui.rows import JobView
from zen.tui.source import Header, HomeSource

log = logging.getLogger(__name__)

COALESCE_S = 0.01        # events arriving together (an append, then its fsync) make one update
OUTPUT_EVERY_S = 0.5     # a job's last output line is re-read at most this often
LIVENESS_S = 5.0         # how often the supervisor's lock is looked at
SWEEP_S = 2.0            # without file events (no watchdog, no inotify watches left)
CONTROL_FILES = (layout.KILL, layout.BREAKER, layout.SUPERVISOR_LOCK)


@dataclass
class Update:
    views: list[JobView] = field(default_factory=list)
    gone: list[str] = field(default_factory=list)        # rows to drop (a pending task became a job)
    header: Header | None = None
    full: bool = False                                   # `views` is every row there is


class Feed:
    def __init__(self, home: Home, on_update: Callable[[Update], object]) -> None:
        self.home = home
        self.source = HomeSource(home)
        self.on_update = on_update
        self._worker = Worker("zen-watch-feed", self._pass, log)
        self._lock = self._worker.cond
        self._events: set[str] = set()       # jobs whose timeline changed
        self._output: set[str] = set()       # jobs whose pane.log changed
        self._pending = False
        self._approvals = False
        self._control = False
        self._started = False
        self._last_alive = 0.0
        self._next_output: dict[str, float] = {}
        self._pending_ids: set[str] = set()
        self._watch = FileEvents(self._on_path, [
            (home.jobs, True), (home.control, False), (home.spool_new, False),
            (home.approvals_in("pending"), False)])
        self._watching = False
        self._jobs_dir = str(home.jobs) + "/"
        self._approvals_dir = str(home.approvals_in("pending")) + "/"
        self._spool_dir = str(home.spool_new) + "/"

    # -- watchdog's thread: note where, nothing more ----------------------------------------------
    def _on_path(self, path: str) -> None:
        with self._lock:
            if path.startswith(self._jobs_dir):
                rest = path[len(self._jobs_dir):].split("/")
                if len(rest) == 2 and rest[1] == layout.EVENTS:
                    self._events.add(rest[0])
                elif len(rest) == 2 and rest[1] == layout.PANE_LOG:
                    self._output.add(rest[0])
                else:
                    return
            elif path.startswith(self._approvals_dir):
                self._approvals = True
            elif path.startswith(self._spool_dir):
                self._pending = True
            elif Path(path).name in CONTROL_FILES:
                self._control = True
            else:
                return
            self._worker.poke()

    # -- life cycle -----------------------------------------------------------------------------------
    def start(self) -> None:
        self._watching = self._watch.start()
        self._worker.start()

    def stop(self) -> None:
        self._watch.stop()
        self._worker.stop(timeout_s=5)

    @property
    def stopping(self) -> bool:
        return self._worker.stopping

    @property
    def alive(self) -> bool:
        return self._worker.alive

    def poke(self) -> None:
        """Look at everything again (after an action, or when asked to)."""
        self._everything()
        self._worker.poke()

    def _everything(self) -> None:
        with self._lock:
            self._pending = self._approvals = self._control = True
            self._events.update(self.source.job_ids())

    # -- the feed's thread ------------------------------------------------------------------------------
    def _pass(self) -> float:
        """The first pass reads the whole home; each later one what the file events named (after
        a moment, so that events arriving together make one update). Returns the wait until the
        next: the liveness check, a job's output coming due, or the sweep without a file watch."""
        if not self._started:
            self._started = True
            self._last_alive = time.monotonic()
            self._full()
            return self._timeout(self._last_alive)
        time.sleep(COALESCE_S)
        now = time.monotonic()
        if now - self._last_alive >= LIVENESS_S:
            self._last_alive = now
            with self._lock:
                self._control = True
        if not self._watching:
            self._everything()     # no file events: every pass is a sweep
        self._drain(now)
        return self._timeout(self._last_alive)

    def _timeout(self, last_alive: float) -> float:
        now = time.monotonic()
        timeout = max(0.0, LIVENESS_S - (now - last_alive))
        if not self._watching:
            timeout = min(timeout, SWEEP_S)
        for j in self._output:
            timeout = min(timeout, max(0.0, self._next_output.get(j, 0.0) - now))
        return timeout

    def _full(self) -> None:
        views = self.source.all_views()
        self._pending_ids = {v.job for v in views if v.state == "pending"}
        self.on_update(Update(views=views, header=self.source.header(), full=True))

    def _drain(self, now: float) -> None:
        with self._lock:
            events, self._events = self._events, set()
            output = {j for j in self._output if self._next_output.get(j, 0.0) <= now}
            self._output -= output
            pending, approvals, control = self._pending, self._approvals, self._control
            self._pending = self._approvals = self._control = False
        update = Update()
        if approvals:
            events |= self.source.refresh_approvals()
        for job_id in sorted(events | output):
            if job_id in output:
                self._next_output[job_id] = now + OUTPUT_EVERY_S
            # a timeline change re-reads the output tail too (one small read): a turn's last line
            # is usually what the new state is about
            v = self.source.view(job_id, output=True)
            if v is not None:
                update.views.append(v)
        if pending:
            fresh = self.source.pending()
            ids = {v.job for v in fresh}
            known = {v.job for v in update.views}
            update.views += [v for v in fresh if v.job not in known]
            # a task that left spool/new without a job record (yet) leaves the view; one that
            # became a job keeps its row, which its timeline's next event replaces
            update.gone = sorted(j for j in self._pending_ids - ids - known if not self.source.store.exists(j))
            self._pending_ids = ids
        if control:
            update.header = self.source.header()
        if update.views or update.gone or update.header is not None:
            self.on_update(update)

"""The live feed: every job's timeline, read as it grows, handed to the SSE streams (issue 17).

File events (watchdog, through zen.adapters.watch.FileEvents) say which job's `events.jsonl`
grew; the hub reads only the new complete lines from the offset it has reached and appends them
to one journal in the order it read them. An SSE event's id is `<job>:<seq>`; a client that
reconnects with `Last-Event-ID` gets everything the journal holds after that id, so nothing is
lost or repeated across a disconnect. On start the journal is every existing event in (time,
job, seq) order, the same order after every restart. The journal keeps (job, seq) pairs; the
events themselves are kept for the most recent part only and re-read from the timeline when a
client resumes from further back.

Pane logs growing (`pane.log`) and the approval queue or the kill switch changing are passed on
as hints to whoever watches them (the terminal tiles, the Guardrails tab).

Watchdog's thread calls in; asyncio streams wait on an event that the hub sets (and renews) through the
server's event loop. `stop()` ends every stream at once, which is what makes `zen serve` exit
within a second of SIGTERM with clients connected.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from zen.adapters.watch import FileEvents
from zen.store import events as ev_store
from zen.store.follow import Followers
from zen.store.layout import EVENTS, KILL, PANE_LOG, Home

log = logging.getLogger(__name__)

KEEP_EVENTS = 20000          # events kept in memory (older ones are re-read from disk on resume)
SWEEP_S = 2.0                # only when file events are unavailable


def event_id(job: str, seq: int) -> str:
    return f"{job}:{seq}"


def parse_id(text: str) -> tuple[str, int] | None:
    job, sep, seq = text.strip().rpartition(":")
    if not sep or not job or not seq.isdigit() or "/" in job:
        return None
    return job, int(seq)


class Hub:
    def __init__(self, home: Home) -> None:
        self.home = home
        self._lock = threading.Lock()
        self._journal: list[tuple[str, int]] = []        # delivery order
        self._pos: dict[tuple[str, int], int] = {}       # (job, seq) -> index in the journal
        self._events: dict[int, dict[str, Any]] = {}     # index -> event (recent ones)
        self._timelines = Followers(lambda job: self.home.job(job).events)   # job -> where its read is
        self._last_seq: dict[str, int] = {}
        self._hints: dict[str, int] = {}                 # "pane:<job>", "approvals", "kill" -> counter
        self._loop: asyncio.AbstractEventLoop | None = None
        # set (and replaced by a fresh one) on the event loop whenever something changed; a
        # stream waits on the one current when it last looked. No lock: everything that touches
        # it runs on the loop, and a lock a cancelled stream could leave behind cannot stall the rest
        self._changed: asyncio.Event | None = None
        self._watch = FileEvents(self._on_path, [(home.jobs, True), (home.approvals, True),
                                                 (home.control, False), (home.spool_new, False)])
        self._watching = False
        self._sweeper: threading.Thread | None = None
        self._closed = threading.Event()            # wakes the sweeper thread
        self._stopped = False
        self.listeners: list[Callable[[str], None]] = []

    # -- life cycle --------------------------------------------------------------------------
    async def start(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._changed = asyncio.Event()
        self._watching = self._watch.start()    # first, so nothing written from now on is missed
        await asyncio.to_thread(self._initial)
        if not self._watching:
            self._sweeper = threading.Thread(target=self._sweep, name="zen-serve-sweep", daemon=True)
            self._sweeper.start()

    def stop(self) -> None:
        """End every stream now (safe from a signal handler or another thread). Only the first
        call sets the Event: a second signal landing inside that set() (which holds the Event's
        lock) must not wait for the lock its own interrupted thread holds."""
        if self._stopped:
            return
        self._stopped = True
        self._closed.set()
        loop = self._loop
        if loop is not None and not loop.is_closed():
            with contextlib.suppress(RuntimeError):
                loop.call_soon_threadsafe(self._wake_async)

    def close(self) -> None:
        """Stop, and let the file watcher wind down on its own: its thread wakes only once a
        second to see that it should stop, which must not hold up the server's exit."""
        self.stop()
        threading.Thread(target=self._watch.stop, name="zen-serve-unwatch", daemon=True).start()

    @property
    def stopping(self) -> bool:
        return self._closed.is_set()

    @property
    def watching(self) -> bool:
        return self._watching

    def _initial(self) -> None:
        found: list[tuple[str, str, int, dict[str, Any]]] = []
        for job in self._job_ids():
            with self._lock:
                events = self._timelines.read(job)
            for ev in events:
                found.append((str(ev.get("ts", "")), job, int(ev["seq"]), ev))
        found.sort(key=lambda x: (x[0], x[1], x[2]))
        with self._lock:
            for _, job, seq, ev in found:
                self._add(job, seq, ev)

    def _job_ids(self) -> list[str]:
        try:
            return sorted(p.name for p in self.home.jobs.iterdir() if p.is_dir() and not p.name.startswith("."))
        except FileNotFoundError:
            return []

    def _sweep(self) -> None:
        while not self._closed.wait(SWEEP_S):
            for job in self._job_ids():
                self.pull(job)

    # -- reading -------------------------------------------------------------------------------
    def _on_path(self, path: str) -> None:
        p = Path(path)
        try:
            rel = p.relative_to(self.home.root)
        except ValueError:
            return
        parts = rel.parts
        if parts[:1] == (self.home.jobs.name,) and len(parts) >= 2:
            job = parts[1]
            if len(parts) == 2 or parts[-1] == EVENTS:
                # a new job directory (its timeline may be written before the watch on it exists)
                self.pull(job)
            elif parts[-1] == PANE_LOG:
                self._hint(f"pane:{job}")
        elif parts[:1] == (self.home.approvals.name,):
            self._hint("approvals")
        elif parts[:1] == (self.home.control.name,) and p.name.startswith(KILL):
            self._hint("kill")
        elif parts[:1] == (self.home.spool.name,):
            self._hint("spool")

    def pull(self, job: str) -> int:
        """Read what was appended to `job`'s timeline since the last look; the new events' count."""
        if "/" in job or job.startswith("."):
            return 0
        with self._lock:
            events = self._timelines.read(job)
            added = 0
            for ev in events:
                seq = int(ev["seq"])
                if seq > self._last_seq.get(job, 0):
                    self._add(job, seq, ev)
                    added += 1
        if added:
            self._wake()
        return added

    def _add(self, job: str, seq: int, ev: dict[str, Any]) -> None:
        i = len(self._journal)
        self._journal.append((job, seq))
        self._pos[(job, seq)] = i
        self._last_seq[job] = seq
        self._events[i] = ev
        old = i - KEEP_EVENTS
        if old >= 0:
            self._events.pop(old, None)

    def _hint(self, key: str) -> None:
        with self._lock:
            self._hints[key] = self._hints.get(key, 0) + 1
        for fn in list(self.listeners):
            with contextlib.suppress(Exception):
                fn(key)
        self._wake()

    def _wake(self) -> None:
        loop = self._loop
        if loop is not None and not loop.is_closed():
            with contextlib.suppress(RuntimeError):
                loop.call_soon_threadsafe(self._wake_async)

    def _wake_async(self) -> None:
        changed = self._changed
        if changed is not None:
            self._changed = asyncio.Event()
            changed.set()

    # -- cursors ---------------------------------------------------------------------------------
    def end(self) -> int:
        with self._lock:
            return len(self._journal)

    def position_after(self, last_id: str) -> int | None:
        """Journal index just after the event `last_id`, or None when the hub does not know it."""
        parsed = parse_id(last_id)
        if parsed is None:
            return None
        with self._lock:
            i = self._pos.get(parsed)
        return None if i is None else i + 1

    def hint(self, key: str) -> int:
        with self._lock:
            return self._hints.get(key, 0)

    def read(self, start: int, limit: int = 500, job: str | None = None) -> tuple[list[dict[str, Any]], int]:
        """Events from journal index `start` on (at most `limit`, of `job` only when given), and
        the index to read from next."""
        with self._lock:
            stop = min(len(self._journal), start + limit) if job is None else len(self._journal)
            picked: list[tuple[int, str, int, dict[str, Any] | None]] = []
            i = start
            while i < stop and len(picked) < limit:
                j, seq = self._journal[i]
                if job is None or j == job:
                    picked.append((i, j, seq, self._events.get(i)))
                i += 1
        out = []
        for _, j, seq, ev in picked:
            out.append(ev if ev is not None else self._from_disk(j, seq))
        return [e for e in out if e is not None], i

    def _from_disk(self, job: str, seq: int) -> dict[str, Any] | None:
        for ev in ev_store.read_events(self.home.job(job).events):
            if int(ev.get("seq", 0)) == seq:
                return ev
        return None

    def ids_between(self, start: int, stop: int) -> list[str]:
        with self._lock:
            return [event_id(j, s) for j, s in self._journal[start:stop]]

    async def wait(self, have: int, timeout_s: float, hint_keys: tuple[str, ...] = (),
                   hint_seen: dict[str, int] | None = None) -> bool:
        """Sleep until the journal grows past `have`, a watched hint moves, the hub stops, or
        `timeout_s` passes. True when there is something new."""
        def ready() -> bool:
            if self._closed.is_set() or self.end() > have:
                return True
            return any(self.hint(k) != (hint_seen or {}).get(k, 0) for k in hint_keys)

        deadline = time.monotonic() + timeout_s
        while not ready():
            left = deadline - time.monotonic()
            if left <= 0:
                return False
            changed = self._changed
            assert changed is not None, "wait() before start()"
            # nothing can change between ready() and this wait: wakes run on this loop too; the
            # 1 s cap is for a wake lost to a loop that was closing
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(changed.wait(), timeout=min(left, 1.0))
        return not self._closed.is_set()


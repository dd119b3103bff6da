"""File events through watchdog: a wake-up hint when something lands in spool/new (SpoolWatch),
and the changes under job directories that the supervisor, its notifier and webhooks, the live
views and the server react to (FileEvents).

Events are hints only: the supervisor re-lists the directory on every wake-up and on every tick,
so a missed, merged or spurious event costs at most one tick.

One process has one watchdog observer, whatever number of users it has: the supervisor, its
notifier and its webhook sender all follow jobs/. Each user of the same directory is one more
handler of the same inotify watch (watchdog keeps one emitter per watch), not another inotify
instance and another three threads handling every event again.
"""

from __future__ import annotations

import contextlib
import logging
import os
import select
import threading
import weakref
from collections.abc import Callable
from pathlib import Path

from watchdog.events import (
    DirCreatedEvent,
    DirDeletedEvent,
    DirMovedEvent,
    FileCreatedEvent,
    FileDeletedEvent,
    FileModifiedEvent,
    FileMovedEvent,
    FileSystemEvent,
    FileSystemEventHandler,
)
from watchdog.observers import Observer
from watchdog.observers.api import BaseObserver, ObservedWatch

log = logging.getLogger(__name__)


# The events zen reacts to. Given as watchdog's event_filter, they are also the inotify mask it
# asks the kernel for: opens, reads and closes (a reader's own, the supervisor's included, of
# every timeline it reads) never reach Python. Without it, watchdog's thread handled a handful of
# events for every file zen touched and took the interpreter from the supervisor's loop: a start
# took ~70 ms instead of ~40.
SPOOL_EVENTS = [FileCreatedEvent, FileMovedEvent]   # a task lands by link, rename or create
CHANGE_EVENTS = [FileCreatedEvent, FileModifiedEvent, FileMovedEvent, FileDeletedEvent,
                 DirCreatedEvent, DirMovedEvent, DirDeletedEvent]


class _Shared:
    """The process's one observer, started on first use, and how many users each watch has."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.observer: BaseObserver | None = None
        self.users: dict[ObservedWatch, int] = {}

    def schedule(self, handler: FileSystemEventHandler, directory: Path, recursive: bool,
                 event_filter: list[type[FileSystemEvent]]) -> ObservedWatch:
        """Raises (e.g. OSError when out of inotify watches) with nothing left scheduled."""
        with self.lock:
            if self.observer is None or not self.observer.is_alive():   # first use, or in a forked child
                observer = Observer()
                observer.daemon = True
                observer.start()
                self.observer, self.users = observer, {}
            watch = self.observer.schedule(handler, str(directory), recursive=recursive, event_filter=event_filter)
            self.users[watch] = self.users.get(watch, 0) + 1
            return watch

    def unschedule(self, handler: FileSystemEventHandler, watch: ObservedWatch) -> None:
        with self.lock:
            observer = self.observer
            if observer is None or watch not in self.users:
                return
            with contextlib.suppress(Exception):
                self.users[watch] -= 1
                if self.users[watch] <= 0:
                    del self.users[watch]
                    observer.unschedule(watch)   # the last user: its inotify watch goes
                else:
                    observer.remove_handler_for_watch(handler, watch)


_SHARED = _Shared()


def _guarded(dispatch: Callable[[FileSystemEvent], None], event: FileSystemEvent) -> None:
    """One user's failing handler must not end the shared observer's thread (watchdog lets an
    exception end it), which would silence every other user of file events in the process."""
    try:
        dispatch(event)
    except Exception:
        log.exception("a file event handler failed on %s; file events go on", event.src_path)


class _Hint(FileSystemEventHandler):
    def __init__(self, wake: Callable[[], None]) -> None:
        self.wake = wake

    def on_any_event(self, event: FileSystemEvent) -> None:
        self.wake()

    def dispatch(self, event: FileSystemEvent) -> None:
        _guarded(super().dispatch, event)


def _close_all(*fds: int) -> None:
    for fd in fds:
        with contextlib.suppress(OSError):
            os.close(fd)


class SpoolWatch:
    """The supervisor's sleep between passes, and what ends it early: a task linked into the
    spool (watchdog's thread) or a signal (its handler, on the main thread).

    The wake-up is a byte on a pipe, not a threading.Event: a signal handler runs on the main
    thread between two bytecodes, maybe while that thread holds the Event's lock (in wait() or
    clear()), and Event.set() from there would wait for that lock forever. os.write takes no lock."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self._r, self._w = os.pipe2(os.O_NONBLOCK | os.O_CLOEXEC)
        # closed with the object, not at stop(): a late signal may still poke a stopped watch
        weakref.finalize(self, _close_all, self._r, self._w)
        self._handler = _Hint(self.poke)
        self._watch: ObservedWatch | None = None

    def start(self) -> None:
        try:
            self._watch = _SHARED.schedule(self._handler, self.directory, False, SPOOL_EVENTS)
        except Exception as exc:  # e.g. out of inotify watches: the tick alone still finds every task
            log.warning("cannot watch %s (%s); polling on every tick", self.directory, exc)

    def wait(self, timeout_s: float) -> bool:
        """Sleep until a hint arrives or the tick passes. True when woken by a hint."""
        ready, _, _ = select.select([self._r], [], [], max(0.0, timeout_s))
        if ready:
            with contextlib.suppress(BlockingIOError):   # every poke so far: one wake-up for all
                while os.read(self._r, 4096):
                    pass
        return bool(ready)

    def poke(self) -> None:
        """Wake wait(): safe from any thread and from a signal handler."""
        with contextlib.suppress(BlockingIOError):   # the pipe is full: a wake-up is already due
            os.write(self._w, b"x")

    def stop(self) -> None:
        if self._watch is not None:
            _SHARED.unschedule(self._handler, self._watch)
            self._watch = None


_CHANGES = frozenset({"created", "modified", "moved", "deleted"})


class _Forward(FileSystemEventHandler):
    def __init__(self, on_path: Callable[[str], object]) -> None:
        self.on_path = on_path

    def on_any_event(self, event: FileSystemEvent) -> None:
        if event.event_type not in _CHANGES:
            return  # opens, reads (our own included), closes and chmods are not changes
        path = getattr(event, "dest_path", "") or event.src_path
        self.on_path(path.decode() if isinstance(path, bytes) else str(path))

    def dispatch(self, event: FileSystemEvent) -> None:
        _guarded(super().dispatch, event)


class FileEvents:
    """File events under some directories, each handed to `on_path(path)` on watchdog's thread.

    Used by the supervisor, the live views and the notifier to react to timeline appends and
    output instead of polling.
    `start()` returns False when file events are unavailable (e.g. out of inotify watches): the
    caller then falls back to its own slow sweep. Moves report their destination.
    """

    def __init__(self, on_path: Callable[[str], object], directories: list[tuple[Path, bool]]) -> None:
        self.on_path = on_path
        self.directories = directories
        self._handler = _Forward(on_path)
        self._watches: list[ObservedWatch] = []

    def start(self) -> bool:
        try:
            for directory, recursive in self.directories:
                directory.mkdir(parents=True, exist_ok=True)
                self._watches.append(_SHARED.schedule(self._handler, directory, recursive, CHANGE_EVENTS))
        except Exception as exc:  # e.g. out of inotify watches
            log.warning("cannot watch %s (%s); falling back to a slow sweep",
                        ", ".join(str(d) for d, _ in self.directories), exc)
            self.stop()
            return False
        return True

    def stop(self) -> None:
        watches, self._watches = self._watches, []
        for watch in watches:
            _SHARED.unschedule(self._handler, watch)

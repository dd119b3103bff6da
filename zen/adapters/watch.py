"""A wake-up hint when something lands in spool/new (watchdog).

Events are hints only: the supervisor re-lists the directory on every wake-up and on every tick,
so a missed, merged or spurious event costs at most one tick.
"""

from __future__ import annotations

import contextlib
import logging
import threading
from collections.abc import Callable
from pathlib import Path

from watchdog.events import FileSystemEvent, FileSystemEventHandler
from watchdog.observers import Observer
from watchdog.observers.api import BaseObserver

log = logging.getLogger(__name__)


class _Hint(FileSystemEventHandler):
    def __init__(self, wake: threading.Event) -> None:
        self.wake = wake

    def on_any_event(self, event: FileSystemEvent) -> None:
        self.wake.set()


class SpoolWatch:
    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.wake = threading.Event()
        self._observer: BaseObserver | None = None

    def start(self) -> None:
        try:
            observer = Observer()
            observer.daemon = True
            observer.schedule(_Hint(self.wake), str(self.directory), recursive=False)
            observer.start()
        except Exception as exc:  # e.g. out of inotify watches: the tick alone still finds every task
            log.warning("cannot watch %s (%s); polling on every tick", self.directory, exc)
            return
        self._observer = observer

    def wait(self, timeout_s: float) -> bool:
        """Sleep until a hint arrives or the tick passes. True when woken by a hint."""
        woke = self.wake.wait(timeout_s)
        self.wake.clear()
        return woke

    def poke(self) -> None:
        self.wake.set()

    def stop(self) -> None:
        if self._observer is not None:
            try:
                self._observer.stop()
                self._observer.join(timeout=2)
            except Exception:
                pass
            self._observer = None


_CHANGES = frozenset({"created", "modified", "moved", "deleted"})


class _Forward(FileSystemEventHandler):
    def __init__(self, on_path: Callable[[str], object]) -> None:
        self.on_path = on_path

    def on_any_event(self, event: FileSystemEvent) -> None:
        if event.event_type not in _CHANGES:
            return  # opens, reads (our own included), closes and chmods are not changes
        path = getattr(event, "dest_path", "") or event.src_path
        self.on_path(path.decode() if isinstance(path, bytes) else str(path))


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
        self._observer: BaseObserver | None = None

    def start(self) -> bool:
        try:
            observer = Observer()
            observer.daemon = True
            for directory, recursive in self.directories:
                directory.mkdir(parents=True, exist_ok=True)
                observer.schedule(_Forward(self.on_path), str(directory), recursive=recursive)
            observer.start()
        except Exception as exc:  # e.g. out of inotify watches
            log.warning("cannot watch %s (%s); falling back to a slow sweep",
                        ", ".join(str(d) for d, _ in self.directories), exc)
            return False
        self._observer = observer
        return True

    def stop(self) -> None:
        if self._observer is not None:
            with contextlib.suppress(Exception):
                self._observer.stop()
                self._observer.join(timeout=2)
            self._observer = None

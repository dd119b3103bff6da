"""The resident guardian's journal: the audit records of concurrent calls, committed in groups.

One thread of its own appends and fsyncs the records that arrived while the last commit ran, one
append per job for all of them; each answer of the server (server.py) waits until its own records
are durable, as the hook's own answer does.
"""

from __future__ import annotations

import collections
import contextlib
import os
import threading
from typing import Any

from zen.guard.api import Context, Decision, ToolCall
from zen.guard.audit import record_many

Entry = tuple[Context | None, ToolCall, Decision, str | None, Decision | None]   # one audit record


class Journal:
    """The audit records of concurrent calls, committed in groups on a thread of their own: the
    records that arrive while one commit runs go together in the next, one append and one fsync
    per job for all of them. `submit(records, token)`; `finished` holds each token once its
    records are durable (the answer waits for that, as the hook's own answer does), and a byte on
    `wake` says so."""

    def __init__(self, wake: int) -> None:
        self.wake = wake
        self.finished: collections.deque[Any] = collections.deque()
        self._cv = threading.Condition()
        self._queue: list[tuple[list[Entry], Any]] = []
        threading.Thread(target=self._run, daemon=True, name="zen-guard-journal").start()

    def submit(self, records: list[Entry], token: Any) -> None:
        if not records:
            self._done([token])
            return
        with self._cv:
            self._queue.append((records, token))
            self._cv.notify()

    def _done(self, tokens: list[Any]) -> None:
        self.finished.extend(tokens)
        with contextlib.suppress(OSError):
            os.write(self.wake, b"x")

    def _run(self) -> None:
        while True:
            with self._cv:
                while not self._queue:
                    self._cv.wait()
                batch, self._queue = self._queue, []
            with contextlib.suppress(BaseException):   # record_many never raises; nobody may hang
                record_many([e for records, _ in batch for e in records])
            self._done([token for _, token in batch])

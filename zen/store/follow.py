"""Following an append-only JSONL file (a job's events.jsonl, a home-wide log, a transcript) from
a byte offset: the one reader every tailer uses (issue 34).

Only whole lines are taken: a torn last line (the writer is mid-line, or crashed there) stays
unread and is read again, complete, next time. A file that shrank or was replaced (another
inode) is read again from the start, and says so (`restarted`). `bytes_read` says what a read
cost, so tests can hold the parsers to O(new bytes).

`read_new` is the byte-level step (lines as bytes: the transcript parsers want them so);
`Follower` follows one file and hands back parsed records, its `offset` / `cursor` being what a
caller persists (metrics.json, the webhook outbox's cursor) to carry on after a restart;
`Followers` keeps one per key (a job id) for the readers that follow every timeline of a home
(the server's hub, the notifier).

Stdlib only, no zen import: the hook's fast path reads transcripts through this.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any, NamedTuple


class Cursor(NamedTuple):
    offset: int = 0
    inode: int = 0


class Chunk(NamedTuple):
    lines: list[bytes]          # complete lines, without their newline
    cursor: Cursor              # where the next read starts
    bytes_read: int             # bytes read from the file for this chunk
    restarted: bool             # the file shrank or was replaced: read from the start
    more: bool = False          # stopped at `limit`: call again from `cursor` for the rest


LIMIT = 8 * 1024 * 1024


def read_new(path: str | Path, cursor: Cursor = Cursor(), limit: int = LIMIT) -> Chunk:
    """The complete lines after `cursor`, up to about `limit` bytes (none when the file is
    missing). A line longer than `limit` is read whole."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return Chunk([], cursor, 0, False)
    try:
        st = os.fstat(fd)
        restarted = bool(cursor.inode and cursor.inode != st.st_ino) or st.st_size < cursor.offset
        offset = 0 if restarted else cursor.offset
        if st.st_size <= offset:
            return Chunk([], Cursor(offset, st.st_ino), 0, restarted)
        want = min(st.st_size - offset, limit)
        data = os.pread(fd, want, offset)
        end = data.rfind(b"\n")
        while end < 0 and offset + len(data) < st.st_size:  # one line longer than the limit
            data += os.pread(fd, min(st.st_size - offset - len(data), limit), offset + len(data))
            end = data.rfind(b"\n")
    finally:
        os.close(fd)
    if end < 0:
        return Chunk([], Cursor(offset, st.st_ino), len(data), restarted)
    lines = data[:end].split(b"\n")
    more = offset + len(data) < st.st_size
    return Chunk(lines, Cursor(offset + end + 1, st.st_ino), len(data), restarted, more)


def timeline_record(line: bytes) -> dict[str, Any] | None:
    """One line of a job's timeline as its event, None when it is not one."""
    try:
        ev = json.loads(line)
    except ValueError:
        return None
    # an integer seq or nothing: a line whose seq is of another kind is damage (zen doctor
    # reports it) and must not break the appenders' `seq + 1`
    return ev if isinstance(ev, dict) and type(ev.get("seq")) is int else None


def json_record(line: bytes) -> dict[str, Any] | None:
    """One line of a home-wide log (no seq) as its JSON object, None when it is not one."""
    try:
        rec = json.loads(line)
    except ValueError:
        return None
    return rec if isinstance(rec, dict) else None


Parse = Callable[[bytes], "dict[str, Any] | None"]


class Follower:
    """One append-only JSONL file followed from `offset`: each `read()` returns the records
    appended since the last one (a garbled line is skipped, a torn last line waits)."""

    def __init__(self, path: str | Path, offset: int = 0, inode: int = 0,
                 parse: Parse = timeline_record) -> None:
        self.path = path
        self.cursor = Cursor(max(0, int(offset)), inode)
        self.parse = parse
        self.restarted = False      # the last read found the file shrunk or replaced

    @property
    def offset(self) -> int:
        return self.cursor.offset

    def read(self) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = []
        self.restarted = False
        while True:
            chunk = read_new(self.path, self.cursor)
            self.restarted = self.restarted or chunk.restarted
            self.cursor = chunk.cursor
            for line in chunk.lines:
                if line and (rec := self.parse(line)) is not None:
                    out.append(rec)
            if not chunk.more:
                return out


class Followers:
    """A Follower per key (a job id), made on first use from `path_of(key)`."""

    def __init__(self, path_of: Callable[[str], str | Path], parse: Parse = timeline_record) -> None:
        self.path_of = path_of
        self.parse = parse
        self._by_key: dict[str, Follower] = {}

    def __contains__(self, key: str) -> bool:
        return key in self._by_key

    def get(self, key: str, offset: int = 0) -> Follower:
        f = self._by_key.get(key)
        if f is None:
            f = self._by_key[key] = Follower(self.path_of(key), offset, parse=self.parse)
        return f

    def read(self, key: str) -> list[dict[str, Any]]:
        return self.get(key).read()

    def offsets(self) -> dict[str, int]:
        return {k: f.offset for k, f in self._by_key.items()}


__all__ = ["LIMIT", "Chunk", "Cursor", "Follower", "Followers", "json_record", "read_new", "timeline_record"]

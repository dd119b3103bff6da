"""Reading what an append-only JSONL file gained since a byte offset.

Only whole lines are taken: a torn last line (the writer is mid-line, or crashed there) stays
unread and is read again, complete, next time. A file that shrank or was replaced (another
inode) is read again from the start. `bytes_read` says what the read cost, so tests can hold
the parsers to O(new bytes).

Stdlib only: the hook's fast path reads transcripts through this.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import NamedTuple


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

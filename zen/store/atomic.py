"""Crash-safe file primitives: publish by rename, append one fsynced line, flock.

Nothing in zen rewrites a file in place. A replaced file is written to a temp file in the same
directory, fsynced, then renamed over the old one; the directory is fsynced when the rename itself
must survive a crash.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
from collections.abc import Iterator
from pathlib import Path


def fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def write_temp(directory: Path, data: bytes, prefix: str = ".tmp-") -> Path:
    """Write `data` to a new fsynced temp file in `directory` and return its path."""
    # lean hook path: tempfile imports shutil, random, bz2 and lzma (~4 ms of every guard hook
    # call, which appends through this module but never publishes a file)
    import tempfile

    fd, name = tempfile.mkstemp(dir=directory, prefix=prefix)
    try:
        os.fchmod(fd, 0o644)  # mkstemp's 0600 would make every published file private
        write_all(fd, data)
        os.fsync(fd)
    except BaseException:
        os.close(fd)
        with contextlib.suppress(OSError):
            os.unlink(name)
        raise
    os.close(fd)
    return Path(name)


def atomic_write(path: Path, data: bytes | str, *, durable: bool = True, mode: int | None = None) -> None:
    """Replace `path` with `data` atomically: readers see the old or the new file, never a mix."""
    if isinstance(data, str):
        data = data.encode()
    tmp = write_temp(path.parent, data, prefix=f".{path.name}.")
    if mode is not None:
        os.chmod(tmp, mode)
    try:
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    if durable:
        fsync_dir(path.parent)


def create_exclusive(path: Path, data: bytes | str) -> bool:
    """Publish `data` at `path` only if nothing is there yet (temp + fsync + link). False if taken."""
    if isinstance(data, str):
        data = data.encode()
    tmp = write_temp(path.parent, data, prefix=f".{path.name}.")
    try:
        os.link(tmp, path)
    except FileExistsError:
        return False
    finally:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
    fsync_dir(path.parent)
    return True


def write_all(fd: int, data: bytes) -> None:
    """Write all of `data` (os.write may write less than asked)."""
    view = memoryview(data)
    while view:
        n = os.write(fd, view)
        view = view[n:]


def append_line(fd: int, line: bytes) -> None:
    """One write of one whole line, then fsync. The caller holds the file's lock."""
    write_all(fd, line)
    os.fsync(fd)


@contextlib.contextmanager
def flocked(path: Path, *, exclusive: bool = True, blocking: bool = True) -> Iterator[int]:
    """Hold a kernel lock on `path` (created if missing) for the duration of the block.

    Raises BlockingIOError when `blocking` is False and someone else holds it.
    """
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        op = fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH
        if not blocking:
            op |= fcntl.LOCK_NB
        fcntl.flock(fd, op)
        yield fd
    finally:
        os.close(fd)


def is_locked(path: Path) -> bool:
    """True when another process holds an exclusive flock on `path`."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except FileNotFoundError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(fd)
    return False

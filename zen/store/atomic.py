"""Crash-safe file primitives: publish by rename, append one fsynced line, flock.

Every file made here is 0600 unless the caller asks for another mode: zen's records are the
user's alone (L16). Nothing in zen rewrites a file in place. A replaced file is written to a temp file in the same
directory, fsynced, then renamed over the old one; the directory is fsynced when the rename itself
must survive a crash.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import time
from collections.abc import Iterator
from pathlib import Path


def fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def write_temp(directory: Path, data: bytes, prefix: str = ".tmp-", mode: int = 0o600, *,
               sync: bool = True) -> Path:
    """Write `data` to a new temp file in `directory` (with `mode` from the start), fsynced unless
    `sync` is False, and return its path."""
    # lean hook path: tempfile imports shutil, random, bz2 and lzma (~4 ms of every guard hook
    # call, which appends through this module but never publishes a file)
    import tempfile

    try:
        fd, name = tempfile.mkstemp(dir=directory, prefix=prefix)
    except OSError as exc:
        raise named(exc, directory) from None
    try:
        if mode != 0o600:
            os.fchmod(fd, mode)  # mkstemp's 0600 is what zen's records want (L16); others ask
        write_all(fd, data)
        if sync:
            os.fsync(fd)
    except BaseException as exc:
        os.close(fd)
        with contextlib.suppress(OSError):
            os.unlink(name)  # a full disk leaves no half-written temp file behind
        if isinstance(exc, OSError):
            raise named(exc, Path(name)) from None
        raise
    os.close(fd)
    return Path(name)


def named(exc: OSError, path: Path | str) -> OSError:
    """`exc` naming `path` (os.write and os.fsync name no file), so the one sentence a user
    gets for a full or failing disk says where."""
    if exc.filename is not None:
        return exc
    return OSError(exc.errno, exc.strerror, str(path))


def atomic_write(path: Path, data: bytes | str, *, durable: bool = True, mode: int | None = None,
                 cache: bool = False) -> None:
    """Replace `path` with `data` atomically: readers see the old or the new file, never a mix.
    `durable`: the rename itself survives a crash of the machine (the directory is fsynced).
    `cache`: a file zen rebuilds from its sources when it is missing or unreadable (state.json
    from the timeline): no fsync at all, since a power loss can only cost a rebuild."""
    if isinstance(data, str):
        data = data.encode()
    tmp = write_temp(path.parent, data, prefix=f".{path.name}.", sync=not cache)
    if mode is not None:
        os.chmod(tmp, mode)
    try:
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    if durable and not cache:
        fsync_dir(path.parent)


def create_exclusive(path: Path, data: bytes | str, *, mode: int = 0o600) -> bool:
    """Publish `data` at `path` only if nothing is there yet (temp + fsync + link). False if taken:
    two processes racing to create a secret agree on the first one's."""
    if isinstance(data, str):
        data = data.encode()
    tmp = write_temp(path.parent, data, prefix=f".{path.name}.", mode=mode)
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


def append_whole(path: Path, data: bytes, *, durable: bool = True, undo: bool = True) -> None:
    """Append `data` (whole lines) with one write, fsynced when `durable`. When the write fails
    (a full or failing disk can take part of it), the file is cut back to its old end when
    `undo` is set, so no torn line stays; only a caller holding the file's lock may set it (a
    concurrent appender's line could be cut otherwise)."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    except OSError as exc:
        raise named(exc, path) from None
    try:
        start = os.fstat(fd).st_size if undo else 0
        try:
            write_all(fd, data)
            if durable:
                os.fsync(fd)
        except OSError as exc:
            if undo:
                with contextlib.suppress(OSError):
                    os.ftruncate(fd, start)
            raise named(exc, path) from None
    finally:
        os.close(fd)


@contextlib.contextmanager
def flocked(path: Path, *, exclusive: bool = True, blocking: bool = True) -> Iterator[int]:
    """Hold a kernel lock on `path` (created if missing) for the duration of the block.

    Raises BlockingIOError when `blocking` is False and someone else holds it.
    """
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        op = fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH
        if not blocking:
            op |= fcntl.LOCK_NB
        fcntl.flock(fd, op)
        yield fd
    finally:
        os.close(fd)


def lock_within(path: Path, timeout_s: float, poll_s: float = 0.02) -> int:
    """An exclusive kernel lock on `path`, waited for at most `timeout_s`: the open descriptor
    that holds it (close it to let go). Raises TimeoutError when someone else held it all along."""
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return fd
        except BlockingIOError:
            if time.monotonic() >= deadline:
                os.close(fd)
                raise TimeoutError(f"{path} is held by another process") from None
            time.sleep(poll_s)


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

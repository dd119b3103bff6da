"""The hook's thin client of the resident guardian (`zen guard serve`, zen/guard/resident/server.py).

    ask(home, argv, data) -> (exit code, stdout, reason) | None

Sends the hook's arguments, its stdin (unparsed), the working directory and the environment to
the server of `home` and returns its verdict. None whenever there is no verdict to trust: no
socket, a socket that is not ours, no server behind it, an answer later than `wait`, a malformed
answer, or a server that declines (it runs other code); the hook then decides in-process, under
the same deadline, so a missing or slow server costs time and never fails open.

Lean on purpose: this is the hook's whole start-up when a server runs (os, _socket, time, and the
layout's names); json, the parser and the rules load only in the server, or in the fallback.
"""

from __future__ import annotations

import _socket  # the C module: `socket` would load enum and more on the hook's lean path
import fcntl
import os
import stat
import struct
import sys
import time

from zen.guard.resident import wire
from zen.store import layout

WAIT_S = 1.0          # the server's whole answer within this by default, else in-process
MAX_ANSWER = 1024 * 1024
_UNIX_PATH_MAX = 107


def socket_path(home: str) -> str:
    return os.path.join(home, layout.CONTROL, layout.GUARD_SOCKET)


def _address(path: str) -> tuple[str, int | None]:
    """An address connect() takes: a path too long for AF_UNIX goes through /proc/self/fd."""
    if len(os.fsencode(path)) <= _UNIX_PATH_MAX:
        return path, None
    fd = os.open(os.path.dirname(path), os.O_RDONLY | os.O_DIRECTORY)
    return f"/proc/self/fd/{fd}/{os.path.basename(path)}", fd


def ask(home: str, argv: list[str], data: bytes, wait: float = WAIT_S) -> tuple[int, str, str] | None:
    path = socket_path(home)
    try:
        st = os.stat(path)
    except OSError:
        return None
    if not stat.S_ISSOCK(st.st_mode) or st.st_uid != os.getuid():
        return None
    request = wire.pack(b"\0".join(os.fsencode(a) for a in argv), os.fsencode(os.getcwd()),
                        wire.env_bytes(dict(os.environb)), os.fsencode(_package_dir()), data)
    fd: int | None = None
    sock = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
    try:
        address, fd = _address(path)
        give_up = time.monotonic() + wait
        sock.settimeout(wait)
        sock.connect(address)
        if not _is_the_resident_guardian(sock, home):
            return None      # a socket someone else bound there: decide in-process (finding H7)
        sock.sendall(request)
        sock.shutdown(_socket.SHUT_WR)
        chunks: list[bytes] = []
        size = 0
        while True:
            left = give_up - time.monotonic()
            if left <= 0:
                return None
            sock.settimeout(left)
            chunk = sock.recv(65536)
            if not chunk:
                break
            size += len(chunk)
            if size > MAX_ANSWER:
                return None
            chunks.append(chunk)
    except OSError:
        return None
    finally:
        sock.close()
        if fd is not None:
            os.close(fd)
    fields = wire.unpack(b"".join(chunks), 3)
    if fields is None:
        return None
    code, out, reason = fields
    if code == wire.ALLOW:
        return 0, out.decode("utf-8", "replace"), ""
    if code == wire.BLOCK:
        return 2, "", reason.decode("utf-8", "replace") or "blocked by the resident guardian"
    return None


def _is_the_resident_guardian(sock: _socket.socket, home: str) -> bool:
    """Whether the process behind `sock` is the home's resident guardian: the one holding the
    record lock on its guard lock file (control/guard.lock, taken by `zen guard serve` for as long
    as it runs; fcntl's F_GETLK names the holder). A socket an agent bound and renamed over
    control/guard.sock, answering "allow" to everything, holds no such lock: its answers are never
    read (the hook decides in this process instead).

    Inside zen's wall (a Gemini CLI job's bubblewrap: its own pid namespace), the guardian runs
    outside, so the kernel names neither the peer nor the lock's holder (both pid 0: a process
    not in this namespace). There control/ is zen's read-only bind of control/guard-wall/, which
    holds only the socket and the lock, so no one inside could have put either there; and a
    server started inside would show its pid. Both 0, and the lock held: the guardian outside.
    Outside a wall, every process an agent can start is visible (a pid namespace it makes is a
    child of this one), so 0 never passes there."""
    try:
        cred = sock.getsockopt(_socket.SOL_SOCKET, _socket.SO_PEERCRED, 12)
        pid = int.from_bytes(cred[0:4], sys.byteorder, signed=True)
        if int.from_bytes(cred[4:8], sys.byteorder) != os.getuid() or pid < 0:
            return False
        fd = os.open(os.path.join(home, layout.CONTROL, layout.GUARD_SERVER_LOCK), os.O_RDONLY)
        try:
            probe = struct.pack(_FLOCK, fcntl.F_WRLCK, os.SEEK_SET, 0, 0, 0)
            got = fcntl.fcntl(fd, fcntl.F_GETLK, probe)
        finally:
            os.close(fd)
        l_type, _whence, _start, _len, holder = struct.unpack(_FLOCK, got)
    except (OSError, ValueError, struct.error):
        return False
    return bool(l_type != fcntl.F_UNLCK and holder == pid)


_FLOCK = "hhqqi4x"   # struct flock on Linux: l_type, l_whence, l_start, l_len, l_pid


def _package_dir() -> str:
    """The zen package this client runs (a server of other code declines)."""
    return os.path.dirname(os.path.abspath(sys.modules["zen"].__file__ or ""))

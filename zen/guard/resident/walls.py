"""The resident guardian as zen's walls reach it: control/guard-wall/ holds hard links of its
socket and its lock and nothing else, the folder zen binds read-only into each wall it builds
(zen/agents/wall.py). Each link is put by rename, so a wall started before the server sees the
new socket through the folder."""

from __future__ import annotations

import contextlib
import os

from zen.store import layout


def publish(control: str) -> None:
    """Link control/guard.lock and control/guard.sock into control/guard-wall/. Raises OSError."""
    folder = os.path.join(control, layout.GUARD_WALL_DIR)
    os.makedirs(folder, mode=0o700, exist_ok=True)
    for name in (layout.GUARD_SERVER_LOCK, layout.GUARD_SOCKET):
        tmp = os.path.join(folder, f".{name}.{os.getpid()}")
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        os.link(os.path.join(control, name), tmp)
        os.rename(tmp, os.path.join(folder, name))


def withdraw(control: str, ino: int | None) -> None:
    """Remove the socket's names (control/ and the walls' folder) that are still this server's."""
    for path in (os.path.join(control, layout.GUARD_SOCKET),
                 os.path.join(control, layout.GUARD_WALL_DIR, layout.GUARD_SOCKET)):
        with contextlib.suppress(OSError):
            if os.stat(path).st_ino == ino:
                os.unlink(path)

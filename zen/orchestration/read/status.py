"""Is a supervisor running, is the kill switch engaged: answers read straight from control/."""

from __future__ import annotations

from typing import Any

from zen.store.atomic import is_locked
from zen.store.layout import Home


def supervisor_pid(home: Home) -> int | None:
    """The pid of the running supervisor, or None. The held flock is the liveness signal."""
    lock = home.supervisor_lock
    if not is_locked(lock):
        return None
    try:
        return int(lock.read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return -1


def supervisor_status(home: Home) -> dict[str, Any]:
    pid = supervisor_pid(home)
    killed = home.kill_file.exists()
    banner = []
    if killed:
        try:
            detail = home.kill_file.read_text().strip().replace("\n", "; ")
        except OSError:
            detail = ""
        banner.append(f"KILL SWITCH ENGAGED: every domain is observe-only ({detail}); zen kill-switch --release lifts it")
    summary = f"supervisor: running (pid {pid})" if pid else "supervisor: not running (zen supervise --detach)"
    return {"running": pid is not None, "pid": pid, "kill_switch": killed, "summary": summary, "banner": banner}

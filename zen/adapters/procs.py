"""The process table (/proc): stop and continue the processes an agent's pane runs.

Why not SIGSTOP to the pane's process group: tmux continues a pane's own process as soon as it
stops (its SIGCHLD handler sends SIGCONT unless the stop came from SIGTTIN/SIGTTOU), so a
paused agent would run on at once. The pane's process is zen's small exit wrapper, which only
waits; stopping every process *below* it leaves tmux nothing to undo, and catches the agent's
children that moved to groups or sessions of their own (tool commands, hook runners).
"""

from __future__ import annotations

import contextlib
import os
import signal
from pathlib import Path

PROC = Path("/proc")


def _ppid_of(stat: str) -> int | None:
    # /proc/<pid>/stat: "pid (comm) state ppid ..."; comm may hold spaces and parentheses
    try:
        return int(stat.rsplit(")", 1)[1].split()[1])
    except (IndexError, ValueError):
        return None


def ancestors(pid: int) -> list[int]:
    """`pid`'s parent, its parent's parent, ... up to the first process, from /proc (what the
    kernel says: a process cannot choose its ancestors)."""
    out: list[int] = []
    while True:
        try:
            ppid = _ppid_of((PROC / str(pid) / "stat").read_text())
        except OSError:
            return out
        if ppid is None or ppid <= 0 or ppid in out or ppid == pid:
            return out
        out.append(ppid)
        pid = ppid


def children_map() -> dict[int, list[int]]:
    """Parent pid -> child pids, from one pass over /proc."""
    out: dict[int, list[int]] = {}
    for entry in os.scandir(PROC):
        if not entry.name.isdigit():
            continue
        try:
            stat = (PROC / entry.name / "stat").read_text()
        except OSError:
            continue  # it ended while we looked
        ppid = _ppid_of(stat)
        if ppid is not None:
            out.setdefault(ppid, []).append(int(entry.name))
    return out


def descendants(pid: int) -> list[int]:
    """Every process below `pid`, parents before their children."""
    return descendants_in(children_map(), pid)


def _ticks(pid: int) -> int:
    """CPU time `pid` used so far (user + system), in clock ticks; 0 once it is gone."""
    try:
        fields = (PROC / str(pid) / "stat").read_text().rsplit(")", 1)[1].split()
        return int(fields[11]) + int(fields[12])    # utime, stime (stat fields 14 and 15)
    except (OSError, IndexError, ValueError):
        return 0


def busy_below(pid: int) -> dict[int, int]:
    """CPU ticks used so far by each process the agent started: everything below `pid` (the
    pane's wrapper) except the agent itself, its direct child (an agent's own idle TUI is not
    work; a test run it started is)."""
    kids = children_map()
    agents = set(kids.get(pid, []))
    return {p: _ticks(p) for p in descendants_in(kids, pid) if p not in agents}


def descendants_in(kids: dict[int, list[int]], pid: int) -> list[int]:
    out: list[int] = []
    todo = list(kids.get(pid, []))
    while todo:
        p = todo.pop(0)
        out.append(p)
        todo.extend(kids.get(p, []))
    return out


def state(pid: int) -> str | None:
    """The kernel's state letter of `pid` (T = stopped), or None when it is gone."""
    try:
        return (PROC / str(pid) / "stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return None


def _send(pids: list[int], sig: int) -> int:
    sent = 0
    for p in pids:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(p, sig)
            sent += 1
    return sent


def stop_below(pid: int) -> list[int]:
    """SIGSTOP every process below `pid`; two passes, so a child forked meanwhile stops too.
    Returns the pids stopped (empty when there was nothing below it)."""
    first = descendants(pid)
    _send(first, signal.SIGSTOP)
    late = [p for p in descendants(pid) if p not in first]
    _send(late, signal.SIGSTOP)
    return first + late


def continue_below(pid: int) -> list[int]:
    """SIGCONT every process below `pid` (and its own group, for good measure)."""
    pids = descendants(pid)
    _send(pids, signal.SIGCONT)
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGCONT)
    return pids


__all__ = ["busy_below", "continue_below", "descendants", "state", "stop_below"]

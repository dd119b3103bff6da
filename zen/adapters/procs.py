"""The process table (/proc): stop and continue the processes an agent's pane runs; what they
use and what they wait on.

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
import time
from dataclasses import dataclass
from pathlib import Path

PROC = Path("/proc")
# a pass over /proc for busy_below / waits serves every look of the same moment (the CPU sample
# of a silence and its waits, the jobs whose silence ends together)
RECENT_S = 0.05
_recent: tuple[float, dict[int, list[int]]] | None = None


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


def _read(path: str) -> bytes:
    fd = os.open(path, os.O_RDONLY)
    try:
        return os.read(fd, 4096)
    finally:
        os.close(fd)


def children_map() -> dict[int, list[int]]:
    """Parent pid -> child pids, from one pass over /proc (raw reads: a fleet's supervisor makes
    this pass at every silence's end)."""
    out: dict[int, list[int]] = {}
    for name in os.listdir(PROC):
        if not name.isdigit():
            continue
        try:
            stat = _read(f"/proc/{name}/stat")
            ppid = int(stat.rsplit(b")", 1)[1].split(None, 2)[1])
        except (OSError, IndexError, ValueError):
            continue  # it ended while we looked
        out.setdefault(ppid, []).append(int(name))
    return out


def recent_children() -> dict[int, list[int]]:
    """children_map, or the one taken less than RECENT_S ago (for looks, never for signals)."""
    global _recent
    now = time.monotonic()
    if _recent is None or now - _recent[0] >= RECENT_S:
        _recent = (now, children_map())
    return _recent[1]


def descendants(pid: int) -> list[int]:
    """Every process below `pid`, parents before their children."""
    return descendants_in(children_map(), pid)


def _ticks(pid: int) -> int:
    """CPU time `pid` used so far (user + system), in clock ticks; 0 once it is gone."""
    try:
        fields = _read(f"/proc/{pid}/stat").rsplit(b")", 1)[1].split()
        return int(fields[11]) + int(fields[12])    # utime, stime (stat fields 14 and 15)
    except (OSError, IndexError, ValueError):
        return 0


def busy_below(pid: int) -> dict[int, int]:
    """CPU ticks used so far by each process the agent started: everything below `pid` (the
    pane's wrapper) except the agent itself, its direct child (an agent's own idle TUI is not
    work; a test run it started is)."""
    kids = recent_children()
    agents = set(kids.get(pid, []))
    return {p: _ticks(p) for p in descendants_in(kids, pid) if p not in agents}


# What a thread blocked in the kernel shows in /proc/<pid>/task/<tid>/wchan (the function it sleeps
# in). Checked on Linux 6.18: `cat` or sh's `read` on a pane -> wait_woken; `sleep` ->
# hrtimer_nanosleep; a shell waiting for its child -> do_wait; a pipe -> anon_pipe_read; the
# Python REPL (readline) -> poll_schedule_timeout.
TTY_READS = frozenset({"n_tty_read", "tty_read"})   # reading a terminal (as older kernels name it)
WOKEN = "wait_woken"       # where n_tty_read waits on recent kernels, but socket reads wait there too
POLLS = ("select", "poll")  # select / poll / epoll: on which files /proc does not say (the terminal?)
READING, ELSEWHERE, UNKNOWN = "reading", "elsewhere", "unknown"


@dataclass(frozen=True)
class Waits:
    """What the processes of a pane wait on, from one look at /proc (`waits`).

    `reading`: True when one of them is blocked reading a terminal (the agent waits for input);
    False when none is and /proc told what each does (it runs, or sleeps on something else: a
    timer, a child, a pipe, a socket); None when /proc cannot tell (a thread in select/poll/epoll,
    a kernel that shows no wait channel, a stopped process): then only silence can say.
    `seen` is what the look saw of each thread, (pid, tid, state, wait channel), for `unchanged`.
    """

    pid: int
    reading: bool | None
    seen: tuple[tuple[int, int, str, str], ...] = ()

    def unchanged(self) -> bool:
        """Whether the same threads are still there, each in the state and wait it was: a few
        small reads, no pass over /proc (a process that starts another changes its own wait)."""
        pids = {p for p, *_ in self.seen}
        # a process the look did not see (started since, or missed by the children listing it
        # used) is a change too: else a pane whose reader was missed stays asleep for ever
        return bool(self.seen) and _threads(sorted(pids)) == self.seen and _children_of(pids) <= pids


def _children_of(pids: set[int]) -> set[int]:
    """The children of `pids` now (each thread's /proc children list: a few small reads)."""
    out: set[int] = set()
    for pid in pids:
        try:
            tids = os.listdir(PROC / str(pid) / "task")
        except OSError:
            continue
        for tid in tids:
            try:
                out.update(int(c) for c in _read(f"/proc/{pid}/task/{tid}/children").split())
            except (OSError, ValueError):
                continue
    return out


def _threads(pids: list[int]) -> tuple[tuple[int, int, str, str], ...]:
    out: list[tuple[int, int, str, str]] = []
    for pid in pids:
        try:
            tids = sorted(int(t) for t in os.listdir(PROC / str(pid) / "task"))
        except (OSError, ValueError):
            continue  # it ended while we looked
        for tid in tids:
            task = f"/proc/{pid}/task/{tid}"
            try:
                st = _read(f"{task}/stat").rsplit(b")", 1)[1].split(None, 1)[0].decode()
                wchan = _read(f"{task}/wchan").decode(errors="replace").strip()
            except (OSError, IndexError):
                continue
            out.append((pid, tid, st, wchan))
    return tuple(out)


def _is_tty(pid: int, fd: int) -> bool:
    try:
        link = os.readlink(PROC / str(pid) / "fd" / str(fd))
    except OSError:
        return False
    return link.startswith(("/dev/pts/", "/dev/tty")) or link == "/dev/console"


def _kind(pid: int, tid: int, st: str, wchan: str) -> str:
    """READING, ELSEWHERE or UNKNOWN for one thread."""
    if st == "R":
        return ELSEWHERE                      # running: not waiting for anyone
    if st in ("T", "t") or not wchan or wchan == "0":
        return UNKNOWN                        # stopped (job control?), or the kernel does not say
    if wchan in TTY_READS:
        return READING
    if wchan == WOKEN:
        # a terminal's read or a socket's: the file the blocked call is on tells (its first
        # argument is the descriptor for read, readv, recv...); /proc/<pid>/syscall needs ptrace
        # rights the kernel may refuse (Yama), and then only silence can say
        try:
            fields = (PROC / str(pid) / "task" / str(tid) / "syscall").read_text().split()
            fd = int(fields[1], 16)
        except (OSError, IndexError, ValueError):
            return UNKNOWN
        return READING if _is_tty(pid, fd) else ELSEWHERE
    if any(word in wchan for word in POLLS):
        return UNKNOWN
    return ELSEWHERE


def waits(pid: int) -> Waits:
    """What `pid` (a pane's process) and every process below it wait on (see Waits). Every
    process counts, not only the terminal's foreground group: one that left the session
    (setsid) still reads the pane through its stdin, and a shell without job control keeps its
    background jobs in the foreground group anyway."""
    seen = _threads([pid, *descendants_in(recent_children(), pid)])
    kinds = {_kind(p, t, st, w) for p, t, st, w in seen if st not in ("Z", "X")}
    reading = True if READING in kinds else None if UNKNOWN in kinds or not kinds else False
    return Waits(pid, reading, seen)


def descendants_in(kids: dict[int, list[int]], pid: int) -> list[int]:
    out: list[int] = []
    todo = list(kids.get(pid, []))
    while todo:
        p = todo.pop(0)
        out.append(p)
        todo.extend(kids.get(p, []))
    return out


def _stat_fields(pid: int) -> list[str] | None:
    """The fields of /proc/<pid>/stat after "pid (comm)" (state first), or None when it is gone."""
    try:
        fields = (PROC / str(pid) / "stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None
    return fields or None


def state(pid: int) -> str | None:
    """The kernel's state letter of `pid` (T = stopped), or None when it is gone."""
    fields = _stat_fields(pid)
    return fields[0] if fields else None


def exit_status(pid: int) -> tuple[int | None, int | None] | None:
    """(exit code, signal) of `pid` when it has ended but is not reaped yet (a zombie), else None.

    The last field of /proc/<pid>/stat is the status waitpid will report (Linux >= 3.5). tmux
    3.3a can leave a dead pane's process unreaped, its `#{pane_dead_status}` blank, and an
    agent killed by a signal leaves no status file from zen's exit wrapper: the kernel still
    knows how it ended. A zombie's pid is not reused until it is reaped, so the answer is its own.
    """
    fields = _stat_fields(pid)
    if fields is None or fields[0] != "Z":
        return None
    try:
        status = int(fields[-1])
    except ValueError:
        return None
    if os.WIFSIGNALED(status):
        return None, os.WTERMSIG(status)
    if os.WIFEXITED(status):
        return os.WEXITSTATUS(status), None
    return None


def _send(pids: list[int], sig: int) -> int:
    sent = 0
    for p in pids:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(p, sig)
            sent += 1
    return sent


def stop_below(pid: int, settle: float = 2.0) -> list[int]:
    """SIGSTOP every process below `pid`; two passes, so a child forked meanwhile stops too, then
    up to `settle` seconds until each shows stopped. Returns the pids stopped (empty when there
    was nothing below it)."""
    first = descendants(pid)
    _send(first, signal.SIGSTOP)
    late = [p for p in descendants(pid) if p not in first]
    _send(late, signal.SIGSTOP)
    _settle(first + late, settle)
    return first + late


def _settle(pids: list[int], within: float) -> None:
    """Until each of `pids` is stopped or gone (at most `within` seconds): a signal is only sent
    when kill() returns, a process stops when it next runs, so a pause reported is a pause made."""
    deadline = time.monotonic() + within
    while pids:
        pids = [p for p in pids if state(p) not in (None, "T", "t", "Z", "X")]
        if not pids or time.monotonic() > deadline:
            return
        time.sleep(0.002)


def continue_below(pid: int) -> list[int]:
    """SIGCONT every process below `pid` (and its own group, for good measure)."""
    pids = descendants(pid)
    _send(pids, signal.SIGCONT)
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGCONT)
    return pids


__all__ = ["Waits", "busy_below", "continue_below", "descendants", "state", "stop_below", "waits"]


def with_env(name: str, values: set[str]) -> dict[int, str]:
    """Every process of this user whose environment sets `name` to one of `values`: pid -> value.
    A job's processes all carry its ZEN_JOB_ID (the pane exports it, children inherit it), so this
    finds those that left the pane's tree (`setsid`, `nohup ... &`, a daemon of its own)."""
    me, found = os.getpid(), {}
    prefix = name.encode() + b"="
    wanted = {v.encode() for v in values}
    for entry in os.scandir(PROC):
        if not entry.name.isdigit() or int(entry.name) == me:
            continue
        try:
            if entry.stat().st_uid != os.getuid():
                continue
            with open(f"/proc/{entry.name}/environ", "rb") as f:
                env = f.read()
        except OSError:
            continue
        for item in env.split(b"\0"):
            if item.startswith(prefix) and item[len(prefix):] in wanted:
                found[int(entry.name)] = item[len(prefix):].decode()
                break
    return found


def sweep(name: str, values: set[str]) -> list[int]:
    """SIGKILL every process with_env(name, values) finds; the pids signalled."""
    pids = sorted(with_env(name, values))
    _send(pids, signal.SIGKILL)
    return pids

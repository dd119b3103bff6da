"""`zen watch --plain` stops at once: on Ctrl-C, on SIGTERM (with the same clean-up, so a terminal
gets its cursor back), and when what reads its output goes away (`zen watch --plain | head`).

It used to take 0.3-0.7 s after Ctrl-C (the interpreter's last garbage collection over every module
the view imports), SIGTERM killed it without restoring the terminal, and a reader that left was
noticed only at the next change of a job, or never.

A stop is judged by two figures: the CPU time the process spends from the signal to its end
(work done on the way out: the old final collection cost 0.11-0.17 s of it, a stop now 0.02-0.04
s, loaded machine or not), and the wall time (what waits: a sleep, a join, a tick; generous,
since a loaded 2-core machine stretches a 30 ms stop to 0.3 s)."""

from __future__ import annotations

import os
import pty
import select
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from tests.helpers import REPO_ROOT, wait_until
from zen.core.ids import iso, make_job_id, utcnow
from zen.core.model import Task
from zen.store.home import Home
from zen.store.jobs import JobStore
from zen.tui import feed as feed_mod
from zen.tui.feed import Feed, Update

STOP_CPU_S = 0.075
STOP_WALL_S = 1.0
CLOCK_TICK_S = 1 / os.sysconf("SC_CLK_TCK")
SHOW_CURSOR = b"\x1b[?25h"


def _jobs(home: Path, n: int = 3) -> None:
    store = JobStore(Home(home))
    for i in range(n):
        task = Task(id=make_job_id(f"stop-{i}"), name=f"stop-{i}", prompt="wait", lane="app", agent="sim",
                    created_at=iso(utcnow()))
        store.create(task)
        store.append(task.id, "agent.spawned", session=f"zen-{task.id}", target="%1")
        store.append(task.id, "turn.waiting", reason="idle")


def _watch(home: Path, stdout: int, stderr: int, stdin: int | None = None,
           env: dict[str, str] | None = None) -> subprocess.Popen[bytes]:
    return subprocess.Popen([sys.executable, "-m", "zen", "watch", "--plain"], cwd=REPO_ROOT, stdin=stdin,
                            stdout=stdout, stderr=stderr, env={**os.environ, "ZEN_HOME": str(home), **(env or {})})


def _read_until(fd: int, needle: bytes, timeout: float = 30) -> bytes:
    """Read `fd` until `needle` has been seen (the first table drawn)."""
    got = b""
    deadline = time.monotonic() + timeout
    while needle not in got:
        left = deadline - time.monotonic()
        assert left > 0, f"timed out waiting for {needle!r} (got {got[-500:]!r})"
        if select.select([fd], [], [], left)[0]:
            chunk = os.read(fd, 65536)
            assert chunk, f"the output ended before {needle!r} (got {got[-500:]!r})"
            got += chunk
    return got


def _cpu(pid: int) -> float:
    """CPU seconds the process has used so far, all its threads (utime + stime of /proc/PID/stat)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) * CLOCK_TICK_S


def _reap(proc: subprocess.Popen[bytes]) -> None:
    """The watch ended, or is ended now: never left behind by a failing test."""
    if proc.poll() is None:
        proc.kill()
    proc.wait(10)


def _stop(proc: subprocess.Popen[bytes], sig: signal.Signals) -> tuple[float, float]:
    """Send `sig` once the watch is idle; (wall, CPU) seconds from the signal to the process's end.
    Fails once STOP_WALL_S has passed without it ending."""
    seen: list[float] = []

    def idle() -> bool:  # no CPU used since the last look: the first table's work is done
        seen.append(_cpu(proc.pid))
        return len(seen) > 1 and seen[-1] == seen[-2]

    wait_until(idle, timeout=10, interval=0.1, message="zen watch --plain to be idle")
    before = _cpu(proc.pid)
    t0 = time.monotonic()
    proc.send_signal(sig)
    while True:
        pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
        if pid:
            break
        took = time.monotonic() - t0
        if took > STOP_WALL_S:
            proc.kill()
            proc.wait(10)
            pytest.fail(f"zen watch --plain still running {took:.2f}s after {sig.name}")
        time.sleep(0.005)
    proc.returncode = os.waitstatus_to_exitcode(status)
    return time.monotonic() - t0, usage.ru_utime + usage.ru_stime - before


def _fast(wall: float, cpu: float) -> None:
    assert cpu <= STOP_CPU_S, f"stopping cost {cpu:.3f}s of CPU (wall {wall:.3f}s)"


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["ctrl-c", "sigterm"])
def test_a_signal_stops_the_piped_watch_at_once(home: Path, sig: signal.Signals) -> None:
    _jobs(home)
    proc = _watch(home, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert proc.stdout is not None and proc.stderr is not None
    try:
        _read_until(proc.stdout.fileno(), b"stop-2")
        took = _stop(proc, sig)
    finally:
        _reap(proc)
    err = proc.stderr.read().decode()
    assert proc.returncode == 0, err
    assert "Traceback" not in err
    _fast(*took)


def test_sigterm_stops_the_terminal_view_and_gives_the_cursor_back(home: Path) -> None:
    _jobs(home)
    master, slave = pty.openpty()
    proc = _watch(home, stdin=slave, stdout=slave, stderr=slave, env={"TERM": "xterm-256color", "COLUMNS": "160"})
    os.close(slave)
    try:
        _read_until(master, b"stop-2")
        took = _stop(proc, signal.SIGTERM)
        tail = b""
        while select.select([master], [], [], 1)[0]:
            try:
                chunk = os.read(master, 65536)
            except OSError:  # EIO: the child's side of the terminal is closed
                break
            if not chunk:
                break
            tail += chunk
    finally:
        _reap(proc)
        os.close(master)
    assert proc.returncode == 0, tail[-500:]
    assert SHOW_CURSOR in tail, tail[-500:]
    assert b"Traceback" not in tail
    _fast(*took)


def test_the_watch_ends_when_its_reader_goes_away(home: Path) -> None:
    _jobs(home)
    r, w = os.pipe()
    proc = _watch(home, stdout=w, stderr=subprocess.PIPE)
    os.close(w)
    assert proc.stderr is not None
    try:
        _read_until(r, b"stop-2")
        os.close(r)  # as `head` exits: nothing changes in the home, yet the watch must notice
        wait_until(lambda: proc.poll() is not None, timeout=5, interval=0.01,
                   message="zen watch --plain to end after its reader closed the pipe")
    finally:
        _reap(proc)
    err = proc.stderr.read().decode()
    assert proc.returncode == 0, err
    assert "Traceback" not in err and "BrokenPipe" not in err, err


def test_a_stop_made_while_the_feed_reads_the_home_is_not_missed(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """stop() lands while the feed's thread is busy outside its lock (here: handing the view its
    first update). That thread used to go back to sleep for the liveness period (5 s, raised to
    60 s here) before it looked at the stop: `zen watch --plain | head` hung that long."""
    monkeypatch.setattr(feed_mod, "LIVENESS_S", 60.0)
    _jobs(home)
    feed: Feed

    def on_update(_: Update) -> None:  # busy until the stop has been made
        wait_until(lambda: feed.stopping, timeout=30, message="stop() to be called")

    feed = Feed(Home(home), on_update)
    feed.start()
    stopper = threading.Thread(target=feed.stop)
    stopper.start()
    stopper.join(timeout=20)
    assert not stopper.is_alive(), "stop() waited for the feed's liveness period"
    assert not feed.alive, "the feed slept on after stop() (join gave up)"


"""procs.waits: what a pane's processes are blocked on, read from this machine's /proc (real
processes on a real pseudo-terminal, as in a tmux pane)."""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
from collections.abc import Iterator

import pytest

from tests.helpers import wait_until
from zen.adapters import procs

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads Linux's /proc")


@pytest.fixture
def run() -> Iterator:
    """Start `sh -c SCRIPT` with a pseudo-terminal as stdin (and output), like an agent in a pane."""
    started: list[subprocess.Popen[bytes]] = []
    fds: list[int] = []

    def start(script: str) -> subprocess.Popen[bytes]:
        master, slave = os.openpty()
        fds.extend([master, slave])
        p = subprocess.Popen(["sh", "-c", script], stdin=slave, stdout=slave, stderr=slave, start_new_session=True)
        started.append(p)
        return p

    yield start
    for p in started:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(p.pid, signal.SIGKILL)
        p.wait(timeout=10)
    for fd in fds:
        os.close(fd)


def settled(pid: int, reading: bool | None) -> procs.Waits:
    """Poll until the look says `reading` (a process just started is still running its start-up)."""
    return wait_until(lambda: (w := procs.waits(pid)).reading is reading and w, timeout=10,
                      message=f"waits of {pid} to be {reading}")


def test_a_process_reading_its_terminal_is_reading(run) -> None:
    p = run("cat; true")                              # sh waits for cat, cat reads the terminal
    settled(p.pid, True)
    # sh may still be in its fork (kernel_clone) at the first look that finds cat reading
    wait_until(lambda: (w := procs.waits(p.pid)).reading is True and {wchan for *_, wchan in w.seen} >= {"do_wait"},
               timeout=10, message="sh to wait for cat while cat reads the terminal")


def test_sleeping_on_a_timer_a_child_or_a_socket_is_not_reading(run) -> None:
    for script in ("sleep 30; true", "sleep 30 | cat", "python3 -c 'import time; time.sleep(30)'"):
        settled(run(script).pid, False)
    a, b = socket.socketpair()
    try:
        p = subprocess.Popen([sys.executable, "-c", "import socket, sys; s = socket.socket(fileno=int(sys.argv[1])); "
                              "s.recv(1)", str(b.fileno())], pass_fds=[b.fileno()], stdin=subprocess.DEVNULL)
        try:
            settled(p.pid, False)                     # wait_woken, but on a socket, not the terminal
        finally:
            p.kill()
            p.wait()
    finally:
        a.close()
        b.close()


def test_what_proc_cannot_tell_is_none(run) -> None:
    # select() on the terminal: on which files, /proc does not say
    p = run("python3 -c 'import select, sys; select.select([sys.stdin], [], [])'; true")
    settled(p.pid, None)
    q = run("sleep 30; true")
    settled(q.pid, False)
    os.killpg(q.pid, signal.SIGSTOP)                  # stopped: job control, or zen pause
    settled(q.pid, None)
    os.killpg(q.pid, signal.SIGCONT)
    assert procs.waits(2 ** 22 + 12345).reading is None   # no such process


def test_unchanged_holds_while_the_waits_stay_and_ends_when_they_move(run) -> None:
    p = run("sleep 1.5; cat")
    # settled once the sleep itself is seen (a look in the instant sh forks it sees sh alone,
    # in the kernel's clone: true then, but gone a moment later)
    w = wait_until(lambda: (w := procs.waits(p.pid)).reading is False
                   and any("sleep" in wchan for *_, wchan in w.seen) and w, timeout=10, message="the sleep")
    assert w.unchanged()
    wait_until(lambda: not w.unchanged(), timeout=10, message="the sleep to end")
    settled(p.pid, True)                               # now it reads its terminal


def test_a_look_that_missed_a_process_is_not_taken_as_unchanged(run) -> None:
    # the children listing a look uses can be a moment old: a reader it missed must not leave the
    # pane asleep for ever (seen once in the bench: one of 100 idle agents never became waiting)
    p = run("sleep 30; true")
    full = wait_until(lambda: (w := procs.waits(p.pid)).reading is False
                      and any("sleep" in wchan for *_, wchan in w.seen) and w, timeout=10, message="the sleep")
    assert full.unchanged()
    missed = procs.Waits(p.pid, False, tuple(t for t in full.seen if t[0] == p.pid))
    assert not missed.unchanged()

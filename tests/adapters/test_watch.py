"""File events (zen.adapters.watch) on real directories: every user of a directory hears its
changes, one inotify instance serves them all, and reads never wake anyone."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from pathlib import Path

from tests.helpers import REPO_ROOT, wait_until
from zen.adapters.watch import FileEvents, SpoolWatch


def inotify_fds() -> int:
    n = 0
    for fd in os.listdir("/proc/self/fd"):
        try:
            if os.readlink(f"/proc/self/fd/{fd}") == "anon_inode:inotify":
                n += 1
        except OSError:
            pass
    return n


class Heard:
    def __init__(self) -> None:
        self.paths: list[str] = []
        self.lock = threading.Lock()

    def __call__(self, path: str) -> None:
        with self.lock:
            self.paths.append(path)

    def has(self, name: str) -> bool:
        with self.lock:
            return any(p.endswith(name) for p in self.paths)


def test_two_users_of_a_directory_both_hear_a_change_through_one_inotify_instance(tmp_path: Path) -> None:
    jobs = tmp_path / "jobs"
    (jobs / "j1").mkdir(parents=True)
    before = inotify_fds()
    a, b = Heard(), Heard()
    fa, fb = FileEvents(a, [(jobs, True)]), FileEvents(b, [(jobs, True)])
    try:
        assert fa.start() and fb.start()
        assert inotify_fds() - before <= 1   # the second user adds a handler, not an instance
        (jobs / "j1" / "events.jsonl").write_text("{}\n")
        wait_until(lambda: a.has("events.jsonl") and b.has("events.jsonl"), timeout=10, message="both to hear it")
        # one user leaving does not deafen the other
        fa.stop()
        (jobs / "j1" / "pane.log").write_text("out\n")
        wait_until(lambda: b.has("pane.log"), timeout=10, message="the other user to hear it")
        assert not a.has("pane.log")
    finally:
        fa.stop()
        fb.stop()


def test_reading_a_file_is_not_a_change(tmp_path: Path) -> None:
    d = tmp_path / "jobs"
    d.mkdir()
    f = d / "events.jsonl"
    f.write_text("{}\n")
    heard = Heard()
    events = FileEvents(heard, [(d, False)])
    try:
        assert events.start()
        for _ in range(20):
            f.read_text()
        (d / "marker").write_text("x")   # a change after the reads: once it is heard, the reads would have been
        wait_until(lambda: heard.has("marker"), timeout=10, message="the marker to be heard")
        assert not heard.has("events.jsonl")
    finally:
        events.stop()


def test_the_spool_watch_wakes_on_a_task_linked_in_and_not_on_a_listing(tmp_path: Path) -> None:
    new = tmp_path / "new"
    new.mkdir()
    staged = tmp_path / "t.yaml"
    staged.write_text("zen: 1\n")
    watch = SpoolWatch(new)
    watch.start()
    try:
        for _ in range(5):
            list(new.iterdir())
        assert not watch.wait(0.2)   # listings (the supervisor's own, every pass) are silent
        os.link(staged, new / "t.yaml")
        assert watch.wait(10)
    finally:
        watch.stop()


def test_stopping_the_last_user_removes_the_watch_and_a_new_user_gets_one(tmp_path: Path) -> None:
    d = tmp_path / "jobs"
    d.mkdir()
    first = Heard()
    events = FileEvents(first, [(d, True)])
    assert events.start()
    events.stop()
    (d / "gone").write_text("x")
    again = Heard()
    later = FileEvents(again, [(d, True)])
    try:
        assert later.start()
        (d / "heard").write_text("x")
        wait_until(lambda: again.has("heard"), timeout=10, message="the new user to hear it")
        assert not first.has("gone") and not first.has("heard")
    finally:
        later.stop()


def test_a_user_whose_handler_fails_does_not_silence_the_others(tmp_path: Path) -> None:
    d = tmp_path / "jobs"
    d.mkdir()

    def broken(path: str) -> None:
        raise RuntimeError("a bug in one user")

    heard = Heard()
    bad, good = FileEvents(broken, [(d, True)]), FileEvents(heard, [(d, True)])
    try:
        assert bad.start() and good.start()
        (d / "first").write_text("x")
        wait_until(lambda: heard.has("first"), timeout=10, message="the first change")
        (d / "second").write_text("x")   # after the broken handler has raised at least once
        wait_until(lambda: heard.has("second"), timeout=10, message="a change after the failure")
    finally:
        bad.stop()
        good.stop()


SIGNAL_HAMMER = """
import signal, sys, time
from pathlib import Path
from zen.adapters.watch import SpoolWatch
watch = SpoolWatch(Path(sys.argv[1]))
signal.signal(signal.SIGALRM, lambda *_: watch.poke())   # what the supervisor's SIGTERM handler does
signal.setitimer(signal.ITIMER_REAL, 0.0002, 0.0002)
waits, woken, end = 0, 0, time.monotonic() + 2
while time.monotonic() < end:
    woken += watch.wait(0.0001)
    waits += 1
signal.setitimer(signal.ITIMER_REAL, 0)
print(waits, woken)
"""


def test_a_signal_handler_that_pokes_the_spool_watch_never_hangs_the_waiting_thread(tmp_path: Path) -> None:
    """The supervisor's SIGTERM handler wakes its sleep with poke(), on the very thread that sleeps
    in wait(). A signal that lands while that thread is inside wait() must not block the handler:
    with a threading.Event it waited forever for the lock the interrupted wait() held, and the
    supervisor never stopped. Five thousand signals a second for 2 s, each one poking (the Event fails this at once)."""
    r = subprocess.run([sys.executable, "-c", SIGNAL_HAMMER, str(tmp_path)], cwd=REPO_ROOT,
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr[-2000:]
    waits, woken = map(int, r.stdout.split())
    assert waits > 100 and woken > 0, r.stdout

"""Fixtures for the supervisor's end-to-end tests: a home with a lane and fast timings, and real
`zen supervise` processes (killed afterwards, with zen's private tmux server)."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.helpers import REPO_ROOT, wait_until
from zen.core.events import validate
from zen.orchestration.read.status import supervisor_pid
from zen.store.events import read_events, read_events_any
from zen.store.home import Home

FAST = {"tick: 0.25s": "tick: 0.05s", "idle_after: 2s": "idle_after: 0.5s", "kill_grace: 5s": "kill_grace: 1s"}


def make_fast(home: Path, **extra: str) -> None:
    cfg = home / "zen.yaml"
    text = cfg.read_text()
    for old, new in FAST.items():
        assert old in text
        text = text.replace(old, new)
    for old, new in extra.items():
        assert old in text, old
        text = text.replace(old, new)
    cfg.write_text(text)


@pytest.fixture
def zh(lane: Path, home: Path) -> Path:
    """A home with lane 'app' (the `lane` repo) and supervisor timings fit for tests."""
    make_fast(home)
    return home


class Supervisors:
    def __init__(self, home: Path, logdir: Path) -> None:
        self.home = home
        self.logdir = logdir
        self.procs: list[subprocess.Popen[bytes]] = []

    def start(self, env: dict[str, str] | None = None, wait: bool = True) -> subprocess.Popen[bytes]:
        n = len(self.procs)
        out = (self.logdir / f"supervisor-{n}.out").open("wb")
        proc = subprocess.Popen([sys.executable, "-m", "zen", "supervise"], cwd=REPO_ROOT,
                                env={**os.environ, "ZEN_HOME": str(self.home), "PYTHONFAULTHANDLER": "1",
                                     **(env or {})},
                                stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        self.procs.append(proc)
        if wait:
            wait_until(lambda: supervisor_pid(Home(self.home)) == proc.pid, timeout=20,
                       message="the supervisor to take its lock")
        return proc

    def kill9(self, proc: subprocess.Popen[bytes]) -> None:
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=10)

    def stop(self, proc: subprocess.Popen[bytes]) -> int:
        """SIGTERM, as a user's Ctrl-C or systemd would; a supervisor that does not end within 20 s
        fails the test with every thread's stack (faulthandler, on SIGABRT) and its log."""
        proc.send_signal(signal.SIGTERM)
        try:
            return proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.send_signal(signal.SIGABRT)
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(timeout=10)
            log = self.logdir / f"supervisor-{self.procs.index(proc)}.out"
            tail = log.read_text(errors="replace")[-12000:] if log.exists() else "(no log)"
            raise AssertionError(f"the supervisor did not stop within 20 s of SIGTERM; its log:\n{tail}") from None

    def close(self) -> None:
        for proc in self.procs:
            if proc.poll() is None:
                proc.send_signal(signal.SIGKILL)
                proc.wait(timeout=10)
        subprocess.run(["tmux", "-L", Home(self.home).tmux_socket, "kill-server"], capture_output=True,
                       check=False)


def catalogue_problems(home: Path) -> list[str]:
    """Every line the test's supervisors, hooks and commands wrote, checked against the event
    catalogue (zen.core.events): a type or field that drifted from it fails the test."""
    out = []
    for path in sorted((home / "jobs").glob("*/events.jsonl")):
        for ev in read_events(path):
            out += [f"{path.parent.name} seq {ev.get('seq')}: {p}" for p in validate(ev)]
    for path in (home / "logs" / "control.jsonl", home / "logs" / "guard-audit.jsonl"):
        for ev in read_events_any(path):
            out += [f"{path.name}: {p}" for p in validate(ev, home=True)]
    return out


@pytest.fixture
def sups(zh: Path, tmp_path: Path) -> Iterator[Supervisors]:
    s = Supervisors(zh, tmp_path)
    yield s
    s.close()
    problems = catalogue_problems(zh)
    assert not problems, problems


@pytest.fixture
def sup(sups: Supervisors) -> subprocess.Popen[bytes]:
    """A running supervisor for `zh`."""
    return sups.start()


Start = Callable[..., subprocess.Popen[bytes]]

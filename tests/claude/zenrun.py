"""Driving zen as a user would, for the Claude Code suite: the supervisor as a real subprocess,
`zen dispatch --agent claude`, and reading a job's timeline, state and screen."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from tests.helpers import wait_until, zen
from zen.store.events import read_events_any

ZEN_BIN = [str(Path(sys.executable).parent / "zen")] if (Path(sys.executable).parent / "zen").exists() \
    else [sys.executable, "-m", "zen"]


@contextmanager
def supervisor(home: Path, log: Path) -> Iterator[subprocess.Popen[bytes]]:
    """`zen supervise` in the foreground as a child process; SIGTERM (then KILL) at the end."""
    with log.open("ab") as out:
        p = subprocess.Popen([*ZEN_BIN, "supervise"], env={**os.environ, "ZEN_HOME": str(home)},
                             stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT)
    try:
        yield p
    finally:
        if p.poll() is None:
            p.send_signal(signal.SIGTERM)
            try:
                p.wait(timeout=15)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait(timeout=5)


def dispatch(prompt: str, *args: str) -> str:
    """`zen dispatch PROMPT --agent claude ARGS` -> the job id."""
    r = zen("dispatch", prompt, "--agent", "claude", *args, "--json")
    assert r.returncode == 0, r.stderr
    return str(json.loads(r.stdout)["id"])


class Job:
    def __init__(self, home: Path, job_id: str) -> None:
        self.home = home
        self.id = job_id
        self.dir = home / "jobs" / job_id

    def events(self) -> list[dict[str, Any]]:
        return list(read_events_any(self.dir / "events.jsonl"))

    def types(self) -> list[str]:
        return [e["type"] for e in self.events()]

    def of(self, etype: str) -> list[dict[str, Any]]:
        return [e for e in self.events() if e["type"] == etype]

    def state(self) -> dict[str, Any]:
        r = zen("show", self.id, "--json")
        assert r.returncode == 0, r.stderr
        data = json.loads(r.stdout)
        return dict(data.get("state") or data)

    def screen(self) -> str:
        r = zen("output", self.id, "--screen")
        return r.stdout if r.returncode == 0 else f"(zen output failed: {r.stderr.strip()})"

    def explain(self) -> str:
        """What to print when a wait fails: the timeline and the agent's screen."""
        evs = "\n".join(json.dumps(e) for e in self.events()[-25:])
        return f"--- events of {self.id}\n{evs}\n--- screen\n{self.screen()[-3000:]}"

    def wait_event(self, etype: str, after_seq: int = 0, timeout: float = 60,
                   **match: Any) -> dict[str, Any]:
        def found() -> dict[str, Any] | None:
            for e in self.events():
                if e["type"] == etype and e["seq"] > after_seq and all(e.get(k) == v for k, v in match.items()):
                    return e
            return None
        try:
            return wait_until(found, timeout=timeout, interval=0.1, message=f"{etype} {match or ''} on {self.id}")
        except AssertionError as exc:
            raise AssertionError(f"{exc}\n{self.explain()}") from None

    def last_seq(self) -> int:
        evs = self.events()
        return int(evs[-1]["seq"]) if evs else 0


def transcript_of(job: Job) -> Path | None:
    """The Claude transcript a hook reported for this job (Stop/UserPromptSubmit carry it), else a
    glob over the private HOME's projects by the session id zen gave Claude."""
    from zen.agents.common import session_uuid

    found = list(Path(os.environ["HOME"]).glob(f".claude/projects/*/{session_uuid(job.id)}.jsonl"))
    return found[0] if found else None


def transcript_lines(path: Path) -> list[dict[str, Any]]:
    return list(read_events_any(path))

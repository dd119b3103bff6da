"""Helpers for the supervisor tests: dispatch, read a job, wait for a state."""

from __future__ import annotations

import json
import shlex
from pathlib import Path
from typing import Any

from tests.helpers import git, wait_until, zen
from zen.core.model import JobSnapshot
from zen.store.home import Home
from zen.store.jobs import JobStore


def dispatch_cmd(script: str, name: str, *extra: str) -> str:
    """Queue a `cmd` agent running `sh -c SCRIPT` in its worktree; returns the job id."""
    r = zen("dispatch", f"run {name}", "--name", name, "--cmd", shlex.join(["sh", "-c", script]), *extra)
    assert r.returncode == 0, r.stderr
    return r.stdout.strip()


def dispatch_sim(home: Path, tmp: Path, name: str, script: list[dict[str, Any]], *extra: str) -> str:
    """Queue a `sim` agent following SCRIPT; returns the job id."""
    f = tmp / f"{name}.yaml"
    f.write_text(json.dumps({"name": name, "prompt": f"simulate {name}", "agent": "sim", "script": script}))
    r = zen("dispatch", "--file", str(f), *extra)
    assert r.returncode == 0, r.stderr
    return r.stdout.strip()


def snap(home: Path, job: str) -> JobSnapshot:
    return JobStore(Home(home)).snapshot(job, write=False)


def events(home: Path, job: str) -> list[dict[str, Any]]:
    return JobStore(Home(home)).events(job)


def types(home: Path, job: str) -> list[str]:
    return [e["type"] for e in events(home, job)]


def wait_state(home: Path, job: str, *states: str, timeout: float = 20) -> JobSnapshot:
    def ok() -> JobSnapshot | None:
        s = snap(home, job)
        assert s.state.value in states, f"state {s.state.value} ({s.reason})"
        return s

    return wait_until(ok, timeout=timeout, message=f"job {job} to be {'/'.join(states)}")


def wait_event(home: Path, job: str, etype: str, timeout: float = 20, **match: Any) -> dict[str, Any]:
    def found() -> dict[str, Any] | None:
        for ev in events(home, job):
            if ev["type"] == etype and all(ev.get(k) == v for k, v in match.items()):
                return ev
        return None

    return wait_until(found, timeout=timeout, message=f"{etype} {match or ''} in {job}")


def gap_free(home: Path, job: str) -> bool:
    seqs = [e["seq"] for e in events(home, job)]
    return seqs == list(range(1, len(seqs) + 1))


def review_files(repo: Path, job: str) -> list[str]:
    return git(repo, "ls-tree", "-r", "--name-only", f"zen/review/{job}").splitlines()


def review_show(repo: Path, job: str, path: str) -> str:
    return git(repo, "show", f"zen/review/{job}:{path}")

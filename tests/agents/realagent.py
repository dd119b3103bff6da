"""What the real-agent suites (tests/codex, tests/gemini, tests/aider) share: skipping where the
pinned agent is not installed, a zen home that runs it, and dispatching to it.

These suites run real agent programs in tmux and are marked `agents`: `make test` runs them
serially after the main parallel run (`make test-agents` runs just them). Under pytest-xdist they
skip, so a parallel run that selects them anyway does not race them against each other.
"""

from __future__ import annotations

import json
import os
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from tests.claude import zenrun
from tests.claude.zenrun import Job
from tests.helpers import zen
from zen.orchestration.job.control import stop_all
from zen.store.home import Home

__all__ = ["Job", "agent_home", "dispatch", "real_agent_skip", "stays_waiting", "supervisor"]


@contextmanager
def supervisor(home: Path, log: Path) -> Iterator[subprocess.Popen[bytes]]:
    """`zen supervise` for the test (tests.claude.zenrun.supervisor); afterwards every agent still
    running is stopped (TERM, grace, KILL), as the kill switch does: a real agent survives the
    end of its tmux server, and no test may leave one behind."""
    try:
        with zenrun.supervisor(home, log) as p:
            yield p
    finally:
        stop_all(Home(home), reason="test over")


def real_agent_skip(items: list[pytest.Item], here: Path, fixture: str, installed: bool, reason: str) -> None:
    """Skip this suite's tests that need the agent when it is not installed, and all of them
    inside an xdist worker. (Each test module marks itself `agents`.)"""
    under_xdist = bool(os.environ.get("PYTEST_XDIST_WORKER"))
    for item in items:
        if here not in Path(str(item.fspath)).parents:
            continue
        if under_xdist:
            item.add_marker(pytest.mark.skip(reason="the real-agent suites run serially: make test-agents"))
        elif not installed and fixture in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.skip(reason=reason))


def agent_home(home: Path, agent: str, command: str, **settings: Any) -> Path:
    """zen.yaml of `home` runs `command` for `--agent AGENT`, with a 2 s idle fallback."""
    from ruamel.yaml import YAML

    y = YAML()
    cfg_path = home / "zen.yaml"
    data = y.load(cfg_path.read_text())
    agents = data.setdefault("agents", {})
    entry = agents.get(agent) or {}
    entry["command"] = command
    entry.update(settings)
    agents[agent] = entry
    data.setdefault("supervisor", {})["idle_after"] = "2s"
    with cfg_path.open("w") as f:
        y.dump(data, f)
    return home


def dispatch(agent: str, prompt: str, *args: str) -> str:
    """`zen dispatch PROMPT --agent AGENT ARGS` -> the job id."""
    r = zen("dispatch", prompt, "--agent", agent, *args, "--json")
    assert r.returncode == 0, r.stderr
    return str(json.loads(r.stdout)["id"])


def stays_waiting(job: Job, after_seq: int, seconds: float) -> None:
    """No turn.working after `after_seq` for `seconds` (an absence: polled all the way)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        flips = [e for e in job.events() if e["seq"] > after_seq and e["type"] == "turn.working"]
        assert not flips, f"an idle agent was recorded as working: {flips}\n{job.explain()}"
        time.sleep(0.25)
    assert job.state()["state"] == "waiting", job.explain()

"""Fixtures for `zen run` (attached jobs): a zen home whose `claude` is the stand-in
(tests/attached/fakeclaude.py) for the fast tests; the real Claude Code suites reuse
tests/claude's fixtures (api, claude_env, needs_claude)."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.claude.conftest import api, claude_env, needs_claude  # noqa: F401  (fixtures reused)
from tests.helpers import ZEN
from zen.store.events import read_events_any

FAKE = Path(__file__).with_name("fakeclaude.py")


def set_agent_command(home: Path, agent: str, command: str) -> None:
    from ruamel.yaml import YAML

    y = YAML()
    path = home / "zen.yaml"
    data = y.load(path.read_text())
    data.setdefault("agents", {}).setdefault(agent, {})["command"] = command
    with path.open("w") as f:
        y.dump(data, f)


@pytest.fixture
def fake_home(home: Path) -> Path:
    """A zen home whose `claude` is the stand-in."""
    set_agent_command(home, "claude", shlex.join([sys.executable, str(FAKE)]))
    return home


def zen_run(*args: str, cwd: Path, script: list[dict[str, Any]] | None = None, exit_code: int = 0,
            timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """`zen run ARGS` in `cwd`, the stand-in following `script`."""
    env = {**os.environ, "FAKE_CLAUDE_SCRIPT": json.dumps(script or []), "FAKE_CLAUDE_EXIT": str(exit_code)}
    return subprocess.run([*ZEN, "run", *args], cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=timeout, stdin=subprocess.DEVNULL)


def calls(out: str) -> list[dict[str, Any]]:
    """What the stand-in said about each call (tool, allowed, reason)."""
    return [d for d in (json.loads(x) for x in out.splitlines() if x.startswith("{")) if "tool" in d]


def only_job(home: Path) -> str:
    jobs = sorted(p.name for p in (home / "jobs").iterdir() if p.is_dir() and not p.name.startswith("."))
    assert len(jobs) == 1, jobs
    return jobs[0]


def timeline(home: Path, job: str) -> list[dict[str, Any]]:
    return list(read_events_any(home / "jobs" / job / "events.jsonl"))

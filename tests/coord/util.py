"""Helpers for the coordinator's tests: job records as the supervisor leaves them, hook calls."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.guard.util import hook, job_env


def make_job(home: Path, job_id: str, lane: str = "app", state: str = "working") -> Path:
    """A job record (task.yaml, state.json with lane and state) and its worktree, with src/."""
    d = home / "jobs" / job_id
    d.mkdir(parents=True, exist_ok=True)
    (d / "task.yaml").write_text(f"zen: 1\nid: {job_id}\nname: {job_id}\nlane: {lane}\n")
    set_state(home, job_id, state, lane)
    wt = home / "worktrees" / job_id
    (wt / "src").mkdir(parents=True, exist_ok=True)
    return wt


def set_state(home: Path, job_id: str, state: str, lane: str = "app") -> None:
    name = job_id.split("-")[1] if job_id[:8].isdigit() else job_id
    (home / "jobs" / job_id / "state.json").write_text(json.dumps(
        {"job": job_id, "name": name, "seq": 0, "state": state, "lane": lane, "domain": "code",
         "worktree": str(home / "worktrees" / job_id)}))


def events(home: Path, job_id: str, etype: str | None = None) -> list[dict[str, Any]]:
    path = home / "jobs" / job_id / "events.jsonl"
    evs = [json.loads(x) for x in path.read_text().splitlines()] if path.exists() else []
    return [e for e in evs if etype is None or e["type"] == etype]


def call(home: Path, job_id: str, tool: str, tool_input: dict[str, Any], agent: str = "claude"):
    wt = home / "worktrees" / job_id
    payload = {"session_id": "t", "hook_event_name": "PreToolUse", "tool_name": tool,
               "tool_input": tool_input, "cwd": str(wt)}
    return hook(payload, "--agent", agent, env=job_env(home, job_id))


def bash(home: Path, job_id: str, command: str):
    return call(home, job_id, "Bash", {"command": command, "description": "test"})


def write(home: Path, job_id: str, rel: str, content: str = "x\n"):
    return call(home, job_id, "Write", {"file_path": str(home / "worktrees" / job_id / rel), "content": content})


def edit(home: Path, job_id: str, rel: str):
    return call(home, job_id, "Edit", {"file_path": str(home / "worktrees" / job_id / rel),
                                       "old_string": "a", "new_string": "b"})


def set_coordinator(home: Path, **values: str) -> None:
    cfg = home / "zen.yaml"
    text = cfg.read_text()
    for key, value in values.items():
        lines = text.splitlines()
        start = lines.index("coordinator:")
        for i, line in enumerate(lines[start:], start):
            if line.startswith(f"  {key}:"):
                lines[i] = f"  {key}: {value}"
                break
        else:
            raise AssertionError(f"coordinator.{key} is not in zen.yaml")
        text = "\n".join(lines) + "\n"
    cfg.write_text(text)

"""Helpers for the guardian's plumbing tests: run the real hook in a subprocess, write policy."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

from tests.helpers import ZEN


def hook(payload: Any, *args: str, env: dict[str, str] | None = None, raw: bytes | None = None,
         timeout: float = 30, argv: list[str] | None = None) -> subprocess.CompletedProcess[str]:
    """Run `zen guard hook` as an agent does: the payload on stdin, nothing else."""
    data = raw if raw is not None else json.dumps(payload).encode()
    r = subprocess.run([*(argv or ZEN), "guard", "hook", *args], input=data, capture_output=True,
                       env={**os.environ, **(env or {})}, timeout=timeout)
    return subprocess.CompletedProcess(r.args, r.returncode, r.stdout.decode(), r.stderr.decode())


def bash(command: str, cwd: Path | str) -> dict[str, Any]:
    return {"session_id": "t", "hook_event_name": "PreToolUse", "tool_name": "Bash",
            "tool_input": {"command": command, "description": "test"}, "cwd": str(cwd)}


def write_tool(path: Path | str, cwd: Path | str, content: str = "x\n") -> dict[str, Any]:
    return {"session_id": "t", "hook_event_name": "PreToolUse", "tool_name": "Write",
            "tool_input": {"file_path": str(path), "content": content}, "cwd": str(cwd)}


def set_policy(home: Path, text: str) -> None:
    (home / "policy" / "guardian.yaml").write_text(text)


def make_job(home: Path, job_id: str, domain: str | None = "code") -> Path:
    """A job record as the supervisor leaves it (state.json with the domain) and its worktree."""
    d = home / "jobs" / job_id
    d.mkdir(parents=True)
    (d / "state.json").write_text(json.dumps({"job": job_id, "seq": 0, "domain": domain}))
    wt = home / "worktrees" / job_id
    wt.mkdir(parents=True)
    return wt


def job_env(home: Path, job_id: str) -> dict[str, str]:
    return {"ZEN_HOME": str(home), "ZEN_JOB_ID": job_id, "ZEN_WORKTREE": str(home / "worktrees" / job_id)}


def events(home: Path, job_id: str) -> list[dict[str, Any]]:
    path = home / "jobs" / job_id / "events.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []

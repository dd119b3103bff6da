"""The real guard hook keeps agents away from the dashboard's powers: the API token file, zen serve,
zen land and the other controls (DESIGN 5 and 11). Run as Claude Code runs it: PreToolUse JSON
on stdin, the job's environment, exit 2 = blocked."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers import REPO_ROOT, zen


def hook(home: Path, command: str) -> tuple[int, str]:
    wt = home / "worktrees" / "20260101T000000Z-agent-0001"
    wt.mkdir(parents=True, exist_ok=True)
    payload = {"hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_input": {"command": command},
               "cwd": str(wt), "session_id": "s"}
    import os

    env = {**os.environ, "ZEN_HOME": str(home), "ZEN_JOB_ID": wt.name, "ZEN_WORKTREE": str(wt)}
    r = subprocess.run([sys.executable, "-m", "zen", "guard", "hook"], input=json.dumps(payload), text=True,
                       capture_output=True, env=env, cwd=REPO_ROOT, timeout=30)
    return r.returncode, r.stderr + r.stdout


@pytest.mark.parametrize("command", [
    "cat {home}/control/api-token",
    "cat $ZEN_HOME/control/api-token",
    "cp {home}/control/api-token /tmp/t",
    "zen land some-job",
    "zen serve --detach",
    "zen serve --url",
    "zen pause other-job",
    "zen resume other-job",
])
def test_the_hook_denies_agents_the_dashboards_powers(home: Path, command: str) -> None:
    assert zen("serve", "--url").returncode == 0  # creates control/api-token
    code, why = hook(home, command.format(home=home))
    assert code == 2, (command, why)


@pytest.mark.parametrize("command", [
    "curl -H 'Authorization: Bearer abc' -X POST http://127.0.0.1:19840/api/v1/agent/killswitch",
    "curl -s localhost:19840/api/v1/agent/sessions",
    "wget -qO- http://[::1]:19840/agent",
    "python3 -c \"import urllib.request; urllib.request.urlopen('http://127.0.0.1:19840/api/v1/agent/land')\"",
    "curl http://127.0.0.1:{port}/api/v1/agent/sessions",   # the port the home's zen serve really runs on
])
def test_the_hook_denies_calling_the_api(home: Path, command: str) -> None:
    (home / "control").mkdir(parents=True, exist_ok=True)
    (home / "control" / "server.json").write_text(json.dumps({"pid": 1, "host": "127.0.0.1", "port": 23456}))
    code, why = hook(home, command.format(port=23456))
    assert code == 2, (command, why)
    assert "zen serve" in why, why


@pytest.mark.parametrize("command", [
    "curl -s http://127.0.0.1:8000/api/v1/users",      # the agent's own dev server
    "curl -s http://localhost:3000/agent",
])
def test_the_hook_lets_agents_call_their_own_local_servers(home: Path, command: str) -> None:
    code, why = hook(home, command)
    assert code == 0, (command, why)


def test_a_read_only_zen_command_stays_allowed(home: Path) -> None:
    code, why = hook(home, "zen status")
    assert code == 0, why

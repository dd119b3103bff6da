"""Agent teams with the real Claude Code (DESIGN 13): the scripted model calls zen's agent_spawn
through MCP (zen mcp serve, registered by --mcp-config), a worker job really starts, and the
parent gets the worker's report back from agent_wait."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.claude.fakeapi import DEFAULT_USAGE, FakeAPI, Step, text, tool
from tests.claude.zenrun import Job, dispatch, supervisor
from tests.helpers import git, wait_until, zen_json

pytestmark = pytest.mark.claude

WORKER = [{"write": {"path": "from-worker.txt", "content": "written by the worker\n"}},
          {"commit": "the worker's file"},
          {"mcp": "agent_report", "args": {"status": "done", "summary": "wrote from-worker.txt"}},
          {"exit": 0}]


@pytest.fixture
def running(claude_lane: Path, claude_home: Path, tmp_path: Path) -> Iterator[Path]:
    with supervisor(claude_home, tmp_path / "supervisor.log"):
        yield claude_home


def test_claude_spawns_a_worker_over_mcp_and_receives_its_report(running: Path, api: FakeAPI,
                                                                claude_lane: Path) -> None:
    api.script = [
        Step("tool", name="mcp__zen__agent_spawn", usage=dict(DEFAULT_USAGE),
             input={"goal": "write from-worker.txt", "agent": "sim", "name": "helper", "script": WORKER}),
        tool("mcp__zen__agent_wait", timeout_s=120),
        text("My worker is done."),
    ]
    parent = Job(running, dispatch("Delegate the file to a worker", "--lane", "app", "--name", "lead"))
    spawned = parent.wait_event("team.spawned", timeout=120)
    worker = Job(running, spawned["worker"])
    task = zen_json("show", worker.id)["task"]
    assert (task["parent"], task["created_by"], task["agent"]) == (parent.id, f"job:{parent.id}", "sim")
    worker.wait_event("harvest.done", timeout=60)
    assert git(claude_lane, "show", f"zen/review/{worker.id}:from-worker.txt") == "written by the worker"

    # the parent's agent_wait returned the worker's report to the model, then its turn ended
    parent.wait_event("turn.waiting", timeout=120, actor="hook")
    wait_until(lambda: api.answered() == 3, timeout=30, message="all three scripted steps answered")
    spawn_result = api.tool_result_for(0)
    assert spawn_result is not None and not spawn_result.get("is_error"), spawn_result
    assert worker.id in json.dumps(spawn_result)
    wait_result = api.tool_result_for(1)
    assert wait_result is not None and not wait_result.get("is_error"), wait_result
    shown = json.dumps(wait_result)
    assert "wrote from-worker.txt" in shown and worker.id in shown
    # the guardian vetted the MCP calls like any other tool call
    vetted = [e for e in parent.of("guard.allowed") if str(e.get("tool", "")).startswith("mcp__zen__")]
    assert {e["tool"] for e in vetted} >= {"mcp__zen__agent_spawn", "mcp__zen__agent_wait"}
    tree = zen_json("status")["tree"]
    (root,) = [n for n in tree if n["id"] == parent.id]
    assert [c["id"] for c in root["children"]] == [worker.id]


def test_a_message_queued_while_claude_works_reaches_it_through_the_stop_hook(running: Path, api: FakeAPI) -> None:
    from tests.claude.fakeapi import bash
    from tests.helpers import zen

    api.script = [bash("sleep 4", "a quiet test run"), text("Tests done."), text("Changelog noted.")]
    job = Job(running, dispatch("Run the tests", "--lane", "app", "--name", "busy"))
    job.wait_event("guard.allowed", timeout=120)                 # the quiet command runs
    r = zen("team", "message", job.id, "Please also note it in the changelog.", "--json")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["queued"] is True                # it works: queued, not typed
    delivered = job.wait_event("team.delivered", timeout=60)
    assert delivered["via"] == "hook"
    wait_until(lambda: api.answered() == 3, timeout=60, message="Claude to go on with the message")
    last = api.script_requests()[-1]
    assert "Please also note it in the changelog." in json.dumps(last.messages)
    job.wait_event("turn.waiting", timeout=60, actor="hook")
    assert len(job.of("team.delivered")) == 1 and not job.of("input.failed")

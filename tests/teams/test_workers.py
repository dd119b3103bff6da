"""A parent job's agent starts workers through zen's MCP tools; each worker is a real job (own
task file, worktree, tmux session, guardian, timeline); the parent waits for their reports."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

from tests.helpers import git, wait_until, zen, zen_json
from tests.supervisor.util import dispatch_sim, events, review_show, snap, types, wait_state
from zen.store.home import Home
from zen.store.jobs import JobStore


def worker_script(path: str, text: str) -> list[dict[str, Any]]:
    return [{"write": {"path": path, "content": text}},
            {"commit": f"add {path}"},
            {"mcp": "agent_report", "args": {"status": "done", "summary": f"wrote {path}"}},
            {"exit": 0}]


def test_a_parent_spawns_three_workers_waits_for_their_reports_and_finishes(zh: Path, lane: Path, tmp_path: Path,
                                                                          sup: subprocess.Popen[bytes]) -> None:
    files = {"a.txt": "alpha\n", "b.txt": "beta\n", "c.txt": "gamma\n"}
    script: list[dict[str, Any]] = [
        {"mcp": "agent_spawn", "args": {"goal": f"write {p}", "agent": "sim", "name": f"w-{p[0]}",
                                        "paths": [p], "script": worker_script(p, t)}}
        for p, t in files.items()
    ]
    script += [{"mcp": "agent_wait", "args": {"ids": "$spawned", "timeout_s": 60}},
               {"say": "all three workers reported"}, {"exit": 0}]
    parent = dispatch_sim(zh, tmp_path, "lead", script)
    wait_state(zh, parent, "harvested", timeout=90)

    store = JobStore(Home(zh))
    spawned = [e for e in events(zh, parent) if e["type"] == "team.spawned"]
    assert len(spawned) == 3
    workers = [e["worker"] for e in spawned]
    for worker, (path, text) in zip(workers, files.items(), strict=True):
        task = store.task(worker)
        assert (task.parent, task.created_by) == (parent, f"job:{parent}")
        s = wait_state(zh, worker, "harvested", timeout=30)
        assert s.exit_code == 0 and s.worktree and s.tmux_session
        assert Path(s.worktree).is_dir() and s.worktree != snap(zh, parent).worktree
        assert review_show(lane, worker, path) == text.rstrip("\n")
        assert "guard.allowed" in types(zh, worker)          # its own guardian vetted its edits
        handoff = Home(zh).job(worker).handoff.read_text()       # the coordination agreement
        assert "Coordination agreement" in handoff and f"Parent job: `{parent}`" in handoff
        assert f"`{path}`" in handoff and "agent_report" in handoff and "agent_message" in handoff
        report = [e for e in events(zh, worker) if e["type"] == "team.report"]
        assert report and report[-1]["status"] == "done" and report[-1]["parent"] == parent
    # agent_wait returned after the three reports, before the parent's last words
    log = (Home(zh).job(parent).pane_log).read_text(errors="replace")
    wait_line = next(line for line in log.splitlines() if "mcp agent_wait -> ok" in line)
    assert '"done": true' in wait_line and all(w in wait_line for w in workers)
    # the reports queued for the parent went to it through agent_wait, not typed in later
    delivered = {e["id"]: e["via"] for e in events(zh, parent) if e["type"] == "team.delivered"}
    assert sorted(delivered.values()) == ["wait"] * 3

    status = zen_json("status")
    (root,) = [n for n in status["tree"] if n["id"] == parent]
    assert sorted(c["id"] for c in root["children"]) == sorted(workers)
    assert {j["job"]: j["parent"] for j in status["jobs"]}[workers[0]] == parent
    shown = zen_json("show", parent)
    assert sorted(shown["workers"]) == sorted(workers)
    tree = zen("team", "tree").stdout
    assert all(f"{w}  w-" in tree for w in workers)
    assert git(lane, "status", "--porcelain") == ""         # the lane's own checkout untouched


def test_messages_are_typed_to_a_waiting_worker_and_queued_for_a_working_one(
        zh: Path, lane: Path, tmp_path: Path, sup: subprocess.Popen[bytes], mcp_for: Any) -> None:
    parent = dispatch_sim(zh, tmp_path, "boss", [{"wait": True}])
    wait_state(zh, parent, "waiting")
    m = mcp_for(zh, parent)
    idle = m.ok("agent_spawn", goal="wait for orders", agent="sim", name="idle", script=[{"wait": True}])
    busy = m.ok("agent_spawn", goal="work a while", agent="sim", name="busy",
                script=[{"busy": 3}, {"wait": True}])
    wait_state(zh, idle["id"], "waiting")
    wait_state(zh, busy["id"], "working")

    typed = m.ok("agent_message", id=idle["id"], text="please check the README")
    assert typed["delivered"] and not typed["queued"]
    queued = m.ok("agent_message", id=busy["id"], text="also update the changelog")
    assert queued["queued"] and not queued["delivered"]
    # the busy one gets it when its turn ends: from its Stop hook, as its next prompt
    ev = wait_until(lambda: next((e for e in events(zh, busy["id"]) if e["type"] == "team.delivered"), None),
                    timeout=20, message="the queued message to be delivered")
    assert ev["via"] == "hook" and ev["id"] == queued["id"]
    for job, text in ((idle["id"], "please check the README"), (busy["id"], "also update the changelog")):
        wait_until(lambda j=job, t=text: f"ok: [zen: message from job {parent}] {t}" in
                   Home(zh).job(j).pane_log.read_text(errors="replace"), timeout=20,
                   message=f"{job} to act on the message")
    assert [e["id"] for e in events(zh, busy["id"]) if e["type"] == "team.delivered"] == [queued["id"]]

    # a worker may ask its parent; a human may message any job; nobody messages a stranger
    w = mcp_for(zh, idle["id"])
    asked = w.ok("agent_message", id=parent, text="which README?")
    assert asked["delivered"]
    ok, err = w.call("agent_message", id=busy["id"], text="hi sibling")
    assert not ok and err["error"] == "refused"
    r = zen("team", "message", idle["id"], "from a human")
    assert r.returncode == 0, r.stderr
    wait_until(lambda: "ok: [zen: message from a human] from a human" in
               Home(zh).job(idle["id"]).pane_log.read_text(errors="replace"), timeout=20)
    json.dumps(asked)

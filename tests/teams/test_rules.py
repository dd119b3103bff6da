"""The rules of a team (DESIGN 13): the worker cap under 50 spawns at once, idempotent replays,
the depth limit, ownership, and compare-and-set control on a worker's revision."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

from tests.helpers import one_line, wait_until, zen, zen_json
from tests.supervisor.util import dispatch_sim, events, wait_state
from tests.teams.conftest import tune
from zen.adapters.tmux import Tmux
from zen.store import spool, teamkey
from zen.store.home import Home
from zen.store.jobs import JobStore

CAP = 4


def task_files(home: Path) -> set[str]:
    """Every task zen knows: in the spool, or taken in as a job."""
    h = Home(home)
    names = {p.stem for p in spool.pending(h)} | {p.stem for p in spool.claimed(h)}
    return names | set(JobStore(h).ids())


def max_alive(home: Path, ids: list[str]) -> int:
    """The most of `ids` whose agents ran at once, from their timelines (agent.spawned to agent.exited)."""
    marks: list[tuple[str, int]] = []
    for job in ids:
        for e in events(home, job):
            if e["type"] == "agent.spawned":
                marks.append((e["ts"], 1))
            elif e["type"] == "agent.exited":
                marks.append((e["ts"], -1))
    alive = peak = 0
    for _, d in sorted(marks, key=lambda m: (m[0], m[1])):
        alive += d
        peak = max(peak, alive)
    return peak


def test_fifty_concurrent_spawns_never_exceed_the_cap_and_refusals_leave_no_task(
        zh: Path, lane: Path, tmp_path: Path, sups: Any, mcp_for: Any) -> None:
    tune(zh, **{"max_concurrent_tasks: 5": "max_concurrent_tasks: 20",
                  "max_active_workers: 4 ": f"max_active_workers: {CAP} "})
    sups.start()
    parent = dispatch_sim(zh, tmp_path, "fan", [{"wait": True}])
    wait_state(zh, parent, "waiting")
    before = task_files(zh)
    m = mcp_for(zh, parent, servers=5)           # 5 server processes, 10 calls each, all at once
    script = [{"sleep": 2}, {"exit": 0}]   # alive longer than the 50 calls take
    calls = [("agent_spawn", {"goal": f"worker {i}", "agent": "sim", "name": f"w{i}", "script": script})
             for i in range(50)]
    peak_sessions = 0
    stop = threading.Event()

    def sample() -> None:
        nonlocal peak_sessions
        tmux = Tmux.for_home(Home(zh))
        while not stop.is_set():
            live = [s for s, p in tmux.panes().items() if not p.dead and parent not in s]
            peak_sessions = max(peak_sessions, len(live))
            time.sleep(0.05)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    try:
        results = m.many(calls)
        accepted = [r for ok, r in results if ok]
        refused = [r for ok, r in results if not ok]
        assert len(accepted) == CAP and len(refused) == 50 - CAP
        assert all(r["error"] == "refused" and "max_active_workers is 4" in r["message"] for r in refused)
        assert task_files(zh) - before == {r["id"] for r in accepted}   # refusals wrote nothing
        ids = [r["id"] for r in accepted]
        for job in ids:
            wait_state(zh, job, "harvested", timeout=30)
        # once those ended, the cap has room again: a second wave, still never past it
        results = m.many(calls[:10])
        again = [r["id"] for ok, r in results if ok]
        assert len(again) == CAP
        for job in again:
            wait_state(zh, job, "harvested", timeout=30)
    finally:
        stop.set()
        sampler.join(5)
    assert max_alive(zh, ids + again) <= CAP
    assert 0 < peak_sessions <= CAP
    assert task_files(zh) - before == set(ids + again)


def test_a_replayed_spawn_is_idempotent_and_the_depth_and_kill_switch_refuse(
        zh: Path, lane: Path, tmp_path: Path, sups: Any, mcp_for: Any) -> None:
    tune(zh, **{"max_depth: 2": "max_depth: 1"})
    sups.start()
    parent = dispatch_sim(zh, tmp_path, "root", [{"wait": True}])
    wait_state(zh, parent, "waiting")
    m = mcp_for(zh, parent)
    args = {"goal": "idle", "agent": "sim", "name": "kid", "request_id": "req-1", "script": [{"wait": True}]}
    first = m.ok("agent_spawn", **args)
    replays = m.many([("agent_spawn", args)] * 5)
    assert all(ok and r["id"] == first["id"] and r["replayed"] for ok, r in replays)
    r = zen("team", "spawn", "idle", "--as", parent, "--agent", "sim", "--request-id", "req-1", "--json")
    assert r.returncode == 0 and f'"id": "{first["id"]}"' in r.stdout
    kids = [j for j in task_files(zh) if j != parent]
    assert kids == [first["id"]]
    assert [e["worker"] for e in events(zh, parent) if e["type"] == "team.spawned"] == [first["id"]]

    wait_state(zh, first["id"], "waiting")
    w = mcp_for(zh, first["id"])
    ok, err = w.call("agent_spawn", goal="a grandchild", agent="sim")
    assert not ok and "teams.max_depth is 1" in err["message"]
    ok, err = m.call("agent_spawn", goal="run rm -rf", agent="cmd")
    assert not ok and "guardian" in err["message"]
    r = zen("kill-switch", "--reason", "test")
    assert r.returncode == 0, r.stderr
    ok, err = m.call("agent_spawn", goal="more", agent="sim")
    assert not ok and "kill switch" in err["message"]
    assert [j for j in task_files(zh) if j != parent] == [first["id"]]
    r = zen("team", "spawn", "more", "--as", parent)
    assert r.returncode == 1 and one_line(r.stderr) and "kill switch" in r.stderr


def test_control_is_compare_and_set_and_only_on_ones_own_workers(
        zh: Path, lane: Path, tmp_path: Path, sup: subprocess.Popen[bytes], mcp_for: Any) -> None:
    parent = dispatch_sim(zh, tmp_path, "ctl", [{"wait": True}])
    wait_state(zh, parent, "waiting")
    p = mcp_for(zh, parent, servers=2)
    a = p.ok("agent_spawn", goal="worker a", agent="sim", name="wa", script=[{"wait": True}])
    b = p.ok("agent_spawn", goal="worker b", agent="sim", name="wb", script=[{"wait": True}])
    for job in (a["id"], b["id"]):
        wait_state(zh, job, "waiting")
    # Two controls race on the revision read. Every event is a revision, and the worker's own
    # timeline may still move after its wait is recorded (its turn's usage lands a moment later):
    # then both lose to that event, and the round is run again. Never do two win.
    rounds = 0
    for _ in range(12):
        (status,) = p.ok("agent_status", ids=[a["id"]])["workers"]
        rev = status["revision"]
        res = p.many([("agent_control", {"id": a["id"], "action": "continue", "expected_revision": rev})] * 2)
        wins = [r for ok, r in res if ok]
        losses = [r for ok, r in res if not ok]
        assert len(wins) <= 1 and len(wins) + len(losses) == 2, res
        for loss in losses:
            assert loss["error"] == "revision-mismatch" and loss["expected_revision"] == rev
            assert loss["current_revision"] > rev
        if not wins:
            assert [e for e in events(zh, a["id"])[rev:] if e["type"] == "team.control"] == []
            continue
        rounds += 1
        wait_state(zh, a["id"], "waiting")
        if rounds == 3:
            break
    controls = [e for e in events(zh, a["id"]) if e["type"] == "team.control"]
    assert rounds == 3 and len(controls) == 3 and all(c["by"] == f"job:{parent}" for c in controls)

    # a worker controls neither its sibling nor its parent
    w = mcp_for(zh, a["id"])
    for target in (b["id"], parent):
        rev = zen_json("show", target)["state"]["revision"]
        ok, err = w.call("agent_control", id=target, action="cancel", expected_revision=rev)
        assert not ok and err["error"] == "refused" and "controls only its own workers" in err["message"]
    ok, err = w.call("agent_status", ids=[b["id"]])
    assert not ok and err["error"] == "refused"
    assert wait_state(zh, b["id"], "waiting") and wait_state(zh, parent, "waiting")

    # a worker's agent that starts zen's server under its parent's or its sibling's id (what an
    # MCP config of its own making would do) is refused before any tool runs; under its own id, the
    # ownership rule refuses it. Its sibling is untouched.
    rev = zen_json("show", b["id"])["state"]["revision"]
    cancel_b = {"id": b["id"], "action": "cancel", "expected_revision": rev}
    forger = p.ok("agent_spawn", goal="forge an identity", agent="sim", name="wc", script=[
        {"mcp": "agent_control", "as": parent, "args": cancel_b},
        {"mcp": "agent_status", "as": b["id"], "args": {}},
        {"mcp": "agent_control", "args": cancel_b},
        {"wait": True}])
    wait_state(zh, forger["id"], "waiting")
    log = Home(zh).job(forger["id"]).pane_log.read_text(errors="replace")
    for job in (parent, b["id"]):
        assert f"zen mcp serve for job {job} is refused: it does not run under that job's agent" in log
    assert "mcp agent_control failed" in log and "mcp agent_status failed" in log
    assert "mcp agent_control -> error" in log and "controls only its own workers" in log
    # and from outside every agent: another job's token does not make one the parent
    env = {**os.environ, "ZEN_HOME": str(zh), "ZEN_JOB_ID": parent, "ZEN_MCP_TOKEN": teamkey.token(Home(zh), a["id"])}
    r = subprocess.run([sys.executable, "-m", "zen", "mcp", "serve"], env=env, input="", capture_output=True,
                       text=True, timeout=60)
    assert r.returncode == 1 and one_line(r.stderr) and "does not run under that job's agent" in r.stderr
    assert not [e for e in events(zh, b["id"]) if e["type"] == "team.control"]
    assert wait_state(zh, b["id"], "waiting")

    # the parent's real control: a cancel at the current revision ends the worker
    (status,) = p.ok("agent_status", ids=[b["id"]])["workers"]
    done = p.ok("agent_control", id=b["id"], action="cancel", expected_revision=status["revision"])
    assert done["state"] == "cancelled"
    wait_until(lambda: JobStore(Home(zh)).snapshot(b["id"], write=False).review_branch, timeout=20)
    r = zen("team", "control", a["id"], "pause", "--as", parent, "--expected-revision", "1")
    assert r.returncode == 1 and one_line(r.stderr) and "revision" in r.stderr

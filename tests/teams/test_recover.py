"""zen recover (DESIGN 13): an agent killed mid-goal goes on in a new session in the same worktree,
whose handoff names the goal and the work done; two recoveries at once: one runs, one is refused."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

from tests.helpers import REPO_ROOT, one_line, wait_until, zen, zen_json
from tests.supervisor.util import events, review_show, snap, wait_state
from tests.teams.test_goals import dispatch_goal
from zen.store.home import Home


def test_a_killed_agent_is_recovered_in_its_worktree_once_with_a_handoff_of_the_work_done(
        zh: Path, lane: Path, tmp_path: Path, sup: subprocess.Popen[bytes]) -> None:
    step = [{"write": {"path": "part-{turn}.txt", "content": "part {turn}\n"}}, {"commit": "part {turn} of the parser"}]
    job = dispatch_goal(zh, tmp_path, "parser", [{"write": {"path": "part-1.txt", "content": "part 1\n"}},
                                                  {"commit": "part 1 of the parser"},
                                                  {"wait": {"turns": [step]}}])
    wait_until(lambda: len([e for e in events(zh, job) if e["type"] == "goal.turn"]) >= 2, timeout=60,
               message="two goal turns")
    first = snap(zh, job)
    spawned = [e for e in events(zh, job) if e["type"] == "agent.spawned"]
    os.kill(int(spawned[-1]["pid"]), signal.SIGKILL)           # the agent dies mid-goal
    wait_state(zh, job, "harvested", timeout=30)
    assert review_show(lane, job, "part-2.txt") == "part 2"     # the first session's work is kept

    env = {**os.environ, "ZEN_HOME": str(zh)}
    both = [subprocess.Popen([sys.executable, "-m", "zen", "recover", job, "--json"], cwd=REPO_ROOT, env=env,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for _ in range(2)]
    results = [(p.wait(60), *p.communicate()) for p in both]
    ok = [r for r in results if r[0] == 0]
    refused = [r for r in results if r[0] != 0]
    assert len(ok) == 1 and len(refused) == 1, results
    assert refused[0][0] == 1 and one_line(refused[0][2])
    assert "already running" in refused[0][2] or "still running" in refused[0][2]
    assert len([e for e in events(zh, job) if e["type"] == "recovery.started"]) == 1
    said = json.loads(ok[0][1])
    assert (said["job"], said["attempt"], said["worktree"]) == (job, 1, first.worktree)
    assert said["handoff"] == str(Home(zh).job(job).dir / "recovery.md") and said["session"]

    handoff = (Home(zh).job(job).dir / "recovery.md").read_text()
    assert "reach the goal of parser" in handoff                       # the goal
    assert "part 1 of the parser" in handoff and "part 2 of the parser" in handoff   # its commits
    assert "`part-2.txt`" in handoff                                    # the files it changed
    assert "signal 9" in handoff, (                                    # how the last session ended
        [e for e in events(zh, job) if e["type"] == "agent.exited"], handoff)
    # a new session in the same worktree, watched by the running supervisor, going on with the goal
    wait_until(lambda: len([e for e in events(zh, job) if e["type"] == "agent.spawned"]) == 2, timeout=20)
    s = wait_state(zh, job, "working", "waiting", timeout=30)
    assert s.worktree == first.worktree and s.branch == first.branch
    latest = [e for e in events(zh, job) if e["type"] == "agent.spawned"][-1]
    environ = Path(f"/proc/{latest['pid']}/environ").read_bytes().split(b"\0")
    assert f"ZEN_HANDOFF={Home(zh).job(job).dir / 'recovery.md'}".encode() in environ   # what it reads first
    wait_until(lambda: any(e["type"] == "goal.continued" for e in events(zh, job)[-20:]), timeout=30,
               message="the goal to go on after the recovery")
    # nothing to recover while it runs; zen status shows it live again
    r = zen("recover", job)
    assert r.returncode == 1 and one_line(r.stderr) and "still running" in r.stderr
    assert {j["job"]: j["state"] for j in zen_json("status")["jobs"]}[job] in ("working", "waiting")


def test_with_recovery_auto_a_goal_whose_agent_died_goes_on_by_itself(zh: Path, lane: Path, tmp_path: Path,
                                                                      sups: object) -> None:
    from tests.teams.conftest import tune

    tune(zh, **{"recovery: manual": "recovery: auto"})
    sups.start()  # type: ignore[attr-defined]
    job = dispatch_goal(zh, tmp_path, "phoenix", [{"say": "working"}, {"wait": {"turns": [[{"say": "more"}]]}}])
    wait_until(lambda: any(e["type"] == "goal.turn" for e in events(zh, job)), timeout=60)
    pid = [e for e in events(zh, job) if e["type"] == "agent.spawned"][-1]["pid"]
    os.kill(int(pid), signal.SIGKILL)
    started = wait_until(lambda: [e for e in events(zh, job) if e["type"] == "recovery.started"], timeout=30,
                         message="the automatic recovery")
    assert started[0]["actor"] == "supervisor"
    wait_until(lambda: len([e for e in events(zh, job) if e["type"] == "agent.spawned"]) == 2, timeout=30)
    wait_state(zh, job, "working", "waiting", timeout=30)
    assert zen_json("status")["breaker"]["kinds"]["recovery"]["count"] == 1

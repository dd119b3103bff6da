"""zen pause / zen resume (the agent's process group stopped and continued, its timeout clock
stopped) and zen land (a clean merge into the lane's base, refused otherwise), on real agents."""

from __future__ import annotations

import json
import time
from pathlib import Path

from tests.helpers import git, one_line, wait_until, zen
from tests.supervisor.util import (
    dispatch_cmd,
    dispatch_sim,
    events,
    snap,
    types,
    wait_event,
    wait_state,
)
from zen.adapters.tmux import Tmux
from zen.store.home import Home


def _proc_state(pid: int) -> str:
    """The kernel's state letter of a process: T when stopped."""
    return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]


def _agent_pid(home: Path, job: str) -> int:
    """The sim agent's own process: the child of the pane's exit wrapper."""
    pane = next(e["pid"] for e in events(home, job) if e["type"] == "agent.spawned")
    kids = Path(f"/proc/{pane}/task/{pane}/children").read_text().split()
    return int(kids[0])


def _log_size(home: Path, job: str) -> int:
    return (home / "jobs" / job / "pane.log").stat().st_size


def test_pause_stops_the_agent_and_resume_continues_it(zh: Path, tmp_path: Path, sup) -> None:
    job = dispatch_sim(zh, tmp_path, "busy-one", [{"busy": 30}])
    wait_state(zh, job, "working")
    wait_until(lambda: _log_size(zh, job) > 0, message="output")
    r = zen("pause", job)
    assert r.returncode == 0, r.stderr
    assert "paused" in r.stdout
    s = wait_state(zh, job, "paused")
    pid = _agent_pid(zh, job)
    wait_until(lambda: _proc_state(pid) == "T", message="the agent's process stopped")
    size = _log_size(zh, job)
    time.sleep(1.5)  # three idle_after periods: a running agent would have printed 7 lines
    assert _log_size(zh, job) == size, "a paused agent printed output"
    assert snap(zh, job).state.value == "paused"
    assert "turn.waiting" not in types(zh, job), "silence while paused was taken for a turn's end"
    again = zen("pause", job)
    assert again.returncode == 1 and one_line(again.stderr) and "already paused" in again.stderr

    r = zen("resume", job, "--json")
    assert r.returncode == 0, r.stderr
    s = wait_state(zh, job, "working")
    assert s.paused_s >= 1.5
    wait_until(lambda: _log_size(zh, job) > size, message="output after resume")
    assert _proc_state(pid) != "T"
    kinds = types(zh, job)
    assert kinds.count("job.paused") == 1 and kinds.count("job.resumed") == 1
    assert all(e["actor"] == "human" for e in events(zh, job) if e["type"] in ("job.paused", "job.resumed"))
    r = zen("resume", job)
    assert r.returncode == 1 and one_line(r.stderr) and "not paused" in r.stderr
    assert zen("cancel", job).returncode == 0


def test_a_paused_jobs_timeout_clock_stops(zh: Path, tmp_path: Path, sup) -> None:
    job = dispatch_sim(zh, tmp_path, "slow-one", [{"busy": 60}], "--timeout", "3s")
    wait_state(zh, job, "working")
    started = time.monotonic()
    assert zen("pause", job).returncode == 0
    time.sleep(4)  # past the 3 s timeout: still paused, not stopped
    assert "job.timeout" not in types(zh, job)
    assert snap(zh, job).state.value == "paused"
    assert zen("resume", job).returncode == 0
    wait_event(zh, job, "job.timeout", timeout=20)
    assert time.monotonic() - started >= 4 + 0.5
    wait_state(zh, job, "harvested", "exited")


def test_cancel_a_paused_job_stops_it(zh: Path, tmp_path: Path, sup) -> None:
    job = dispatch_sim(zh, tmp_path, "pause-cancel", [{"busy": 60}])
    wait_state(zh, job, "working")
    assert zen("pause", job).returncode == 0
    wait_state(zh, job, "paused")
    r = zen("cancel", job)
    assert r.returncode == 0, r.stderr
    wait_state(zh, job, "cancelled")
    exited = wait_event(zh, job, "agent.exited")
    assert exited["exit_code"] is not None or exited["signal"] is not None
    assert Tmux.for_home(Home(zh)).pane(snap(zh, job).tmux_session or "") is None


def test_pause_refuses_a_job_with_no_agent(zh: Path, sups) -> None:
    job = dispatch_cmd("exit 0", "never-started")
    r = zen("pause", job)
    assert r.returncode == 1 and one_line(r.stderr)


# -- land -------------------------------------------------------------------------------------------

def _harvested_writer(zh: Path, tmp_path: Path, name: str, path: str, content: str) -> str:
    job = dispatch_sim(zh, tmp_path, name, [{"write": {"path": path, "content": content}}, {"exit": 0}])
    wait_state(zh, job, "harvested", timeout=30)
    return job


def test_land_merges_a_clean_job_and_refuses_a_conflicting_one(zh: Path, lane: Path, tmp_path: Path,
                                                                 sup) -> None:
    git(lane, "checkout", "-q", "-b", "side")  # main is not checked out: zen may move it
    a = _harvested_writer(zh, tmp_path, "writer-a", "src/app.py", "print('from a')\n")
    b = _harvested_writer(zh, tmp_path, "writer-b", "src/app.py", "print('from b')\n")
    c = _harvested_writer(zh, tmp_path, "writer-c", "docs/c.md", "# c\n")
    main_before = git(lane, "rev-parse", "main")
    status_before = git(lane, "status", "--porcelain")

    r = zen("land", a, "--json")
    assert r.returncode == 0, r.stderr
    main_after = git(lane, "rev-parse", "main")
    assert json.loads(r.stdout) == {"job": a, "lane": "app", "into": "main", "branch": f"zen/review/{a}",
                                    "commit": main_after, "base_was": main_before,
                                    "seq": max(e["seq"] for e in events(zh, a) if e["type"] == "job.landed")}
    assert main_after != main_before
    assert git(lane, "show", "main:src/app.py") == "print('from a')"
    parents = git(lane, "rev-list", "--parents", "-n", "1", "main").split()[1:]
    assert parents == [main_before, git(lane, "rev-parse", f"zen/review/{a}")]
    landed = [e for e in events(zh, a) if e["type"] == "job.landed"]
    assert len(landed) == 1 and landed[0]["commit"] == main_after and landed[0]["actor"] == "human"
    assert snap(zh, a).landed_commit == main_after
    # the lane's own checkout never moved
    assert git(lane, "rev-parse", "--abbrev-ref", "HEAD") == "side"
    assert git(lane, "status", "--porcelain") == status_before
    assert (lane / "src" / "app.py").read_text() == "print('hello')\n"

    r = zen("land", b)
    assert r.returncode == 1 and one_line(r.stderr), r.stderr
    assert "does not merge cleanly" in r.stderr and "src/app.py" in r.stderr
    assert git(lane, "rev-parse", "main") == main_after  # nothing written on a refusal
    assert "job.landed" not in types(zh, b)

    again = zen("land", a)
    assert again.returncode == 1 and "already on main" in again.stderr
    dry = zen("land", c, "--dry-run")
    assert dry.returncode == 0 and dry.stdout.strip() == f"zen/review/{c} merges cleanly into main ({lane})"
    dry = zen("land", c, "--dry-run", "--json")
    assert json.loads(dry.stdout) == {"job": c, "lane": "app", "repo": str(lane), "branch": f"zen/review/{c}",
                                      "base": "main", "old": main_after,
                                      "tip": git(lane, "rev-parse", f"zen/review/{c}")}
    assert git(lane, "rev-parse", "main") == main_after
    assert zen("land", c).returncode == 0
    assert git(lane, "show", "main:docs/c.md") == "# c"


def test_land_refuses_a_checked_out_base_and_live_jobs_and_agents(zh: Path, lane: Path, tmp_path: Path,
                                                                   sup) -> None:
    done = _harvested_writer(zh, tmp_path, "done-one", "new.txt", "new\n")
    main_before = git(lane, "rev-parse", "main")
    r = zen("land", done)  # main is checked out in the lane's own checkout
    assert r.returncode == 1 and one_line(r.stderr) and "checked out" in r.stderr
    assert git(lane, "rev-parse", "main") == main_before
    git(lane, "checkout", "-q", "-b", "elsewhere")
    r = zen("land", done, env={"ZEN_JOB_ID": "20260101T000000Z-agent-0000"})
    assert r.returncode == 1 and "humans only" in r.stderr
    live = dispatch_sim(zh, tmp_path, "live-one", [{"wait": True}])
    wait_state(zh, live, "waiting")
    r = zen("land", live)
    assert r.returncode == 1 and one_line(r.stderr) and "finish it" in r.stderr
    assert git(lane, "rev-parse", "main") == main_before
    assert zen("cancel", live).returncode == 0


def test_the_state_machine_returns_a_resumed_job_to_the_state_it_was_paused_in() -> None:
    from zen.core.states import replay

    def ev(seq: int, etype: str, **f: object) -> dict[str, object]:
        return {"v": 1, "seq": seq, "ts": f"2026-01-01T00:00:{seq:02d}.000Z", "job": "j", "type": etype,
                "actor": "human", **f}

    base = [ev(1, "task.received", task={"name": "j"}), ev(2, "worktree.created", path="/w", branch="b",
            base_commit="c"), ev(3, "agent.spawned", session="s", target="%1"), ev(4, "turn.waiting",
            reason="question")]
    s = replay("j", [*base, ev(5, "job.paused"), ev(6, "turn.working"), ev(7, "turn.waiting", reason="idle")])
    assert s.state.value == "paused" and s.paused_from == "waiting"  # a stopped agent makes no turns
    s = replay("j", [*base, ev(5, "job.paused"), ev(6, "job.resumed", paused_s=4.5)])
    assert s.state.value == "waiting" and s.reason == "question" and s.paused_s == 4.5
    s = replay("j", [*base, ev(5, "job.paused"), ev(6, "agent.exited", exit_code=0, signal=None)])
    assert s.state.value == "exited"
    s = replay("j", [*base, ev(5, "job.resumed", paused_s=3)])  # not paused: nothing to undo
    assert s.state.value == "waiting" and s.paused_s == 0

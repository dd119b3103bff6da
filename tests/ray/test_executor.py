"""Lanes whose turns run on the real two-node Ray cluster (DESIGN 14): the real CLI and `zen
supervise`, the real `zen remote-turn` entrypoint on the nodes, a bare remote on the same disk.

Each acceptance point of issue 20 that needs a cluster is one test here: sim and cmd jobs as Ray
jobs with their work on zen/review/<id> and gap-free timelines, the worker's guardian denying
`rm -rf ~` with the event on the supervisor's timeline, kill -9 of the supervisor mid-turn, zen
cancel, and the kill switch reaching a turn on the cluster.
"""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.helpers import git, wait_until, zen, zen_json
from tests.ray.cluster import RayCluster
from tests.supervisor.conftest import Supervisors, catalogue_problems, make_fast
from tests.supervisor.util import (
    dispatch_cmd,
    dispatch_sim,
    events,
    gap_free,
    review_files,
    review_show,
    snap,
    wait_event,
    wait_state,
)
from zen.adapters.ray import RayJobs

pytestmark = pytest.mark.ray

TURN_TIMEOUT = 120  # a turn on a loaded 2-core machine: Ray starts a driver, then zen, then the agent


@pytest.fixture
def rlane(home: Path, git_repo: Path, tmp_path: Path, ray_cluster: RayCluster) -> Path:
    """`home` with lane `app` on the cluster, its shared remote a bare repository on this disk."""
    remote = tmp_path / "remote.git"
    subprocess.run(["git", "init", "-q", "--bare", str(remote)], check=True)
    r = zen("lane", "add", "app", str(git_repo), "--executor", "ray", "--ray-address", ray_cluster.address,
            "--remote", str(remote), "--ray-resource", "zen_slot=1")
    assert r.returncode == 0, r.stderr
    assert "runs on ray" in r.stdout
    make_fast(home)
    return git_repo


@pytest.fixture
def rsups(home: Path, rlane: Path, tmp_path: Path) -> Iterator[Supervisors]:
    s = Supervisors(home, tmp_path)
    yield s
    s.close()
    problems = catalogue_problems(home)
    assert not problems, problems


def ray_status(cluster: RayCluster, sid: str) -> str | None:
    with RayJobs(cluster.address) as jobs:
        job = jobs.status(sid)
        return job.status if job else None


def test_sim_and_cmd_jobs_run_as_ray_jobs_and_their_work_lands_on_review_branches(
        home: Path, rlane: Path, rsups: Supervisors, ray_cluster: RayCluster, tmp_path: Path) -> None:
    rsups.start()
    sim = dispatch_sim(home, tmp_path, "remote-sim", [
        {"say": "on the cluster"},
        {"bash": "rm -rf ~"},
        {"write": {"path": "sim.txt", "content": "written on a worker\n"}},
        {"commit": "sim: add sim.txt"},
        {"exit": 0},
    ])
    cmd = dispatch_cmd("echo cmd-output-$ZEN_JOB_ID; echo made > cmd.txt", "remote-cmd")
    for job in (sim, cmd):
        wait_state(home, job, "queued", "starting", "working", "waiting", "exited", "harvested",
                   timeout=TURN_TIMEOUT)
        wait_until(lambda j=job: snap(home, j).state.value == "harvested", timeout=TURN_TIMEOUT,
                   message=f"{job} harvested")
        s = snap(home, job)
        assert s.executor == "ray" and s.remote_job == f"{job}-1" and s.exit_code == 0
        assert s.review_branch == f"zen/review/{job}"
        assert gap_free(home, job)
        assert ray_status(ray_cluster, f"{job}-1") == "SUCCEEDED"
        assert ray_status(ray_cluster, f"{job}-2") is None   # one turn, one Ray job
    assert review_show(rlane, sim, "sim.txt") == "written on a worker"
    assert "sim: add sim.txt" in git(rlane, "log", "--format=%s", f"zen/review/{sim}")
    assert review_show(rlane, cmd, "cmd.txt") == "made"        # an uncommitted file, harvested
    assert "README.md" in review_files(rlane, cmd)

    # the worker's guardian denied rm -rf ~ and the decision is on the supervisor's timeline
    denied = [e for e in events(home, sim) if e["type"] == "guard.denied"]
    assert denied and "rm -rf ~" in str(denied[0].get("command")), denied
    assert str(denied[0].get("via", "")).startswith(f"{sim}-1#")
    types = [e["type"] for e in events(home, sim)]
    assert types.index("remote.submit") < types.index("remote.submitted") < types.index("remote.started") \
        < types.index("guard.denied") < types.index("remote.pushed") < types.index("remote.ended") \
        < types.index("remote.fetched") < types.index("agent.exited") < types.index("harvest.done")
    # the agent's output came back into pane.log; status says where each job ran
    assert f"cmd-output-{cmd}" in (home / "jobs" / cmd / "pane.log").read_text()
    rows = {j["job"]: j for j in zen_json("status")["jobs"]}
    assert rows[sim]["executor"] == "ray" and rows[sim]["remote_host"]
    assert "ray" in zen("status").stdout


def test_kill_9_of_the_supervisor_mid_turn_then_a_restart_harvests_without_resubmitting(
        home: Path, rlane: Path, rsups: Supervisors, ray_cluster: RayCluster, tmp_path: Path) -> None:
    gate = tmp_path / "go"
    first = rsups.start()
    job = dispatch_cmd(f"echo started; while [ ! -f {gate} ]; do sleep 0.1; done; echo after > after.txt",
                       "survives")
    wait_event(home, job, "remote.started", timeout=TURN_TIMEOUT)
    rsups.kill9(first)
    gate.touch()   # the turn ends while no supervisor watches
    wait_until(lambda: ray_status(ray_cluster, f"{job}-1") == "SUCCEEDED", timeout=TURN_TIMEOUT,
               message="the Ray job to succeed")
    rsups.start()
    wait_until(lambda: snap(home, job).state.value == "harvested", timeout=TURN_TIMEOUT, message="harvested")
    evs = events(home, job)
    assert [e["type"] for e in evs].count("remote.submit") == 1
    assert [e["type"] for e in evs].count("remote.submitted") == 1
    assert ray_status(ray_cluster, f"{job}-2") is None
    assert review_show(rlane, job, "after.txt") == "after"
    assert gap_free(home, job)
    # every worker event once, in order, though the restarted supervisor read the log from the start
    vias = [e["via"] for e in evs if "via" in e]
    assert vias == sorted(set(vias), key=lambda v: int(v.rsplit("#", 1)[1]))


def test_zen_cancel_stops_the_ray_job_on_the_cluster_and_harvests_what_it_made(
        home: Path, rlane: Path, rsups: Supervisors, ray_cluster: RayCluster) -> None:
    rsups.start()
    job = dispatch_cmd("echo partial > partial.txt; echo working; sleep 300", "to-cancel")
    wait_event(home, job, "remote.started", timeout=TURN_TIMEOUT)
    wait_until(lambda: "working" in (home / "jobs" / job / "pane.log").read_text(), timeout=TURN_TIMEOUT,
               message="the agent's output")
    r = zen("cancel", job, timeout=120)
    assert r.returncode == 0, r.stderr
    assert ray_status(ray_cluster, f"{job}-1") == "STOPPED"
    s = wait_state(home, job, "cancelled")
    wait_until(lambda: snap(home, job).review_branch, timeout=30, message="the review branch")
    assert review_show(rlane, job, "partial.txt") == "partial"
    assert "remote.fetched" in [e["type"] for e in events(home, job)]
    assert s.state.value == "cancelled" and gap_free(home, job)


def test_the_kill_switch_reaches_a_turn_on_the_cluster(
        home: Path, rlane: Path, rsups: Supervisors, ray_cluster: RayCluster, tmp_path: Path) -> None:
    gate = tmp_path / "gate"
    rsups.start()
    job = dispatch_sim(home, tmp_path, "clamped", [
        {"write": {"path": "before.txt", "content": "before\n"}},
        {"bash": f"while [ ! -f {gate} ]; do sleep 0.1; done"},
        {"write": {"path": "after.txt", "content": "after\n"}},
        {"exit": 0},
    ])
    wait_event(home, job, "remote.started", timeout=TURN_TIMEOUT)
    wait_until(lambda: any(e["type"] == "guard.allowed" and "while" in str(e.get("command"))
                           for e in events(home, job)), timeout=TURN_TIMEOUT, message="the loop to run")
    r = zen("kill-switch", "-m", "test")
    assert r.returncode == 0, r.stderr
    gate.touch()
    wait_until(lambda: snap(home, job).state.value == "harvested", timeout=TURN_TIMEOUT, message="harvested")
    denied = [e for e in events(home, job) if e["type"] == "guard.denied"]
    assert denied and "after.txt" in str(denied[-1].get("file_path") or denied[-1].get("command")), denied
    files = review_files(rlane, job)
    assert "before.txt" in files and "after.txt" not in files
    assert gap_free(home, job)


def test_zen_send_runs_the_next_turn_as_a_new_ray_job_from_where_the_last_one_left(
        home: Path, rlane: Path, rsups: Supervisors, ray_cluster: RayCluster, tmp_path: Path) -> None:
    rsups.start()
    job = dispatch_sim(home, tmp_path, "two-turns", [
        {"write": {"path": "first.txt", "content": "turn one\n"}},   # left uncommitted by turn 1
        {"wait": True},
    ])

    def settled_turns() -> int:
        return sum(1 for e in events(home, job) if e["type"] == "turn.waiting" and e.get("by") == "remote")

    wait_until(lambda: settled_turns() == 1, timeout=TURN_TIMEOUT, message="the first turn to end waiting")
    assert snap(home, job).state.value == "waiting"
    r = zen("send", job, "now the second turn")
    assert r.returncode == 0, r.stderr
    wait_until(lambda: settled_turns() == 2, timeout=TURN_TIMEOUT, message="the second turn to end waiting")
    submits = [e for e in events(home, job) if e["type"] == "remote.submit"]
    assert [(s["submission_id"], s["turn"]) for s in submits] == [(f"{job}-1", 1), (f"{job}-2", 2)]
    assert submits[1]["start"] == f"refs/zen/{job}/turn-1"
    assert ray_status(ray_cluster, f"{job}-2") == "SUCCEEDED"
    r = zen("finish", job, timeout=120)
    assert r.returncode == 0, r.stderr
    wait_until(lambda: snap(home, job).state.value == "harvested", timeout=60, message="harvested")
    assert review_show(rlane, job, "first.txt") == "turn one"            # turn 1's file reached turn 2
    assert "now the second turn" in review_show(rlane, job, "NOTES.md")  # turn 2's work, from the input
    assert gap_free(home, job)

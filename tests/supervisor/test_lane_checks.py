"""Lane checks (issue 37): the lane's own commands run on what would land — the harvested work
merged into the base as it is now — and gate `zen land`."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from tests.helpers import git, one_line, wait_until, zen
from tests.supervisor.util import dispatch_sim, events, wait_state
from zen.store.home import Home

# passes while the tree has fewer than two flags: true of the job's branch alone, false once the
# base has gained a flag of its own since the job started
CHECK = 'test "$(ls *.flag 2>/dev/null | wc -l)" -lt 2'


def _git_in(lane: Path, text: str, *args: str) -> str:
    r = subprocess.run(["git", "-C", str(lane), *args], input=text, capture_output=True, text=True, check=True)
    return r.stdout.strip()


def _commit_on_main(lane: Path, name: str) -> str:
    """A commit on main made without checking it out (the lane's checkout is on another branch)."""
    blob = _git_in(lane, "flag\n", "hash-object", "-w", "--stdin")
    tree_in = git(lane, "ls-tree", "main")
    tree = _git_in(lane, f"{tree_in}\n100644 blob {blob}\t{name}\n", "mktree")
    commit = git(lane, "commit-tree", tree, "-p", "main", "-m", f"add {name}")
    git(lane, "update-ref", "refs/heads/main", commit)
    return commit


def test_a_check_that_passes_on_the_branch_but_fails_on_the_merge_with_a_moved_base_blocks_land(
        zh: Path, lane: Path, tmp_path: Path, sup) -> None:
    git(lane, "checkout", "-q", "-b", "side")          # main is not checked out: zen may land onto it
    assert zen("lane", "set", "app", "--check", CHECK).returncode == 0
    job = dispatch_sim(zh, tmp_path, "flags", [{"write": {"path": "one.flag", "content": "flag\n"}}, {"exit": 0}])
    wait_state(zh, job, "harvested", timeout=30)
    wait_until(lambda: any(e["type"] == "check.passed" for e in events(zh, job)), timeout=30,
               message="the supervisor's own run after the harvest")

    r = zen("check", job, "--json")                    # asked again by a person: the same answer
    assert r.returncode == 0, r.stderr
    first = json.loads(r.stdout)
    assert first["passed"] and not first["stale"] and first["results"][0]["exit_code"] == 0

    _commit_on_main(lane, "two.flag")                  # the base moves on after the job started
    main_before = git(lane, "rev-parse", "main")
    r = zen("land", job)
    assert r.returncode == 1 and one_line(r.stderr), r.stderr
    assert "check" in r.stderr and CHECK in r.stderr and "--force" in r.stderr, r.stderr
    assert git(lane, "rev-parse", "main") == main_before          # nothing landed
    assert json.loads(zen("show", job, "--json").stdout)["state"]["checks"] == "failed"
    failed = [e for e in events(zh, job) if e["type"] == "check.failed"]
    assert len(failed) == 1 and failed[0]["exit_code"] == 1 and Path(failed[0]["log"]).is_file()
    started = [e for e in events(zh, job) if e["type"] == "check.started"]
    assert [(s["actor"], s["stale"]) for s in started] == [("supervisor", False), ("human", False), ("land", True)]
    assert started[2]["base"] == main_before
    # the throwaway tree is gone; the lane's worktree list holds no check tree
    assert "checks" not in git(lane, "worktree", "list")

    r = zen("check", job)                                          # asked again: still failing
    assert r.returncode == 1 and "FAILED" in r.stdout

    r = zen("land", job, "--force")                                # a human's call, recorded
    assert r.returncode == 0, r.stderr
    assert git(lane, "show", "main:one.flag") == "flag"
    landed = [e for e in events(zh, job) if e["type"] == "job.landed"]
    assert landed and landed[-1]["forced"] is True


def test_checks_run_inside_the_wall_and_a_lane_without_checks_lands_as_before(
        zh: Path, lane: Path, tmp_path: Path, sup) -> None:
    git(lane, "checkout", "-q", "-b", "side")
    outside = tmp_path / "outside.txt"
    assert (zh / "zen.yaml").is_file() and (zh / "control").is_dir()
    escape = f"echo escaped > {outside} 2>/dev/null; test ! -e {zh}/zen.yaml && test ! -e {zh}/control"
    assert zen("lane", "set", "app", "--check", escape).returncode == 0
    job = dispatch_sim(zh, tmp_path, "walled", [{"write": {"path": "a.txt", "content": "a\n"}}, {"exit": 0}])
    wait_state(zh, job, "harvested", timeout=30)
    wait_until(lambda: any(e["type"] in ("check.passed", "check.failed") for e in events(zh, job)), timeout=30,
               message="the supervisor's own run after the harvest")
    r = zen("check", job, "--json")
    assert r.returncode == 0, (r.stdout, r.stderr)       # zen's home is an empty folder in there
    assert not outside.exists()                           # nothing written outside the throwaway tree

    assert zen("lane", "set", "app", "--no-checks").returncode == 0
    r = zen("check", job)
    assert r.returncode == 2 and "no checks" in r.stderr
    assert zen("land", job).returncode == 0
    assert git(lane, "show", "main:a.txt") == "a"


def test_the_supervisor_runs_the_checks_after_each_harvest_by_itself_and_land_takes_that_run(
        zh: Path, lane: Path, tmp_path: Path, sup) -> None:
    git(lane, "checkout", "-q", "-b", "side")
    assert zen("lane", "set", "app", "--check", "test -f b.txt").returncode == 0
    job = dispatch_sim(zh, tmp_path, "auto", [{"write": {"path": "b.txt", "content": "b\n"}}, {"exit": 0}])
    wait_state(zh, job, "harvested", timeout=30)
    wait_until(lambda: any(e["type"] == "check.passed" for e in events(zh, job)), timeout=30,
               message="the supervisor's run of the lane's checks")
    started = [e for e in events(zh, job) if e["type"] == "check.started"]
    assert len(started) == 1 and started[0]["actor"] == "supervisor"
    assert started[0]["tip"] == git(lane, "rev-parse", f"zen/review/{job}")
    shown = zen("show", job).stdout
    assert "checks   passed" in shown, shown                 # zen show, zen status, review.md say so
    assert "checks passed" in zen("status").stdout
    review = Home(zh).job(job).review.read_text()
    assert "## Checks" in review and "passed `test -f b.txt`" in review, review
    assert zen("land", job).returncode == 0                 # the current run passed: no second run
    assert len([e for e in events(zh, job) if e["type"] == "check.started"]) == 1

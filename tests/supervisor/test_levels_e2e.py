"""Autonomy levels on a running agent (issue 6): at suggest a push beyond the worktree is denied;
at act-and-report it is allowed, reported in the timeline and in review.md; at observe the
harvest is a report with no review branch."""

from __future__ import annotations

import subprocess
from pathlib import Path

from tests.helpers import git, zen
from tests.supervisor.util import dispatch_sim, events, wait_state


def with_remote(lane: Path, tmp_path: Path) -> Path:
    remote = tmp_path / "remote.git"
    subprocess.run(["git", "init", "-q", "--bare", str(remote)], check=True)
    git(lane, "remote", "add", "origin", str(remote))
    return remote


PUSH = [{"write": {"path": "feature.txt", "content": "feature\n"}}, {"commit": "add feature"},
        {"bash": "git push origin HEAD:refs/heads/agent-feature"}, {"exit": 0}]


def guard_events(home: Path, job: str) -> list[dict]:
    return [e for e in events(home, job) if e["type"].startswith("guard.") and "push" in str(e.get("command", ""))]


def test_at_suggest_a_push_is_denied(zh: Path, lane: Path, tmp_path: Path, sup) -> None:
    remote = with_remote(lane, tmp_path)
    job = dispatch_sim(zh, tmp_path, "push-at-suggest", PUSH)
    wait_state(zh, job, "harvested", timeout=40)
    [ev] = guard_events(zh, job)
    assert ev["type"] == "guard.denied" and ev["rule"] == "level.suggest"
    assert git(remote, "branch", "--list") == ""


def test_at_act_and_report_a_push_is_allowed_and_reported(zh: Path, lane: Path, tmp_path: Path, sup) -> None:
    remote = with_remote(lane, tmp_path)
    r = zen("autonomy", "promote", "code", "--override", "--reason", "test: trusted lane")
    assert r.returncode == 0, r.stderr
    job = dispatch_sim(zh, tmp_path, "push-at-act", PUSH)
    wait_state(zh, job, "harvested", timeout=40)
    [ev] = guard_events(zh, job)
    assert ev["type"] == "guard.allowed" and ev["rule"] == "report.push"
    assert "agent-feature" in git(remote, "branch", "--list")
    review = (zh / "jobs" / job / "review.md").read_text()
    assert "## Actions beyond the worktree" in review and "git push origin" in review


def test_at_observe_the_harvest_is_a_report_without_a_branch(zh: Path, lane: Path, tmp_path: Path, sup) -> None:
    assert zen("autonomy", "demote", "code").returncode == 0
    job = dispatch_sim(zh, tmp_path, "observe-only", [{"bash": "ls"}, {"write": {"path": "x.txt", "content": "x"}},
                                                      {"exit": 0}])
    s = wait_state(zh, job, "harvested", timeout=40)
    assert s.review_branch is None
    assert git(lane, "branch", "--list", f"zen/review/{job}") == ""
    denied = [e for e in events(zh, job) if e["type"] == "guard.denied"]
    assert [e["rule"] for e in denied] == ["level.observe"]
    assert "observe mode" in (zh / "jobs" / job / "review.md").read_text()

"""Terminal states for faults (issue 15): a job whose worktree is deleted under its agent fails
with a reason that says what survives; a job harvested at autonomy level observe (a report, no
review branch) can be cleaned, its work kept under a ref."""

from __future__ import annotations

import shutil
from pathlib import Path

from tests.helpers import git, wait_until, zen
from tests.supervisor.util import dispatch_cmd, gap_free, snap, types, wait_state


def test_a_worktree_deleted_under_its_agent_fails_the_job_with_what_was_kept(zh: Path, lane: Path, sup,
                                                                             tmp_path: Path) -> None:
    gate = tmp_path / "gate"
    job = dispatch_cmd(f"while [ ! -e {gate} ]; do sleep 0.05; done; exit 0", "worktree-gone")
    s = wait_state(zh, job, "working", "waiting")
    shutil.rmtree(s.worktree)
    gate.touch()
    s = wait_state(zh, job, "failed")
    assert "was deleted" in (s.reason or "") and f"zen/{job}" in (s.reason or "") and "pane.log" in (s.reason or "")
    kinds = types(zh, job)
    assert kinds.count("agent.exited") == 1 and kinds.count("harvest.failed") == 1 and gap_free(zh, job)
    shown = zen("show", job)
    assert shown.returncode == 0 and "was deleted" in shown.stdout
    assert zen("status").returncode == 0


def test_an_observe_level_job_can_be_cleaned_and_its_work_is_kept(zh: Path, lane: Path, sup) -> None:
    assert zen("autonomy", "demote", "code").returncode == 0
    job = dispatch_cmd("echo seen > seen.txt; exit 0", "observed")
    s = wait_state(zh, job, "harvested", timeout=40)
    assert s.review_branch is None and s.harvest_commit
    r = zen("clean", job)
    assert r.returncode == 0, r.stderr
    assert f"refs/zen/observed/{job}" in r.stdout
    assert not Path(str(s.worktree)).exists()
    assert git(lane, "show", f"refs/zen/observed/{job}:seen.txt") == "seen"
    assert git(lane, "branch", "--list", f"zen/review/{job}") == ""  # still no review branch
    assert "worktree.removed" in types(zh, job)
    wait_until(lambda: snap(zh, job).state.value == "harvested", timeout=5)

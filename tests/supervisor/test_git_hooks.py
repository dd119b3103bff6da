"""zen's own git runs no repository hook (issue 31, finding C1: a post-checkout planted in a lane's
shared .git ran inside the supervisor at the next `git worktree add`), and `zen land` lands the
commit the harvest recorded, never what the review branch points at later (finding H5)."""

from __future__ import annotations

from pathlib import Path

from tests.helpers import git, one_line, zen
from tests.supervisor.util import dispatch_sim, wait_state

HOOKS = ("post-checkout", "pre-commit", "post-commit", "reference-transaction", "pre-merge-commit",
         "post-merge", "post-rewrite", "pre-auto-gc", "post-index-change", "fsmonitor-watchman")


def _plant(lane: Path, marks: Path) -> None:
    hooks = Path(git(lane, "rev-parse", "--path-format=absolute", "--git-common-dir")) / "hooks"
    hooks.mkdir(exist_ok=True)
    for name in HOOKS:
        hook = hooks / name
        hook.write_text(f"#!/bin/sh\necho {name} $(tr \"\\\\0\" \" \" < /proc/$PPID/cmdline) >> {marks}\n")
        hook.chmod(0o755)
    git(lane, "config", "core.fsmonitor", str(hooks / "fsmonitor-watchman"))


def test_no_hook_of_the_lane_runs_when_zen_makes_harvests_or_lands_a_job(zh: Path, lane: Path, tmp_path: Path,
                                                                          sup) -> None:
    marks = tmp_path / "hooks-that-ran"
    git(lane, "checkout", "-q", "-b", "side")   # main is not checked out: zen may land onto it
    _plant(lane, marks)
    job = dispatch_sim(zh, tmp_path, "hooked", [{"write": {"path": "src/new.py", "content": "x = 1\n"}},
                                                {"exit": 0}])
    wait_state(zh, job, "harvested", timeout=30)
    assert zen("land", job).returncode == 0
    assert git(lane, "show", "main:src/new.py") == "x = 1"
    assert not marks.exists(), f"hooks ran inside zen: {marks.read_text()}"


def test_land_refuses_a_review_branch_moved_since_its_harvest(zh: Path, lane: Path, tmp_path: Path, sup) -> None:
    git(lane, "checkout", "-q", "-b", "side")
    job = dispatch_sim(zh, tmp_path, "victim", [{"write": {"path": "ok.txt", "content": "fine\n"}}, {"exit": 0}])
    wait_state(zh, job, "harvested", timeout=30)
    harvested = git(lane, "rev-parse", f"zen/review/{job}")
    # someone (an agent, in the probe) points the review branch at a commit of their own
    evil = git(lane, "commit-tree", "-p", harvested, "-m", "evil", f"{harvested}^{{tree}}")
    git(lane, "update-ref", f"refs/heads/zen/review/{job}", evil)
    main_before = git(lane, "rev-parse", "main")
    for args in (("land", job), ("land", job, "--dry-run")):
        r = zen(*args)
        assert r.returncode == 1 and one_line(r.stderr), r.stderr
        assert "harvest recorded" in r.stderr and harvested[:12] in r.stderr, r.stderr
    assert git(lane, "rev-parse", "main") == main_before
    # put back as harvested, it lands, and what lands is the harvested commit
    git(lane, "update-ref", f"refs/heads/zen/review/{job}", harvested)
    assert zen("land", job).returncode == 0
    assert git(lane, "rev-list", "--parents", "-n", "1", "main").split()[1:] == [main_before, harvested]

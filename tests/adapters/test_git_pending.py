"""A job's worktree made in the background while the rest of a start goes on (git.start_worktree):
it ends as add_worktree would have made it, or says why not in add_worktree's own sentences, and a
start given up meanwhile leaves neither worktree nor branch behind. Read back with the git binary."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers import git, make_repo
from zen.adapters import git as zgit
from zen.adapters import worktree as zwt
from zen.errors import GitError


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return make_repo(tmp_path / "repo", {"README.md": "# r\n", "src/a.py": "a = 1\n"})


def branches(repo: Path) -> set[str]:
    return set(git(repo, "for-each-ref", "--format=%(refname:short)", "refs/heads").split())


def worktrees(repo: Path) -> list[str]:
    return [line.split(" ", 1)[1] for line in git(repo, "worktree", "list", "--porcelain").splitlines()
            if line.startswith("worktree ")]


def test_a_worktree_started_in_the_background_is_the_one_add_worktree_makes(repo: Path, tmp_path: Path) -> None:
    wt = tmp_path / "wts" / "j1"
    pending = zwt.start_worktree(repo, wt, "zen/j1", "main")
    assert pending.base_commit == git(repo, "rev-parse", "main")   # known before git has finished
    base = pending.finish()
    assert base == git(repo, "rev-parse", "main")
    assert git(wt, "symbolic-ref", "HEAD") == "refs/heads/zen/j1" and git(wt, "rev-parse", "HEAD") == base
    assert (wt / "src" / "a.py").read_text() == "a = 1\n"
    for name in zgit.ZEN_PATHS:
        assert (wt / name / ".gitignore").exists()
    assert git(wt, "status", "--porcelain") == ""
    assert str(wt) in worktrees(repo)


def test_a_start_given_up_takes_back_its_worktree_and_branch(repo: Path, tmp_path: Path) -> None:
    wt = tmp_path / "wts" / "j1"
    before = branches(repo)
    pending = zwt.start_worktree(repo, wt, "zen/j1", "main")
    pending.abandon()
    assert not wt.exists()
    assert branches(repo) == before
    assert worktrees(repo) == [str(repo)]
    # and the job can start again later under the same names
    assert zwt.start_worktree(repo, wt, "zen/j1", "main").finish() == git(repo, "rev-parse", "main")


def test_a_base_that_does_not_resolve_fails_at_finish_with_add_worktrees_sentence(repo: Path, tmp_path: Path) -> None:
    pending = zwt.start_worktree(repo, tmp_path / "wt", "zen/j1", "no-such-branch")   # never raises
    assert pending.base_commit is None
    with pytest.raises(GitError, match="does not resolve to a commit"):
        pending.finish()
    pending.abandon()   # nothing was made: nothing to take back, no error
    assert branches(repo) == {"main"}


def test_a_repository_that_is_gone_fails_at_finish_not_at_start(tmp_path: Path) -> None:
    pending = zwt.start_worktree(tmp_path / "missing", tmp_path / "wt", "zen/j1", "main")
    with pytest.raises(GitError, match="not a git repository"):
        pending.finish()


def test_after_a_restart_the_worktree_already_there_is_kept_and_never_taken_back(repo: Path, tmp_path: Path) -> None:
    wt = tmp_path / "wt"
    base = zgit.add_worktree(repo, wt, "zen/j1", "main")
    (wt / "notes.txt").write_text("the agent's work\n")
    again = zwt.start_worktree(repo, wt, "zen/j1", "main")
    assert again.finish() == base
    again.abandon()   # it did not make this worktree: it must not remove it
    assert (wt / "notes.txt").read_text() == "the agent's work\n"
    assert "zen/j1" in branches(repo)


def test_a_branch_holding_commits_is_never_reused_nor_deleted(repo: Path, tmp_path: Path) -> None:
    git(repo, "branch", "zen/j1", "main~1")   # an older job's branch of that name, elsewhere
    pending = zwt.start_worktree(repo, tmp_path / "wt", "zen/j1", "main")
    with pytest.raises(GitError, match="already exists"):
        pending.finish()
    pending.abandon()
    assert git(repo, "rev-parse", "zen/j1") == git(repo, "rev-parse", "main~1")
    assert not (tmp_path / "wt").exists()


def test_a_branch_left_without_its_worktree_by_a_crash_gets_it(repo: Path, tmp_path: Path) -> None:
    git(repo, "branch", "zen/j1", "main")   # git made the branch, then the crash came
    pending = zwt.start_worktree(repo, tmp_path / "wt", "zen/j1", "main")
    assert pending.finish() == git(repo, "rev-parse", "main")
    assert git(tmp_path / "wt", "symbolic-ref", "HEAD") == "refs/heads/zen/j1"

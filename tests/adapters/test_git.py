"""zen's git adapter (GitPython) on real repositories in temp dirs.

What it did is read back with the git binary (tests.helpers.git), not through the adapter.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers import REPO_ROOT, git, make_repo
from zen.adapters import git as zgit
from zen.adapters import git_probe
from zen.errors import GitError


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return make_repo(tmp_path / "repo", {"README.md": "# r\n", "src/a.py": "a = 1\n", ".gitignore": "*.log\n"})


def test_a_worktree_is_added_on_a_new_branch_with_zens_private_dirs(repo: Path, tmp_path: Path) -> None:
    wt = tmp_path / "wts" / "j1"
    base = zgit.add_worktree(repo, wt, "zen/j1", "main")
    assert base == git(repo, "rev-parse", "main")
    assert git(wt, "symbolic-ref", "HEAD") == "refs/heads/zen/j1" and git(wt, "rev-parse", "HEAD") == base
    assert (wt / "src" / "a.py").read_text() == "a = 1\n"
    for name in zgit.ZEN_PATHS:
        assert (wt / name / ".gitignore").exists()
    assert git(wt, "status", "--porcelain") == ""  # zen's dirs do not show up as the agent's work
    assert str(wt) in git(repo, "worktree", "list")


def test_adding_again_after_a_restart_keeps_the_worktree(repo: Path, tmp_path: Path) -> None:
    wt = tmp_path / "wt"
    base = zgit.add_worktree(repo, wt, "zen/j1", "main")
    (wt / "work.txt").write_text("the agent's\n")
    (repo / "CHANGELOG.md").write_text("- moved on\n")
    git(repo, "commit", "-qam", "main moves on")
    assert zgit.add_worktree(repo, wt, "zen/j1", "main") == base  # where the branch started
    assert (wt / "work.txt").read_text() == "the agent's\n"


def test_a_branch_left_without_its_worktree_gets_it_if_it_holds_nothing(repo: Path, tmp_path: Path) -> None:
    """A start cut short between git making the branch and its worktree (found by the kill -9
    loop of issue 15): the next start makes the worktree on that branch; a branch with commits
    of its own is never taken over."""
    base = git(repo, "rev-parse", "main")
    git(repo, "branch", "zen/cut", base)
    assert zgit.add_worktree(repo, tmp_path / "cut", "zen/cut", "main") == base
    assert git(tmp_path / "cut", "symbolic-ref", "HEAD") == "refs/heads/zen/cut"
    git(repo, "branch", "zen/owned", base)
    (repo / "own.txt").write_text("own\n")
    git(repo, "add", "own.txt")
    git(repo, "commit", "-qm", "own work")
    git(repo, "branch", "-f", "zen/owned", "HEAD")
    git(repo, "reset", "-q", "--hard", base)
    with pytest.raises(GitError, match="branch zen/owned already exists"):
        zgit.add_worktree(repo, tmp_path / "owned", "zen/owned", "main")


def test_what_is_in_the_way_of_a_worktree_is_a_sentence(repo: Path, tmp_path: Path) -> None:
    zgit.add_worktree(repo, tmp_path / "wt", "zen/j1", "main")
    with pytest.raises(GitError, match="does not resolve to a commit"):
        zgit.add_worktree(repo, tmp_path / "wt2", "zen/j2", "no-such-branch")
    with pytest.raises(GitError, match="branch zen/j1 already exists"):
        zgit.add_worktree(repo, tmp_path / "wt3", "zen/j1", "main")
    with pytest.raises(GitError, match="on another branch"):
        zgit.add_worktree(repo, tmp_path / "wt", "zen/j4", "main")
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "x").write_text("x")
    with pytest.raises(GitError, match="exists and is not empty"):
        zgit.add_worktree(repo, tmp_path / "full", "zen/j5", "main")
    with pytest.raises(GitError, match="not a git repository"):
        zgit.add_worktree(tmp_path / "full", tmp_path / "wt6", "zen/j6", "main")
    assert git(repo, "branch", "--list", "zen/j2", "zen/j4", "zen/j5", "zen/j6") == ""  # nothing half-made


def test_a_worktree_is_removed_only_once_its_work_is_on_a_review_branch(repo: Path, tmp_path: Path) -> None:
    wt = tmp_path / "wt"
    base = zgit.add_worktree(repo, wt, "zen/j1", "main")
    (wt / "new.txt").write_text("work\n")
    with pytest.raises(GitError, match="not on a review branch"):
        zgit.remove_worktree(repo, wt, None, base)
    assert (wt / "new.txt").exists()
    snap = zgit.snapshot_commit(wt, "snapshot")
    zgit.set_branch(wt, "zen/review/j1", snap.commit, "test")
    zgit.remove_worktree(repo, wt, "zen/review/j1", base)
    assert not wt.exists() and str(wt) not in git(repo, "worktree", "list")
    assert git(repo, "show", "zen/review/j1:new.txt") == "work"  # the branches stay
    zgit.remove_worktree(repo, wt, "zen/review/j1", base)  # gone already: prunes, no error


def test_the_scratch_index_commit_holds_the_work_and_touches_nothing(repo: Path, tmp_path: Path) -> None:
    wt = tmp_path / "wt"
    zgit.add_worktree(repo, wt, "zen/j1", "main")
    head = git(wt, "rev-parse", "HEAD")
    (wt / "src" / "a.py").write_text("a = 2\n")               # tracked, changed, not staged
    (wt / "src" / "b.py").write_text("b = 1\n")               # untracked
    (wt / "build.log").write_text("ignored\n")                # ignored by the repo
    (wt / ".zen" / "state").write_text("zen's own\n")         # zen's private dir
    (wt / "README.md").unlink()                               # deleted
    git(wt, "add", "src/b.py")                                # the agent staged one file itself
    index = Path(git(wt, "rev-parse", "--path-format=absolute", "--git-path", "index"))
    index_bytes, status = index.read_bytes(), git(wt, "status", "--porcelain")

    snap = zgit.snapshot_commit(wt, "zen snapshot of j1")
    assert snap.snapshot and snap.head == head and snap.commit != head
    assert git(wt, "rev-parse", f"{snap.commit}^") == head
    assert git(wt, "log", "-1", "--format=%an <%ae>|%s", snap.commit) == "zen <zen@localhost>|zen snapshot of j1"
    files = set(git(wt, "ls-tree", "-r", "--name-only", snap.commit).splitlines())
    assert files == {".gitignore", "CHANGELOG.md", "src/a.py", "src/b.py"}
    assert git(wt, "show", f"{snap.commit}:src/a.py") == "a = 2"
    # the agent's HEAD, index and status are as they were
    assert git(wt, "rev-parse", "HEAD") == head
    assert index.read_bytes() == index_bytes and git(wt, "status", "--porcelain") == status

    again = zgit.snapshot_commit(wt, "zen snapshot of j1", reuse=snap.commit)
    assert again.commit == snap.commit  # harvesting twice changes nothing
    git(wt, "add", "-A")
    git(wt, "commit", "-qm", "the agent commits it all")
    clean = zgit.snapshot_commit(wt, "zen snapshot of j1")
    assert not clean.snapshot and clean.commit == git(wt, "rev-parse", "HEAD")


def test_merge_tree_predicts_a_clean_merge_and_a_conflict_without_moving_anything(
        repo: Path, tmp_path: Path) -> None:
    wt = tmp_path / "wt"
    zgit.add_worktree(repo, wt, "zen/j1", "main")
    (wt / "src" / "a.py").write_text("a = 'agent'\n")
    (wt / "other.txt").write_text("agent's file\n")
    tip = zgit.snapshot_commit(wt, "s").commit
    main_before = git(repo, "rev-parse", "main")
    assert zgit.merge_check(wt, main_before, tip) == (True, [])

    (repo / "src" / "a.py").write_text("a = 'main'\n")
    git(repo, "commit", "-qam", "main edits the same line")
    onto = git(repo, "rev-parse", "main")
    assert zgit.merge_check(wt, onto, tip) == (False, ["src/a.py"])
    assert git(repo, "rev-parse", "main") == onto and git(repo, "status", "--porcelain") == ""
    assert (wt / "src" / "a.py").read_text() == "a = 'agent'\n"
    with pytest.raises(GitError, match="could not check whether the work merges"):
        zgit.merge_check(wt, "0" * 40, tip)


def test_reports_of_a_range(repo: Path, tmp_path: Path) -> None:
    wt = tmp_path / "wt"
    base = zgit.add_worktree(repo, wt, "zen/j1", "main")
    (wt / "src" / "a.py").write_text("a = 1\nb = 2\n")
    git(wt, "commit", "-qam", "two lines\n\nwith a body")
    (wt / "README.md").write_text("")
    git(wt, "commit", "-qam", "empty readme")
    tip = git(wt, "rev-parse", "HEAD")
    rows = zgit.commits_between(wt, base, tip)
    assert [(r["author"], r["subject"]) for r in rows] == [("zen test", "two lines"), ("zen test", "empty readme")]
    assert rows[-1]["sha"] == tip
    files, ins, dels, stat = zgit.diff_numbers(wt, base, tip)
    assert (files, ins, dels) == (2, 1, 1) and "README.md" in stat
    assert "src/a.py" in (zgit.files_at(wt, tip) or []) and zgit.files_at(tmp_path, "HEAD") is None
    assert zgit.files_at(wt, "no-such-commit") is None
    short, subject = (zgit.recent_commits(wt, tip, 1) or "").split(" ", 1)
    assert tip.startswith(short) and subject == "empty readme"
    assert zgit.rev(wt, "HEAD") == tip and zgit.rev(wt, "nope") is None and zgit.rev(tmp_path, "HEAD") is None
    assert zgit.is_ancestor(wt, base, tip) and not zgit.is_ancestor(wt, tip, base)


def test_a_git_environment_inherited_from_a_hook_does_not_redirect_zen(
        repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    other = make_repo(tmp_path / "other")
    other_index = other / ".git" / "index"
    before = other_index.read_bytes()
    # as when a git hook of `other` runs zen
    monkeypatch.setenv("GIT_DIR", str(other / ".git"))
    monkeypatch.setenv("GIT_INDEX_FILE", str(other_index))
    monkeypatch.setenv("GIT_WORK_TREE", str(other))
    wt = tmp_path / "wt"
    zgit.add_worktree(repo, wt, "zen/j1", "main")
    (wt / "mine.txt").write_text("mine\n")
    snap = zgit.snapshot_commit(wt, "s")
    assert "mine.txt" in git(repo, "ls-tree", "-r", "--name-only", snap.commit)
    assert other_index.read_bytes() == before and "zen/j1" not in git(other, "branch", "--list")
    assert git_probe.toplevel(wt) == wt.resolve() and git_probe.is_repo(repo)


def _children() -> set[int]:
    me = os.getpid()
    kids = set()
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == me and fields[0] != "Z":
            kids.add(int(stat.parent.name))
    return kids


def test_many_operations_leave_no_open_files_or_processes_behind(repo: Path, tmp_path: Path) -> None:
    """GitPython leaks when Repo objects stay open; the adapter opens one per operation and
    closes it. A supervisor runs for days: count what is open before and after."""
    wt = tmp_path / "wt"
    base = zgit.add_worktree(repo, wt, "zen/j1", "main")

    def round_trip(i: int) -> None:
        (wt / "f.txt").write_text(f"{i}\n")
        snap = zgit.snapshot_commit(wt, f"s{i}")
        zgit.set_branch(wt, "zen/review/j1", snap.commit, "test")
        zgit.commits_between(wt, base, snap.commit)
        zgit.diff_numbers(wt, base, snap.commit)
        zgit.merge_check(wt, base, snap.commit)
        zgit.has_unharvested_work(wt, "zen/review/j1", base)
        zgit.rev(repo, "main")
        zgit.files_at(wt, "HEAD")

    round_trip(0)  # GitPython's own one-time state (e.g. the git version) is not a leak
    fds, kids = set(os.listdir("/proc/self/fd")), _children()
    for i in range(1, 40):
        round_trip(i)
    assert set(os.listdir("/proc/self/fd")) <= fds
    assert _children() <= kids


def test_without_git_the_adapter_says_so_in_a_sentence(repo: Path, tmp_path: Path) -> None:
    # (a plain branch name is read from the ref files; its parent takes git itself)
    code = f"from zen.adapters import git\ngit.rev(__import__('pathlib').Path({str(repo)!r}), 'main~0')\n"
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO_ROOT,
                       env={**os.environ, "PATH": str(tmp_path / "nothing")})
    assert r.returncode == 1 and "git is not installed or not on PATH" in r.stderr
    assert "ImportError" not in r.stderr


def test_a_base_resolves_to_the_commit_git_itself_names(repo: Path, tmp_path: Path) -> None:
    """zen reads a branch's tip from the ref files (no git process per spawn) only where the name
    can mean nothing else; every other name is git's to resolve, and all agree with git."""
    main = git(repo, "rev-parse", "main")
    (repo / "b.txt").write_text("b\n")
    git(repo, "add", "b.txt")
    git(repo, "commit", "-qm", "on a side branch")
    side = git(repo, "rev-parse", "HEAD")
    git(repo, "branch", "-q", "side", side)
    git(repo, "reset", "-q", "--hard", main)
    git(repo, "tag", "side-tag", side)
    git(repo, "tag", "-a", "-m", "annotated", "ann", side)
    git(repo, "branch", "-q", "dup", main)
    git(repo, "tag", "dup", side)             # a tag and a branch of one name: git takes the tag
    git(repo, "branch", "-q", "team/feature", side)
    names = ["main", "side", "refs/heads/side", "side-tag", "ann", "dup", "team/feature", "HEAD", "HEAD~0",
             main, main[:10], "main^", "nope", "refs/heads/nope", "-x", "a..b", "side.lock"]
    for packed in (False, True):
        if packed:
            git(repo, "pack-refs", "--all")   # the refs now live in packed-refs only
            assert not (repo / ".git" / "refs" / "heads" / "side").exists()
        for name in names:
            r = subprocess.run(["git", "-C", str(repo), "rev-parse", "--verify", "--quiet", f"{name}^{{commit}}"],
                               capture_output=True, text=True)
            expected = r.stdout.strip() if r.returncode == 0 else None
            assert zgit.rev(repo, name) == expected, (name, packed)
    wt = tmp_path / "wt"
    assert zgit.add_worktree(repo, wt, "zen/j9", "dup") == side
    assert zgit.rev(wt, "side") == side and zgit.rev(wt, "main") == main   # from a worktree too

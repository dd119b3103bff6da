"""The git adapter's plumbing on real repositories in tmp_path: what harvest, land, the remote
handoff and the file browser ask of git, read back with the git binary, and the sentence a
failure becomes."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.helpers import git, make_repo
from zen.adapters import git as zgit
from zen.errors import GitError


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return make_repo(tmp_path / "repo", {"README.md": "# r\n", "src/a.py": "a = 1\n", ".gitignore": "*.log\n"})


def commit_file(where: Path, name: str, text: str, message: str) -> str:
    f = where / name
    f.parent.mkdir(parents=True, exist_ok=True)
    f.write_text(text)
    git(where, "add", "--", name)
    git(where, "commit", "-qm", message)
    return git(where, "rev-parse", "HEAD")


def one_line_error(exc: pytest.ExceptionInfo[GitError]) -> str:
    text = str(exc.value)
    assert "\n" not in text and "Traceback" not in text, text
    return text


# -- errors ------------------------------------------------------------------------------------

def test_a_failed_command_is_one_sentence_naming_what_was_tried_and_gits_reason(repo: Path) -> None:
    with pytest.raises(GitError) as exc:
        zgit.out(repo, "cat-file", "-p", "no-such-object", what="read the object")
    text = one_line_error(exc)
    assert text.startswith(f"could not read the object in {repo}: ")
    assert "no-such-object" in text or "Not a valid object name" in text


def test_without_what_the_error_names_the_git_command(repo: Path) -> None:
    with pytest.raises(GitError, match=r"could not run git rev-parse in .*: ") as exc:
        zgit.out(repo, "rev-parse", "--verify", "nope^{commit}")
    one_line_error(exc)


def test_a_path_that_is_not_a_repository_is_said_so(tmp_path: Path) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    with pytest.raises(zgit.NotARepository, match="is not a git repository or worktree") as exc:
        zgit.out(plain, "status")
    one_line_error(exc)
    with pytest.raises(zgit.NotARepository):
        zgit.tree_of(tmp_path / "missing", "HEAD")
    with pytest.raises(GitError, match="has no HEAD commit"):
        zgit.snapshot_commit(plain, "s")


def test_tree_of_an_unknown_commit_names_it_short(repo: Path) -> None:
    with pytest.raises(GitError, match=r"could not read the tree of 0123456789ab in ") as exc:
        zgit.tree_of(repo, "0123456789abcdef0123456789abcdef01234567")
    one_line_error(exc)


# -- rev, trees, ancestry ------------------------------------------------------------------------

def test_tree_of_and_is_ancestor_agree_with_git(repo: Path) -> None:
    first = git(repo, "rev-parse", "HEAD~1")
    head = git(repo, "rev-parse", "HEAD")
    assert zgit.tree_of(repo, head) == git(repo, "rev-parse", "HEAD^{tree}")
    assert zgit.tree_of(repo, "main") == git(repo, "rev-parse", "main^{tree}")
    assert zgit.is_ancestor(repo, first, head) and zgit.is_ancestor(repo, head, head)
    assert not zgit.is_ancestor(repo, head, first)
    assert not zgit.is_ancestor(repo, "f" * 40, head)          # unknown commit: no ancestor


def test_rev_of_an_empty_repository_is_none(tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    git(empty, "init", "-q", "-b", "main")
    assert zgit.rev(empty, "HEAD") is None and zgit.rev(empty, "main") is None


def test_rev_follows_a_branch_moved_behind_its_back(repo: Path) -> None:
    assert zgit.rev(repo, "main") == git(repo, "rev-parse", "main")
    new = commit_file(repo, "n.txt", "n\n", "n")
    assert zgit.rev(repo, "main") == new                       # read fresh, never cached
    git(repo, "pack-refs", "--all")
    newer = commit_file(repo, "m.txt", "m\n", "m")             # loose ref over a packed one
    assert zgit.rev(repo, "main") == newer


# -- refs ----------------------------------------------------------------------------------------

def test_move_ref_is_a_compare_and_set(repo: Path) -> None:
    old = git(repo, "rev-parse", "HEAD~1")
    head = git(repo, "rev-parse", "HEAD")
    zgit.set_branch(repo, "target", old, "test: create")
    assert git(repo, "rev-parse", "refs/heads/target") == old
    assert not zgit.move_ref(repo, "refs/heads/target", head, head, "test: stale")   # it is not at head
    assert git(repo, "rev-parse", "refs/heads/target") == old
    assert zgit.move_ref(repo, "refs/heads/target", head, old, "test: cas")
    assert git(repo, "rev-parse", "refs/heads/target") == head
    assert git(repo, "reflog", "-1", "--format=%gs", "refs/heads/target") == "test: cas"


def test_keep_ref_holds_a_commit_outside_any_branch(repo: Path) -> None:
    dangling = git(repo, "commit-tree", git(repo, "rev-parse", "HEAD^{tree}"), "-m", "loose")
    zgit.keep_ref(repo, "refs/zen/kept/j1", dangling, "keep it")
    assert git(repo, "rev-parse", "refs/zen/kept/j1") == dangling
    assert git(repo, "branch", "--list") == "* main"      # no branch was made for it
    with pytest.raises(GitError, match=r"could not keep 000000000000 at refs/zen/kept/x") as exc:
        zgit.keep_ref(repo, "refs/zen/kept/x", "0" * 39 + "1", "bad")
    one_line_error(exc)


# -- snapshots -----------------------------------------------------------------------------------

def test_snapshot_tree_is_the_tree_git_add_all_would_commit(repo: Path, tmp_path: Path) -> None:
    wt = tmp_path / "wt"
    zgit.add_worktree(repo, wt, "zen/j1", "main")
    (wt / "ünïcødé name.txt").write_text("ü\n")
    (wt / "deep" / "er").mkdir(parents=True)
    (wt / "deep" / "er" / "x.bin").write_bytes(bytes(range(256)))
    (wt / "x.log").write_text("ignored\n")
    tree = zgit.snapshot_tree(wt)
    names = set(zgit.tree_paths(wt, tree))
    assert {"ünïcødé name.txt", "deep/er/x.bin", "README.md", "src/a.py"} <= names
    assert "x.log" not in names and not any(n.startswith(".zen") for n in names)
    # the same as staging everything in a copy of the repository
    git(wt, "add", "-A")
    assert git(wt, "write-tree") == tree


def test_a_snapshot_sees_a_same_size_edit_made_right_after_the_index(repo: Path, tmp_path: Path) -> None:
    """Racy git: the scratch index keeps the real index's mtime, so an edit that keeps the file's
    size in the same second is still seen."""
    wt = tmp_path / "wt"
    zgit.add_worktree(repo, wt, "zen/j1", "main")
    git(wt, "status", "--porcelain")                         # refresh the stat cache now
    (wt / "src" / "a.py").write_text("a = 9\n")              # the same size as "a = 1\n"
    tree = zgit.snapshot_tree(wt)
    assert git(wt, "cat-file", "-p", f"{tree}:src/a.py") == "a = 9"


def test_a_snapshot_of_a_worktree_without_an_index_starts_from_head(repo: Path, tmp_path: Path) -> None:
    wt = tmp_path / "wt"
    zgit.add_worktree(repo, wt, "zen/j1", "main")
    index = Path(git(wt, "rev-parse", "--path-format=absolute", "--git-path", "index"))
    index.unlink()
    (wt / "new.txt").write_text("new\n")
    tree = zgit.snapshot_tree(wt)
    assert set(zgit.tree_paths(wt, tree)) == {".gitignore", "CHANGELOG.md", "README.md", "src/a.py", "new.txt"}
    assert not index.exists()                                # the agent's (missing) index untouched


def test_a_snapshot_is_never_reused_across_a_new_agent_commit(repo: Path, tmp_path: Path) -> None:
    wt = tmp_path / "wt"
    zgit.add_worktree(repo, wt, "zen/j1", "main")
    (wt / "w.txt").write_text("w\n")
    first = zgit.snapshot_commit(wt, "s1")
    # the agent commits nothing but a message: the snapshot's tree is the same, its parent is not
    git(wt, "commit", "-q", "--allow-empty", "-m", "agent commit")
    head = git(wt, "rev-parse", "HEAD")
    second = zgit.snapshot_commit(wt, "s2", reuse=first.commit)
    assert second.commit != first.commit and second.head == head
    assert git(wt, "rev-parse", f"{second.commit}^") == head
    assert zgit.tree_of(wt, second.commit) == zgit.tree_of(wt, first.commit)
    # reused when it does sit on the head; a reuse that is no commit is ignored
    assert zgit.snapshot_commit(wt, "s3", reuse=second.commit).commit == second.commit
    assert zgit.snapshot_commit(wt, "s4", reuse="not-a-commit").commit not in (first.commit, "not-a-commit")


# -- what changed --------------------------------------------------------------------------------

def test_changed_files_lists_everything_that_differs_from_the_base(repo: Path, tmp_path: Path) -> None:
    wt = tmp_path / "wt"
    base = zgit.add_worktree(repo, wt, "zen/j1", "main")
    assert zgit.changed_files(wt, base) == []
    commit_file(wt, "committed.txt", "c\n", "c")
    (wt / "src" / "a.py").write_text("a = 2\n")              # modified, unstaged
    (wt / "staged.txt").write_text("s\n")
    git(wt, "add", "staged.txt")
    (wt / "README.md").unlink()                              # deleted
    (wt / "untracked dir").mkdir()
    (wt / "untracked dir" / "ñ.txt").write_text("u\n")
    (wt / "build.log").write_text("ignored\n")
    (wt / ".zen" / "private").write_text("zen's\n")
    assert zgit.changed_files(wt, base) == sorted(
        ["README.md", "committed.txt", "src/a.py", "staged.txt", "untracked dir/ñ.txt"])


def test_changed_files_against_an_unknown_base_is_an_error(repo: Path) -> None:
    with pytest.raises(GitError, match="could not list the files changed since the base") as exc:
        zgit.changed_files(repo, "f" * 40)
    one_line_error(exc)


def test_diff_numbers_counts_binary_files_without_lines(repo: Path) -> None:
    base = git(repo, "rev-parse", "HEAD")
    (repo / "img.bin").write_bytes(b"\x00\x01\x02" * 100)
    (repo / "src" / "a.py").write_text("a = 1\nb = 2\nc = 3\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "binary and text")
    files, ins, dels, stat = zgit.diff_numbers(repo, base, "HEAD")
    assert (files, ins, dels) == (2, 2, 0)
    assert "img.bin" in stat and "Bin" in stat
    assert zgit.diff_numbers(repo, "HEAD", "HEAD")[:3] == (0, 0, 0)


def test_commits_between_keeps_odd_subjects_whole(repo: Path) -> None:
    base = git(repo, "rev-parse", "HEAD")
    sha = commit_file(repo, "x.txt", "x\n", "fix: tabs\there, pipes | and ünicode ✓")
    rows = zgit.commits_between(repo, base, "HEAD")
    assert rows == [{"sha": sha, "author": "zen test", "subject": "fix: tabs\there, pipes | and ünicode ✓"}]
    assert zgit.commits_between(repo, "HEAD", "HEAD") == []
    with pytest.raises(GitError, match="could not list the job's commits"):
        zgit.commits_between(repo, "nope", "HEAD")


def test_recent_commits_and_files_at(repo: Path, tmp_path: Path) -> None:
    log = zgit.recent_commits(repo, "HEAD", 5)
    assert log is not None and [ln.split(" ", 1)[1] for ln in log.splitlines()] == ["add changelog", "initial commit"]
    assert zgit.recent_commits(repo, "nope", 1) is None and zgit.recent_commits(tmp_path, "HEAD", 1) is None
    assert sorted(zgit.files_at(repo, "HEAD~1") or []) == [".gitignore", "README.md", "src/a.py"]


def test_diff_objects_and_tree_paths(repo: Path) -> None:
    a, b = git(repo, "rev-parse", "HEAD~1"), git(repo, "rev-parse", "HEAD")
    assert zgit.diff_objects(repo, a, b, name_status=True).split() == ["A", "CHANGELOG.md"]
    assert "+- started" in zgit.diff_objects(repo, a, b)
    assert "1 file changed" in zgit.diff_objects(repo, a, b, stat=True)
    # trees work as well as commits
    ta, tb = zgit.tree_of(repo, a), zgit.tree_of(repo, b)
    assert zgit.diff_objects(repo, ta, tb, name_status=True).split() == ["A", "CHANGELOG.md"]
    assert zgit.tree_paths(repo, tb) == [".gitignore", "CHANGELOG.md", "README.md", "src/a.py"]
    with pytest.raises(GitError, match="could not compute the diff"):
        zgit.diff_objects(repo, a, "nope")
    with pytest.raises(GitError, match="could not list the files"):
        zgit.tree_paths(repo, "nope")


# -- landing -------------------------------------------------------------------------------------

def test_merge_tree_and_commit_tree_land_without_touching_the_checkout(repo: Path) -> None:
    base = git(repo, "rev-parse", "HEAD")
    git(repo, "checkout", "-q", "-b", "side")
    side = commit_file(repo, "side.txt", "side\n", "side")
    git(repo, "checkout", "-q", "main")
    main = commit_file(repo, "main.txt", "main\n", "main")
    tree, conflicts = zgit.merge_tree(repo, main, side)
    assert conflicts == [] and tree is not None
    assert set(zgit.tree_paths(repo, tree)) >= {"side.txt", "main.txt"}
    merged = zgit.commit_tree(repo, tree, [main, side], "land side")
    assert git(repo, "rev-parse", f"{merged}^1") == main and git(repo, "rev-parse", f"{merged}^2") == side
    assert git(repo, "log", "-1", "--format=%s", merged) == "land side"
    assert git(repo, "rev-parse", "HEAD") == main and git(repo, "status", "--porcelain") == ""
    assert zgit.is_ancestor(repo, base, merged)


def test_merge_tree_names_the_conflicting_paths(repo: Path) -> None:
    git(repo, "checkout", "-q", "-b", "side")
    side = commit_file(repo, "src/a.py", "a = 'side'\n", "side")
    git(repo, "checkout", "-q", "main")
    main = commit_file(repo, "src/a.py", "a = 'main'\n", "main")
    assert zgit.merge_tree(repo, main, side) == (None, ["src/a.py"])
    with pytest.raises(GitError, match=r"could not merge 000000000000 onto ") as exc:
        zgit.merge_tree(repo, main, "0" * 40)
    one_line_error(exc)


def test_commit_tree_without_a_git_identity_commits_as_zen(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    tree = git(repo, "rev-parse", "HEAD^{tree}")
    for var in ("GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_COMMITTER_NAME", "GIT_COMMITTER_EMAIL", "EMAIL"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", os.devnull)
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    git(repo, "config", "user.useConfigOnly", "true")       # no guessing from the host name
    sha = zgit.commit_tree(repo, tree, [], "orphan")
    assert git(repo, "log", "-1", "--format=%cn <%ce>", sha) == "zen <zen@localhost>"


def test_checked_out_in_lists_every_worktree_on_a_branch(repo: Path, tmp_path: Path) -> None:
    wt = tmp_path / "wt"
    zgit.add_worktree(repo, wt, "zen/j1", "main")
    assert zgit.checked_out_in(repo, "main") == [repo.resolve()]
    assert zgit.checked_out_in(repo, "zen/j1") == [wt.resolve()]
    assert zgit.checked_out_in(wt, "main") == [repo.resolve()]              # asked from the worktree
    assert zgit.checked_out_in(repo, "nobody") == []
    git(wt, "checkout", "-q", "--detach")
    assert zgit.checked_out_in(repo, "zen/j1") == []


def test_common_dir_of_a_worktree_is_the_main_git_dir(repo: Path, tmp_path: Path) -> None:
    wt = tmp_path / "wt"
    zgit.add_worktree(repo, wt, "zen/j1", "main")
    assert zgit.common_dir(wt) == (repo / ".git").resolve()
    assert zgit.common_dir(repo) == (repo / ".git").resolve()
    (tmp_path / "plain").mkdir()
    assert zgit.common_dir(tmp_path / "plain") is None


# -- unharvested work ------------------------------------------------------------------------------

def test_what_counts_as_unharvested_work(repo: Path, tmp_path: Path) -> None:
    wt = tmp_path / "wt"
    base = zgit.add_worktree(repo, wt, "zen/j1", "main")
    assert not zgit.has_unharvested_work(wt, None, base)           # fresh: nothing
    assert zgit.has_unharvested_work(wt, None, None)                # unknown base: assume work
    assert not zgit.has_unharvested_work(tmp_path / "gone", None, base)
    (wt / "build.log").write_text("ignored output\n")
    (wt / ".zen" / "x").write_text("zen's\n")
    assert not zgit.has_unharvested_work(wt, None, base)           # ignored and zen's own: not work
    (wt / "w.txt").write_text("w\n")
    assert zgit.has_unharvested_work(wt, None, base)
    snap = zgit.snapshot_commit(wt, "s")
    zgit.set_branch(wt, "zen/review/j1", snap.commit, "harvest")
    assert not zgit.has_unharvested_work(wt, "zen/review/j1", base)
    assert not zgit.has_unharvested_work(wt, "refs/heads/zen/review/j1", base)   # a full ref too
    (wt / "w.txt").write_text("changed after the harvest\n")
    assert zgit.has_unharvested_work(wt, "zen/review/j1", base)
    (wt / "w.txt").write_text("w\n")
    commit_file(wt, "c.txt", "c\n", "a commit the review branch lacks")
    assert zgit.has_unharvested_work(wt, "zen/review/j1", base)


def test_a_worktree_git_forgot_is_assumed_to_hold_work(repo: Path, tmp_path: Path) -> None:
    wt = tmp_path / "wt"
    base = zgit.add_worktree(repo, wt, "zen/j1", "main")
    (wt / ".git").unlink()                                     # the link to the repository is gone
    assert zgit.has_unharvested_work(wt, None, base)


# -- a shared remote -----------------------------------------------------------------------------

def test_push_fetch_and_remote_ok_through_a_bare_repository(repo: Path, tmp_path: Path) -> None:
    bare = tmp_path / "remote.git"
    zgit.init_bare(bare)
    assert git(bare, "rev-parse", "--is-bare-repository") == "true"
    assert zgit.remote_ok(repo, str(bare)) is None                  # empty is fine
    head = git(repo, "rev-parse", "HEAD")
    zgit.push(repo, str(bare), "main:refs/heads/main")
    assert git(bare, "rev-parse", "refs/heads/main") == head
    other = make_repo(tmp_path / "other")
    zgit.fetch(other, str(bare), "refs/heads/main:refs/remotes/r/main")
    assert git(other, "rev-parse", "refs/remotes/r/main") == head
    assert git(other, "tag", "--list") == ""
    reason = zgit.remote_ok(repo, str(tmp_path / "nowhere.git"))
    assert reason is not None and reason.startswith(f"git cannot read {tmp_path / 'nowhere.git'}")
    with pytest.raises(GitError, match=r"could not fetch refs/heads/x from ") as exc:
        zgit.fetch(other, str(bare), "refs/heads/x")
    one_line_error(exc)
    with pytest.raises(GitError, match=r"could not push nope:refs/heads/nope to "):
        zgit.push(repo, str(bare), "nope:refs/heads/nope")


def test_fresh_worktree_replaces_whatever_was_there(repo: Path, tmp_path: Path) -> None:
    first, head = git(repo, "rev-parse", "HEAD~1"), git(repo, "rev-parse", "HEAD")
    wt = tmp_path / "scratch"
    zgit.fresh_worktree(repo, wt, "zen/scratch", head)
    assert git(wt, "rev-parse", "HEAD") == head and (wt / ".zen" / ".gitignore").exists()
    (wt / "leftover.txt").write_text("pushed already\n")
    zgit.fresh_worktree(repo, wt, "zen/scratch", first)
    assert git(wt, "rev-parse", "HEAD") == first and not (wt / "leftover.txt").exists()
    assert git(wt, "symbolic-ref", "HEAD") == "refs/heads/zen/scratch"
    # a plain directory in the way is replaced too
    stray = tmp_path / "stray"
    stray.mkdir()
    (stray / "junk").write_text("x")
    zgit.fresh_worktree(repo, stray, "zen/stray", head)
    assert not (stray / "junk").exists() and git(stray, "rev-parse", "HEAD") == head


def test_reset_index_turns_a_snapshot_into_uncommitted_changes(repo: Path, tmp_path: Path) -> None:
    wt = tmp_path / "wt"
    base = zgit.add_worktree(repo, wt, "zen/j1", "main")
    (wt / "w.txt").write_text("w\n")
    snap = zgit.snapshot_commit(wt, "s")
    zgit.reset_index(wt, snap.commit)
    assert git(wt, "rev-parse", "HEAD") == snap.commit and git(wt, "status", "--porcelain") == ""
    zgit.reset_index(wt, base)
    assert git(wt, "rev-parse", "HEAD") == base and git(wt, "status", "--porcelain") == "?? w.txt"
    assert (wt / "w.txt").read_text() == "w\n"


def test_move_worktree_to_refuses_when_the_files_changed_since_the_last_turn(repo: Path, tmp_path: Path) -> None:
    wt = tmp_path / "wt"
    base = zgit.add_worktree(repo, wt, "zen/j1", "main")
    nxt = commit_file(repo, "next.txt", "next\n", "the next turn")
    zgit.move_worktree_to(wt, nxt, base)
    assert git(wt, "rev-parse", "HEAD") == nxt and (wt / "next.txt").read_text() == "next\n"
    (wt / "local.txt").write_text("made here\n")
    with pytest.raises(GitError, match=r"was changed since its last turn arrived") as exc:
        zgit.move_worktree_to(wt, base, nxt)
    one_line_error(exc)
    assert (wt / "local.txt").exists() and git(wt, "rev-parse", "HEAD") == nxt

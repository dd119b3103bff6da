"""The supervisor's git work, through GitPython: worktrees, snapshots of a live worktree, review
branches, merge checks, and what harvest and the handoff read from a repository.

Every operation opens its `Repo`, works and closes it (`with _open(path) as repo`): GitPython
documents that Repo objects kept open leak in long-running processes (persistent `git cat-file`
processes, memory maps), and the supervisor runs for days. GitPython finds the repository
in-process (its git dir, its worktree, its index); the work itself goes through its command
wrapper (`repo.git.<command>(..., env=...)`), exact about arguments and environment, which
harvest needs (a scratch GIT_INDEX_FILE, `merge-tree --write-tree`).

Nothing here touches a worktree's index, HEAD or files while building a snapshot: it stages into
a private temporary index, so an agent can keep working during a harvest. Failures become
GitError with a sentence a user can act on. Commands that must start fast ask their few
questions through zen/adapters/git_probe.py, which does not import GitPython.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path

from zen.adapters.git_probe import INHERITED_GIT_VARS, safe_config
from zen.errors import GitError, NotARepository
from zen.store.layout import WORKTREE_PRIVATE, WORKTREE_TMP, user_umask

# GitPython refuses to be imported when no git binary is on PATH; zen says so in a sentence at the
# first git call instead (GitCommandNotFound below), so this must precede the import.
os.environ.setdefault("GIT_PYTHON_REFRESH", "quiet")
import git as gitpython
from git.exc import GitCommandNotFound, InvalidGitRepositoryError, NoSuchPathError
from git.refs.symbolic import SymbolicReference

# zen's own files inside a worktree: never harvested, never committed by zen
ZEN_PATHS = (WORKTREE_PRIVATE, WORKTREE_TMP)

# zen's snapshot commits carry a fixed identity, so harvest works on a machine with no git config
ZEN_IDENTITY = {
    "GIT_AUTHOR_NAME": "zen",
    "GIT_AUTHOR_EMAIL": "zen@localhost",
    "GIT_COMMITTER_NAME": "zen",
    "GIT_COMMITTER_EMAIL": "zen@localhost",
}


@contextmanager
def _open(path: Path) -> Iterator[gitpython.Repo]:
    """The repository whose top is `path`, for one operation; closed after it."""
    # GitPython's Repo and the git it runs read these from os.environ and cannot be told to ignore
    # them; set, they come from a git hook that ran zen and would aim zen at another repository
    for var in INHERITED_GIT_VARS:
        os.environ.pop(var, None)
    try:
        repo = gitpython.Repo(path)
    except (InvalidGitRepositoryError, NoSuchPathError):
        raise NotARepository(f"{path} is not a git repository or worktree (any more)") from None
    repo.git.update_environment(GIT_TERMINAL_PROMPT="0", **safe_config())   # no repository hook runs
    try:
        yield repo
    except GitCommandNotFound:
        raise GitError("git is not installed or not on PATH (install git, then retry)") from None
    finally:
        repo.close()


def _reason(status: int, stdout: str, stderr: str) -> str:
    detail = (stderr.strip() or stdout.strip()).splitlines()
    return detail[-1] if detail else f"exit code {status}"


def _call(repo: gitpython.Repo, command: str, *args: str, env: dict[str, str] | None = None,
          check: bool = True, what: str | None = None) -> tuple[int, str]:
    """`git COMMAND ARGS` through GitPython's command wrapper: (status, stdout). With `check`, a
    failure raises GitError naming `what` was tried."""
    run = getattr(repo.git, command.replace("-", "_"))  # repo.git.rev_parse runs `git rev-parse`
    status, stdout, stderr = run(*args, env=env, with_extended_output=True, with_exceptions=False)
    if check and status != 0:
        raise GitError(f"could not {what or 'run git ' + command} in {repo.working_dir}: "
                       f"{_reason(status, stdout, stderr)}")
    return status, stdout


def _out(repo: gitpython.Repo, command: str, *args: str, env: dict[str, str] | None = None,
         what: str | None = None) -> str:
    return _call(repo, command, *args, env=env, what=what)[1].strip()


def out(path: Path, *args: str, env: dict[str, str] | None = None, what: str | None = None) -> str:
    """`git ARGS` in the repository at `path`, its output stripped; GitError when it fails."""
    with _open(path) as repo:
        return _out(repo, *args, env=env, what=what)


_BRANCHY = re.compile(r"[A-Za-z0-9][A-Za-z0-9._/-]*")


def _ref_sha(repo: gitpython.Repo, name: str) -> str | None:
    """What the ref `name` (loose or packed) holds, read from the files; None when there is none."""
    try:
        return str(SymbolicReference.dereference_recursive(repo, name))
    except (ValueError, OSError):
        return None


def _branch_tip(repo: gitpython.Repo, ref: str) -> str | None:
    """A branch's tip read from the ref files in-process (a `git rev-parse` is a process, ~4 ms of
    every spawn), only when the name is sure to mean that branch: no ref git would take first
    (`<name>`, `refs/<name>`, `refs/tags/<name>`, git's own order) exists. None: ask git."""
    if not _BRANCHY.fullmatch(ref) or "HEAD" in ref or ".." in ref or ref.endswith((".lock", "/", ".")):
        return None
    if ref.startswith("refs/heads/"):
        return _ref_sha(repo, ref)
    if any(_ref_sha(repo, first) is not None for first in (ref, f"refs/{ref}", f"refs/tags/{ref}")):
        return None
    return _ref_sha(repo, f"refs/heads/{ref}")


def _rev(repo: gitpython.Repo, ref: str) -> str | None:
    tip = _branch_tip(repo, ref)
    if tip is not None and re.fullmatch(r"[0-9a-f]{40}|[0-9a-f]{64}", tip):
        return tip   # a branch always names a commit
    status, stdout = _call(repo, "rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}", check=False)
    return (stdout.strip() or None) if status == 0 else None


def rev(path: Path, ref: str) -> str | None:
    """The commit `ref` names in the repository at `path`, or None (also when there is none)."""
    try:
        with _open(path) as repo:
            return _rev(repo, ref)
    except NotARepository:
        return None


def _tree_of(repo: gitpython.Repo, commit: str) -> str:
    return _out(repo, "rev-parse", f"{commit}^{{tree}}", what=f"read the tree of {commit[:12]}")


def tree_of(path: Path, commit: str) -> str:
    with _open(path) as repo:
        return _tree_of(repo, commit)


def _is_ancestor(repo: gitpython.Repo, a: str, b: str) -> bool:
    # exit 1 is "no"; a commit git cannot find is no ancestor either
    return _call(repo, "merge-base", "--is-ancestor", a, b, check=False)[0] == 0


def is_ancestor(path: Path, a: str, b: str) -> bool:
    with _open(path) as repo:
        return _is_ancestor(repo, a, b)


# -- worktrees ----------------------------------------------------------------------------------

def add_worktree(repo_path: Path, path: Path, branch: str, base: str) -> str:
    """Create worktree `path` on a new branch `branch` starting at `base`; return the base commit.

    Idempotent for a restart: when `path` already is that branch's worktree, it is kept and the
    commit the branch started from (its merge base with `base`) is returned. A new worktree costs
    two git processes (the base, then `worktree add`); the checks for what may be in the way run
    only when something is.
    """
    with _open(repo_path) as repo:
        base_commit = _rev(repo, base)
        if base_commit is None:
            raise GitError(f"base {base!r} does not resolve to a commit in {repo_path} "
                           "(check the lane's base branch)")
        if path.exists():
            existing = _worktrees(repo).get(path.resolve())
            if existing == f"refs/heads/{branch}":
                _, mb = _call(repo, "merge-base", branch, base_commit, check=False)
                return mb.strip() or base_commit
            if existing is not None:
                raise GitError(f"{path} is already a worktree of {repo_path} on another branch ({existing})")
            if any(path.iterdir()):
                raise GitError(f"{path} exists and is not empty; cannot create the job's worktree there")
        path.parent.mkdir(parents=True, exist_ok=True)
        with _users_umask():  # the checkout is the user's work, not zen's private record
            _add_worktree(repo, repo_path, path, branch, base_commit)
    for name in ZEN_PATHS:
        make_private_dir(path, name)
    return base_commit


@contextmanager
def _users_umask() -> Iterator[None]:
    """The user's umask (layout.user_umask) while git checks out a worktree (GitPython passes no
    umask to its processes), zen's private one again afterwards."""
    old = os.umask(user_umask())
    try:
        yield
    finally:
        os.umask(old)


def _add_worktree(repo: gitpython.Repo, repo_path: Path, path: Path, branch: str, base_commit: str) -> None:
    status, _ = _call(repo, "worktree", "add", "--quiet", "-b", branch, str(path), base_commit, check=False)
    if status != 0:
        tip = _rev(repo, f"refs/heads/{branch}")
        if tip is None:
            _out(repo, "worktree", "add", "--quiet", "-b", branch, str(path), base_commit,
                 what=f"create the worktree {path}")  # again, for git's own reason
        elif tip == base_commit and not path.exists() and f"refs/heads/{branch}" not in _worktrees(repo).values():
            # the branch was made and its worktree not (git failed between the two, or a
            # crash came there): it holds nothing and no worktree has it, so it gets this one
            _call(repo, "worktree", "prune", check=False)
            _out(repo, "worktree", "add", "--quiet", str(path), branch, what=f"create the worktree {path}")
        else:
            raise GitError(f"branch {branch} already exists in {repo_path}; "
                           "a worktree for it cannot be created again")


def make_private_dir(worktree: Path, name: str) -> Path:
    """<worktree>/<name>/ holding a `*` .gitignore: git (and so an agent's `git add -A`) skips it."""
    d = worktree / name
    d.mkdir(parents=True, exist_ok=True)
    ignore = d / ".gitignore"
    if not ignore.exists():
        ignore.write_text("# zen's private files: never part of the agent's work\n*\n")
    return d


def _worktrees(repo: gitpython.Repo) -> dict[Path, str | None]:
    """worktree path -> its branch ref (None when detached), as git lists them."""
    found: dict[Path, str | None] = {}
    current: Path | None = None
    for line in _out(repo, "worktree", "list", "--porcelain", what="list worktrees").splitlines():
        if line.startswith("worktree "):
            current = Path(line[len("worktree "):]).resolve()
            found[current] = None
        elif line.startswith("branch ") and current is not None:
            found[current] = line[len("branch "):]
    return found


def has_unharvested_work(worktree: Path, review_branch: str | None, base_commit: str | None = None) -> bool:
    """True when the worktree holds commits or files that `review_branch` does not have.

    Work = the worktree's HEAD and its files (untracked included, ignored and zen's own excluded).
    With no review branch yet, anything beyond `base_commit` is work (unknown base: assume work).
    """
    if not worktree.exists():
        return False
    try:
        with _open(worktree) as repo:
            head = _rev(repo, "HEAD")
            if head is None:
                return True
            snap_tree = _snapshot_tree(repo)
            full = review_branch if review_branch and review_branch.startswith("refs/") else f"refs/heads/{review_branch}"
            target = _rev(repo, full) if review_branch else None
            if target is None:
                if base_commit is None:
                    return True
                return head != base_commit or snap_tree != _tree_of(repo, head)
            return not _is_ancestor(repo, head, target) or snap_tree != _tree_of(repo, target)
    except NotARepository:  # a worktree git no longer knows: whatever is in it may be work
        return True


def keep_ref(repo_path: Path, ref: str, commit: str, message: str) -> None:
    """Point `ref` (a full ref name, not a branch) at `commit`, so git keeps it."""
    with _open(repo_path) as repo:
        _call(repo, "update-ref", "-m", message, ref, commit, what=f"keep {commit[:12]} at {ref}")


def remove_worktree(repo_path: Path, path: Path, review_branch: str | None = None,
                    base_commit: str | None = None) -> None:
    """Remove a job's worktree (its branches stay). Refuses while it holds unharvested work."""
    if not path.exists():
        with suppress(NotARepository), _open(repo_path) as repo:
            _call(repo, "worktree", "prune", check=False)
        return
    if has_unharvested_work(path, review_branch, base_commit):
        raise GitError(f"{path} holds work that is not on a review branch yet (zen harvest it first)")
    with _open(repo_path) as repo:
        # --force: zen's private dirs and ignored build output are untracked; the work itself is safe
        _call(repo, "worktree", "remove", "--force", str(path), what=f"remove the worktree {path}")


# -- snapshots ----------------------------------------------------------------------------------

def _snapshot_tree(repo: gitpython.Repo) -> str:
    # the worktree's own index: GitPython knows its git dir (a linked worktree has one of its own)
    git_index = Path(repo.git_dir) / "index"
    tmpdir = Path(tempfile.mkdtemp(prefix="zen-index-"))
    index = tmpdir / "index"
    env = {"GIT_INDEX_FILE": str(index)}
    try:
        try:
            # a copy keeps git's stat cache (fast on big trees); git replaces its index by rename,
            # so the copy is always a whole index. copy2 keeps the index's mtime: git trusts a
            # cached stat only for files older than the index, and a fresh mtime on the copy would
            # hide a same-size edit made in the second the index was written (racy git)
            shutil.copy2(git_index, index)
        except FileNotFoundError:
            _call(repo, "read-tree", "HEAD", env=env, what="read HEAD into a scratch index")
        _call(repo, "add", "--all", "--", ".", env=env, what="stage the worktree's files into a scratch index")
        # then drop zen's own dirs; not as :(exclude) pathspecs, which make `git add` fail when a
        # user's .gitignore already ignores them
        _call(repo, "rm", "-r", "-q", "--cached", "--ignore-unmatch", "--", *ZEN_PATHS, env=env,
              what="leave zen's own files out of the snapshot")
        return _out(repo, "write-tree", env=env, what="write the snapshot tree")
    finally:
        shutil.rmtree(tmpdir, ignore_errors=True)


def snapshot_tree(worktree: Path) -> str:
    """The tree of everything in the worktree (tracked changes + untracked, not ignored, not zen's),
    staged into a throwaway index so the agent's own index and files are never touched."""
    with _open(worktree) as repo:
        return _snapshot_tree(repo)


@dataclass(frozen=True)
class Snapshot:
    head: str          # the worktree's HEAD (the agent's last commit)
    commit: str        # what the review branch should point at: HEAD or zen's snapshot on top
    snapshot: bool     # True when zen added a commit for uncommitted files


def snapshot_commit(worktree: Path, message: str, reuse: str | None = None) -> Snapshot:
    """A commit holding the worktree's current state on top of its HEAD.

    No changes beyond HEAD: HEAD itself. `reuse` (the current review tip) is returned instead of a
    new commit when it already is exactly this snapshot, so harvesting twice changes nothing.
    """
    try:
        with _open(worktree) as repo:
            return _snapshot_commit(repo, message, reuse)
    except NotARepository:
        raise GitError(f"{worktree} has no HEAD commit (is it still a git worktree?)") from None


def _snapshot_commit(repo: gitpython.Repo, message: str, reuse: str | None) -> Snapshot:
    head = _rev(repo, "HEAD")
    if head is None:
        raise GitError(f"{repo.working_dir} has no HEAD commit (is it still a git worktree?)")
    tree = _snapshot_tree(repo)
    if tree == _tree_of(repo, head):
        return Snapshot(head, head, False)
    if reuse and _rev(repo, reuse) == reuse and _tree_of(repo, reuse) == tree:
        parents = _out(repo, "rev-list", "--parents", "-n", "1", reuse).split()[1:]
        if parents == [head]:
            return Snapshot(head, reuse, True)
    commit = _out(repo, "commit-tree", tree, "-p", head, "-m", message, env=ZEN_IDENTITY,
                  what="commit the snapshot")
    return Snapshot(head, commit, True)


def set_branch(path: Path, branch: str, commit: str, reason: str) -> None:
    """Point refs/heads/<branch> at `commit` (created if missing). Nothing is checked out."""
    with _open(path) as repo:
        _call(repo, "update-ref", "-m", reason, f"refs/heads/{branch}", commit, what=f"update {branch}")


# -- reports ------------------------------------------------------------------------------------

def commits_between(path: Path, base: str, tip: str) -> list[dict[str, str]]:
    """Commits in base..tip, oldest first: sha, author, subject."""
    with _open(path) as repo:
        text = _out(repo, "log", "--reverse", "--format=%H%x1f%an%x1f%s", f"{base}..{tip}",
                    what="list the job's commits")
    rows = []
    for line in text.splitlines():
        sha, author, subject = [*line.split("\x1f"), "", ""][:3]
        rows.append({"sha": sha, "author": author, "subject": subject})
    return rows


def diff_numbers(path: Path, base: str, tip: str) -> tuple[int, int, int, str]:
    """(files changed, insertions, deletions, diffstat text) of base..tip."""
    with _open(path) as repo:
        numstat = _out(repo, "diff", "--numstat", "--no-renames", base, tip, what="compute the diffstat")
        stat = _out(repo, "diff", "--stat=100", "--no-renames", base, tip, what="compute the diffstat")
    files = ins = dels = 0
    for line in numstat.splitlines():
        parts = line.split("\t")
        if len(parts) < 3:
            continue
        files += 1
        ins += int(parts[0]) if parts[0].isdigit() else 0  # "-" for binary files
        dels += int(parts[1]) if parts[1].isdigit() else 0
    return files, ins, dels, stat


def merge_check(path: Path, onto: str, tip: str) -> tuple[bool, list[str]]:
    """Whether `tip` merges cleanly onto commit `onto`, and the conflicting paths if not.

    `git merge-tree --write-tree` merges in the object store only: no working tree, index or ref
    moves (git >= 2.38).
    """
    with _open(path) as repo:
        status, stdout, stderr = repo.git.merge_tree(
            "--write-tree", "--name-only", "--no-messages", onto, tip,
            with_extended_output=True, with_exceptions=False)
    if status == 0:
        return True, []
    # a conflict prints the (conflicted) tree id first; git 2.39 also exits 1, printing nothing,
    # for a commit it cannot find
    if status == 1 and stdout.strip():
        lines = stdout.splitlines()[1:]
        return False, [ln for ln in lines if ln.strip()]
    detail = (stderr.strip() or "unknown error").splitlines()[-1]
    raise GitError(f"could not check whether the work merges onto {onto[:12]} in {path}: {detail}")


def files_at(path: Path, commit: str) -> list[str] | None:
    """The paths tracked in `commit` (None when it cannot tell)."""
    try:
        with _open(path) as repo:
            status, stdout = _call(repo, "ls-tree", "-r", "--name-only", commit, check=False)
    except NotARepository:
        return None
    return stdout.splitlines() if status == 0 else None


def recent_commits(path: Path, commit: str, count: int) -> str | None:
    """`git log --oneline` of the last `count` commits up to `commit`, or None when unreadable."""
    try:
        with _open(path) as repo:
            status, stdout = _call(repo, "log", "--oneline", "--no-decorate", f"-{count}", commit, check=False)
    except NotARepository:
        return None
    return stdout.strip() if status == 0 else None


# -- landing (zen land: a human's explicit request, DESIGN section 11) ---------------------------

def merge_tree(path: Path, onto: str, tip: str) -> tuple[str | None, list[str]]:
    """The tree of merging `tip` into `onto`, computed in the object store only (no working
    tree, index or ref moves): (tree, []) when clean, (None, conflicting paths) when not."""
    with _open(path) as repo:
        status, stdout, stderr = repo.git.merge_tree(
            "--write-tree", "--name-only", "--no-messages", onto, tip,
            with_extended_output=True, with_exceptions=False)
    lines = stdout.splitlines()
    if status == 0 and lines:
        return lines[0].strip(), []
    if status == 1 and lines:  # git 2.39 exits 1 with nothing printed for a commit it cannot find
        return None, [ln for ln in lines[1:] if ln.strip()]
    detail = (stderr.strip() or "unknown error").splitlines()[-1]
    raise GitError(f"could not merge {tip[:12]} onto {onto[:12]} in {path}: {detail}")


def commit_tree(path: Path, tree: str, parents: list[str], message: str) -> str:
    """A commit of `tree` with `parents`, by the user's git identity (zen's when none is set)."""
    with _open(path) as repo:
        has_identity = _call(repo, "var", "GIT_COMMITTER_IDENT", check=False)[0] == 0
        args = [tree]
        for p in parents:
            args += ["-p", p]
        return _out(repo, "commit-tree", *args, "-m", message, env=None if has_identity else ZEN_IDENTITY,
                    what="write the merge commit")


def move_ref(path: Path, ref: str, new: str, old: str, reason: str) -> bool:
    """Compare-and-set: point `ref` at `new` only if it still points at `old`. False if it moved."""
    with _open(path) as repo:
        return _call(repo, "update-ref", "-m", reason, ref, new, old, check=False)[0] == 0


def delete_ref(path: Path, ref: str, old: str) -> bool:
    """Compare-and-delete: remove `ref` only if it still points at `old`. False if it moved."""
    with _open(path) as repo:
        return _call(repo, "update-ref", "-d", ref, old, check=False)[0] == 0


def checked_out_in(path: Path, branch: str) -> list[Path]:
    """Worktrees of the repository at `path` (its main checkout included) that have `branch`
    checked out."""
    ref = f"refs/heads/{branch}"
    with _open(path) as repo:
        return [p for p, head in _worktrees(repo).items() if head == ref]


def changed_files(worktree: Path, base: str) -> list[str]:
    """Paths of the worktree that differ from commit `base` right now: committed, staged or not,
    deleted, and untracked files git does not ignore (zen's own dirs left out). Sorted."""
    with _open(worktree) as repo:
        tracked = _call(repo, "diff", "--name-only", "--no-renames", "-z", base, "--",
                        what="list the files changed since the base")[1]
        untracked = _call(repo, "ls-files", "--others", "--exclude-standard", "-z",
                          what="list the untracked files")[1]
    names = {n for n in (tracked + "\0" + untracked).split("\0") if n}
    return sorted(n for n in names if n.split("/", 1)[0] not in ZEN_PATHS)


def common_dir(path: Path) -> Path | None:
    """The git directory a worktree shares with its main checkout (`<repo>/.git`), or None."""
    # one plumbing question, asked of git itself: no Repo to open for it
    r = subprocess.run(["git", "-C", str(path), "rev-parse", "--path-format=absolute", "--git-common-dir"],
                       capture_output=True, text=True, stdin=subprocess.DEVNULL, check=False)
    return Path(r.stdout.strip()) if r.returncode == 0 and r.stdout.strip() else None


# -- the dashboard's file browser (zen serve) -----------------------------------------------------

def diff_objects(repo: Path, a: str, b: str, *, name_status: bool = False, stat: bool = False) -> str:
    """`git diff A B` between two commits or trees (no working tree involved)."""
    args = ["diff", "--no-color", "--no-renames", "--no-ext-diff"]
    if name_status:
        args.append("--name-status")
    elif stat:
        args.append("--stat=100")
    with _open(repo) as r:
        return _call(r, *args, a, b, what="compute the diff")[1]


def tree_paths(repo: Path, tree: str) -> list[str]:
    """Every file path in a tree, sorted."""
    listing = out(repo, "ls-tree", "-r", "-z", "--name-only", tree, what="list the files")
    return sorted(p for p in listing.split("\0") if p)


# -- a shared remote (DESIGN 14: turns on other machines) ---------------------------------------

def init_bare(path: Path) -> None:
    """An empty bare repository at `path` (a worker node's cache of a lane's remote)."""
    path.mkdir(parents=True, exist_ok=True)
    try:
        gitpython.Repo.init(path, bare=True).close()
    except GitCommandNotFound:
        raise GitError("git is not installed or not on PATH (install git, then retry)") from None


def fetch(path: Path, remote: str, *refspecs: str) -> None:
    """`git fetch REMOTE REFSPEC...` into the repository at `path` (no tags, nothing else)."""
    with _open(path) as repo:
        _call(repo, "fetch", "--quiet", "--no-tags", "--no-write-fetch-head", remote, *refspecs,
              what=f"fetch {' '.join(refspecs)} from {remote}")


def push(path: Path, remote: str, *refspecs: str) -> None:
    """`git push REMOTE REFSPEC...` from the repository at `path`."""
    with _open(path) as repo:
        _call(repo, "push", "--quiet", "--no-verify", remote, *refspecs,
              what=f"push {' '.join(refspecs)} to {remote}")


def remote_ok(path: Path, remote: str) -> str | None:
    """Why `remote` cannot be read from `path` (a sentence), or None when `git ls-remote` works."""
    with _open(path) as repo:
        status, _ = _call(repo, "ls-remote", "--quiet", "--exit-code", remote, "HEAD", check=False)
    # 2: it answered but has no HEAD (an empty bare repository is fine)
    return None if status in (0, 2) else f"git cannot read {remote} (git ls-remote exited {status})"


def fresh_worktree(repo_path: Path, path: Path, branch: str | None, commit: str) -> None:
    """A worktree at `path` on `branch` (created or reset to `commit`; None: `commit` detached),
    replacing whatever worktree was there: for scratch trees only (a worker node's, whose work was
    pushed already; zen check's throwaway tree, which holds no one's work)."""
    drop_scratch_worktree(repo_path, path)
    path.parent.mkdir(parents=True, exist_ok=True)
    where = ["-B", branch] if branch else ["--detach"]
    with _open(repo_path) as repo:
        _out(repo, "worktree", "add", "--quiet", "--force", *where, str(path), commit,
             what=f"create the worktree {path}")
    for name in ZEN_PATHS if branch else ():
        make_private_dir(path, name)


def drop_scratch_worktree(repo_path: Path, path: Path) -> None:
    """Remove a scratch tree made by fresh_worktree."""
    with _open(repo_path) as repo:
        if path.exists():
            _call(repo, "worktree", "remove", "--force", str(path), check=False)
            shutil.rmtree(path, ignore_errors=True)
        _call(repo, "worktree", "prune", check=False)


def reset_index(worktree: Path, commit: str) -> None:
    """Point the worktree's branch and index at `commit`, its files untouched (`reset --mixed`):
    a snapshot's files become the uncommitted changes on top of the agent's own last commit."""
    with _open(worktree) as repo:
        _call(repo, "reset", "--quiet", "--mixed", commit, what=f"reset the index to {commit[:12]}")


def move_worktree_to(worktree: Path, commit: str, expect: str) -> None:
    """Move the worktree's branch, index and files to `commit`: the supervisor's copy of a remote
    job, whose content must still be exactly the tree of `expect` (the last turn it received),
    else it refuses: something here changed it, and moving on would lose that."""
    with _open(worktree) as repo:
        if _snapshot_tree(repo) != _tree_of(repo, expect):
            raise GitError(f"{worktree} was changed since its last turn arrived ({expect[:12]}); "
                           "zen harvest it, then move it on by hand")
        _call(repo, "reset", "--quiet", "--hard", commit, what=f"move the worktree to {commit[:12]}")

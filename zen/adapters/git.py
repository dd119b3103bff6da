"""The supervisor's git work: worktrees, snapshots of a live worktree, review branches, merge checks.

The plain `git` binary does the work: every operation here is one or two plumbing commands, and a
subprocess cannot leak the way a long-lived GitPython `Repo` does in a daemon. Stdlib only, so
the quick queries below serve `zen dispatch` and `zen lane add` too.

Nothing here touches a worktree's index, HEAD or files while building a snapshot: it stages into
a private temporary index (GIT_INDEX_FILE), so an agent can keep working during a harvest.
Failures become GitError with a sentence a user can act on.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from zen.errors import GitError
from zen.store.layout import WORKTREE_PRIVATE, WORKTREE_TMP

# zen's own files inside a worktree: never harvested, never committed by zen
ZEN_PATHS = (WORKTREE_PRIVATE, WORKTREE_TMP)

# zen's snapshot commits carry a fixed identity, so harvest works on a machine with no git config
ZEN_IDENTITY = {
    "GIT_AUTHOR_NAME": "zen",
    "GIT_AUTHOR_EMAIL": "zen@localhost",
    "GIT_COMMITTER_NAME": "zen",
    "GIT_COMMITTER_EMAIL": "zen@localhost",
}


def _env(extra: dict[str, str] | None = None) -> dict[str, str]:
    env = dict(os.environ)
    env["GIT_TERMINAL_PROMPT"] = "0"
    # a GIT_DIR/GIT_INDEX_FILE inherited from a hook would point every command at another repo
    for var in ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_COMMON_DIR"):
        env.pop(var, None)
    if extra:
        env.update(extra)
    return env


def git(repo: Path, *args: str, env: dict[str, str] | None = None, check: bool = True,
        what: str | None = None) -> subprocess.CompletedProcess[str]:
    """Run `git -C repo ARGS`; with `check`, a failure raises GitError naming `what` was tried."""
    try:
        r = subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True,
                           env=_env(env), stdin=subprocess.DEVNULL)
    except FileNotFoundError:
        raise GitError("git is not installed or not on PATH (install git, then retry)") from None
    if check and r.returncode != 0:
        detail = (r.stderr.strip() or r.stdout.strip()).splitlines()
        reason = detail[-1] if detail else f"exit code {r.returncode}"
        raise GitError(f"could not {what or 'run git ' + args[0]} in {repo}: {reason}")
    return r


def out(repo: Path, *args: str, **kw: object) -> str:
    return git(repo, *args, **kw).stdout.strip()  # type: ignore[arg-type]


def rev(repo: Path, ref: str) -> str | None:
    """The commit `ref` names, or None."""
    r = git(repo, "rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}", check=False)
    return r.stdout.strip() or None if r.returncode == 0 else None


def is_repo(path: Path) -> bool:
    return path.is_dir() and git(path, "rev-parse", "--git-dir", check=False).returncode == 0


def toplevel(path: Path) -> Path | None:
    r = git(path, "rev-parse", "--show-toplevel", check=False)
    return Path(r.stdout.strip()) if r.returncode == 0 else None


def resolve_commit(repo: Path, ref: str) -> str | None:
    r = git(repo, "rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}", check=False)
    return r.stdout.strip() if r.returncode == 0 and r.stdout.strip() else None


def current_branch(repo: Path) -> str | None:
    r = git(repo, "symbolic-ref", "--quiet", "--short", "HEAD", check=False)
    return r.stdout.strip() if r.returncode == 0 else None


def tree_of(repo: Path, commit: str) -> str:
    return out(repo, "rev-parse", f"{commit}^{{tree}}", what=f"read the tree of {commit[:12]}")


def is_ancestor(repo: Path, a: str, b: str) -> bool:
    return git(repo, "merge-base", "--is-ancestor", a, b, check=False).returncode == 0


# -- worktrees ----------------------------------------------------------------------------------

def add_worktree(repo: Path, path: Path, branch: str, base: str) -> str:
    """Create worktree `path` on a new branch `branch` starting at `base`; return the base commit.

    Idempotent for a restart: when `path` already is that branch's worktree, it is kept and the
    commit the branch started from (its merge base with `base`) is returned.
    """
    base_commit = rev(repo, base)
    if base_commit is None:
        raise GitError(f"base {base!r} does not resolve to a commit in {repo} (check the lane's base branch)")
    existing = _worktrees(repo).get(path.resolve())
    if existing is not None:
        if existing == f"refs/heads/{branch}":
            mb = git(repo, "merge-base", branch, base_commit, check=False).stdout.strip()
            return mb or base_commit
        raise GitError(f"{path} is already a worktree of {repo} on another branch ({existing})")
    if path.exists() and any(path.iterdir()):
        raise GitError(f"{path} exists and is not empty; cannot create the job's worktree there")
    if rev(repo, f"refs/heads/{branch}") is not None:
        raise GitError(f"branch {branch} already exists in {repo}; a worktree for it cannot be created again")
    path.parent.mkdir(parents=True, exist_ok=True)
    git(repo, "worktree", "add", "--quiet", "-b", branch, str(path), base_commit,
        what=f"create the worktree {path}")
    for name in ZEN_PATHS:
        make_private_dir(path, name)
    return base_commit


def make_private_dir(worktree: Path, name: str) -> Path:
    """<worktree>/<name>/ holding a `*` .gitignore: git (and so an agent's `git add -A`) skips it."""
    d = worktree / name
    d.mkdir(parents=True, exist_ok=True)
    ignore = d / ".gitignore"
    if not ignore.exists():
        ignore.write_text("# zen's private files: never part of the agent's work\n*\n")
    return d


def _worktrees(repo: Path) -> dict[Path, str | None]:
    """worktree path -> its branch ref (None when detached), as git lists them."""
    r = git(repo, "worktree", "list", "--porcelain", what="list worktrees")
    found: dict[Path, str | None] = {}
    current: Path | None = None
    for line in r.stdout.splitlines():
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
    head = rev(worktree, "HEAD")
    if head is None:
        return True
    snap_tree = snapshot_tree(worktree)
    target = rev(worktree, f"refs/heads/{review_branch}") if review_branch else None
    if target is None:
        if base_commit is None:
            return True
        return head != base_commit or snap_tree != tree_of(worktree, head)
    return not is_ancestor(worktree, head, target) or snap_tree != tree_of(worktree, target)


def remove_worktree(repo: Path, path: Path, review_branch: str | None = None,
                    base_commit: str | None = None) -> None:
    """Remove a job's worktree (its branches stay). Refuses while it holds unharvested work."""
    if not path.exists():
        git(repo, "worktree", "prune", check=False)
        return
    if has_unharvested_work(path, review_branch, base_commit):
        raise GitError(f"{path} holds work that is not on a review branch yet (zen harvest it first)")
    # --force: zen's private dirs and ignored build output are untracked; the work itself is safe
    git(repo, "worktree", "remove", "--force", str(path), what=f"remove the worktree {path}")


# -- snapshots ----------------------------------------------------------------------------------

def snapshot_tree(worktree: Path) -> str:
    """The tree of everything in the worktree (tracked changes + untracked, not ignored, not zen's),
    staged into a throwaway index so the agent's own index and files are never touched."""
    git_index = Path(out(worktree, "rev-parse", "--path-format=absolute", "--git-path", "index",
                         what="find the worktree's index"))
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
            git(worktree, "read-tree", "HEAD", env=env, what="read HEAD into a scratch index")
        git(worktree, "add", "--all", "--", ".", env=env, what="stage the worktree's files into a scratch index")
        # then drop zen's own dirs; not as :(exclude) pathspecs, which make `git add` fail when a
        # user's .gitignore already ignores them
        git(worktree, "rm", "-r", "-q", "--cached", "--ignore-unmatch", "--", *ZEN_PATHS, env=env,
            what="leave zen's own files out of the snapshot")
        return out(worktree, "write-tree", env=env, what="write the snapshot tree")
    finally:
        shutil.rmtree(tmpdir, ignore_errors=True)


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
    head = rev(worktree, "HEAD")
    if head is None:
        raise GitError(f"{worktree} has no HEAD commit (is it still a git worktree?)")
    tree = snapshot_tree(worktree)
    if tree == tree_of(worktree, head):
        return Snapshot(head, head, False)
    if reuse and rev(worktree, reuse) == reuse and tree_of(worktree, reuse) == tree:
        parents = out(worktree, "rev-list", "--parents", "-n", "1", reuse).split()[1:]
        if parents == [head]:
            return Snapshot(head, reuse, True)
    commit = out(worktree, "commit-tree", tree, "-p", head, "-m", message, env=ZEN_IDENTITY,
                 what="commit the snapshot")
    return Snapshot(head, commit, True)


def set_branch(repo: Path, branch: str, commit: str, reason: str) -> None:
    """Point refs/heads/<branch> at `commit` (created if missing). Nothing is checked out."""
    git(repo, "update-ref", "-m", reason, f"refs/heads/{branch}", commit, what=f"update {branch}")


# -- reports ------------------------------------------------------------------------------------

def commits_between(repo: Path, base: str, tip: str) -> list[dict[str, str]]:
    """Commits in base..tip, oldest first: sha, author, subject."""
    r = out(repo, "log", "--reverse", "--format=%H%x1f%an%x1f%s", f"{base}..{tip}",
            what="list the job's commits")
    rows = []
    for line in r.splitlines():
        sha, author, subject = [*line.split("\x1f"), "", ""][:3]
        rows.append({"sha": sha, "author": author, "subject": subject})
    return rows


def diff_numbers(repo: Path, base: str, tip: str) -> tuple[int, int, int, str]:
    """(files changed, insertions, deletions, diffstat text) of base..tip."""
    numstat = out(repo, "diff", "--numstat", "--no-renames", base, tip, what="compute the diffstat")
    files = ins = dels = 0
    for line in numstat.splitlines():
        parts = line.split("\t")
        if len(parts) < 3:
            continue
        files += 1
        ins += int(parts[0]) if parts[0].isdigit() else 0  # "-" for binary files
        dels += int(parts[1]) if parts[1].isdigit() else 0
    stat = out(repo, "diff", "--stat=100", "--no-renames", base, tip, what="compute the diffstat")
    return files, ins, dels, stat


def merge_check(repo: Path, onto: str, tip: str) -> tuple[bool, list[str]]:
    """Whether `tip` merges cleanly onto commit `onto`, and the conflicting paths if not.

    `git merge-tree --write-tree` merges in the object store only: no working tree, index or ref
    moves (git >= 2.38).
    """
    r = git(repo, "merge-tree", "--write-tree", "--name-only", "--no-messages", onto, tip, check=False)
    if r.returncode == 0:
        return True, []
    if r.returncode == 1:
        lines = r.stdout.splitlines()[1:]  # first line is the (conflicted) tree id
        return False, [ln for ln in lines if ln.strip()]
    detail = (r.stderr.strip() or "unknown error").splitlines()[-1]
    raise GitError(f"could not check whether the work merges onto {onto[:12]} in {repo}: {detail}")


# -- landing (zen land: a human's explicit request, DESIGN section 11) ---------------------------

def merge_tree(repo: Path, onto: str, tip: str) -> tuple[str | None, list[str]]:
    """The tree of merging `tip` into `onto`, computed in the object store only (no working
    tree, index or ref moves): (tree, []) when clean, (None, conflicting paths) when not."""
    r = git(repo, "merge-tree", "--write-tree", "--name-only", "--no-messages", onto, tip, check=False)
    lines = r.stdout.splitlines()
    if r.returncode == 0 and lines:
        return lines[0].strip(), []
    if r.returncode == 1:
        return None, [ln for ln in lines[1:] if ln.strip()]
    detail = (r.stderr.strip() or "unknown error").splitlines()[-1]
    raise GitError(f"could not merge {tip[:12]} onto {onto[:12]} in {repo}: {detail}")


def commit_tree(repo: Path, tree: str, parents: list[str], message: str) -> str:
    """A commit of `tree` with `parents`, by the user's git identity (zen's when none is set)."""
    env = None if git(repo, "var", "GIT_COMMITTER_IDENT", check=False).returncode == 0 else ZEN_IDENTITY
    args = ["commit-tree", tree]
    for p in parents:
        args += ["-p", p]
    return out(repo, *args, "-m", message, env=env, what="write the merge commit")


def move_ref(repo: Path, ref: str, new: str, old: str, reason: str) -> bool:
    """Compare-and-set: point `ref` at `new` only if it still points at `old`. False if it moved."""
    r = git(repo, "update-ref", "-m", reason, ref, new, old, check=False)
    return r.returncode == 0


def checked_out_in(repo: Path, branch: str) -> list[Path]:
    """Worktrees of `repo` (its main checkout included) that have `branch` checked out."""
    ref = f"refs/heads/{branch}"
    return [path for path, head in _worktrees(repo).items() if head == ref]


def changed_files(worktree: Path, base: str) -> list[str]:
    """Paths of the worktree that differ from commit `base` right now: committed, staged or not,
    deleted, and untracked files git does not ignore (zen's own dirs left out). Sorted."""
    tracked = git(worktree, "diff", "--name-only", "--no-renames", "-z", base, "--",
                  what="list the files changed since the base").stdout
    untracked = git(worktree, "ls-files", "--others", "--exclude-standard", "-z",
                    what="list the untracked files").stdout
    names = {n for n in (tracked + "\0" + untracked).split("\0") if n}
    return sorted(n for n in names if n.split("/", 1)[0] not in ZEN_PATHS)

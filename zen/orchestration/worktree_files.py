"""A job's worktree as the dashboard's file browser sees it: its files, its diff against the base
it started from, one file's text, and a human's save of one file (issue 17).

Nothing here touches the agent's index or HEAD: the listing and the diff come from a snapshot
tree built in a scratch index (zen.adapters.git.snapshot_tree, the harvest's own way), so they
show exactly what a harvest would take, untracked files included. A save is an atomic replace
of one file inside the worktree, refused for paths that leave it (`..`, symlinks), for git's and
zen's own directories, and when the file changed since the human loaded it (compare-and-set on
its sha256); it is recorded as `files.edited` with actor `human`.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

from zen.adapters import git as g
from zen.core.events import EventType as E
from zen.core.results import Result
from zen.errors import Conflict, NotFound, UsageError, ZenError
from zen.orchestration.query import resolve_job
from zen.store.atomic import atomic_write
from zen.store.home import Home
from zen.store.jobs import JobStore
from zen.store.layout import WORKTREE_PRIVATE, WORKTREE_TMP

MAX_READ = 2_000_000
MAX_DIFF = 1_000_000
_PRIVATE = {".git", WORKTREE_PRIVATE, WORKTREE_TMP}
_STATUS = {"M": "M", "A": "A", "D": "D", "T": "M"}


@dataclass(frozen=True)
class WorkFile(Result):
    path: str
    status: str          # "" unchanged, M modified, A added, D deleted (against the base)


@dataclass(frozen=True)
class Listing(Result):
    job: str
    worktree: Path
    base_commit: str | None
    files: list[WorkFile]


@dataclass(frozen=True)
class Diff(Result):
    job: str
    base_commit: str
    diff: str            # as `git diff` prints it, cut at MAX_DIFF
    stat: str


@dataclass(frozen=True)
class FileText(Result):
    job: str
    path: str
    content: str         # "" for a binary file
    sha: str             # sha256 of the bytes, for a compare-and-set save
    binary: bool


@dataclass(frozen=True)
class Saved(Result):
    job: str
    path: str
    sha: str
    seq: int             # the files.edited event
    created: bool


def _worktree(home: Home, ref: str) -> tuple[str, Path, str | None]:
    job_id = resolve_job(home, ref)
    snap = JobStore(home).snapshot(job_id)
    if not snap.worktree or not Path(snap.worktree).is_dir():
        raise NotFound(f"job {job_id} has no worktree (it is {snap.state.value})")
    return job_id, Path(snap.worktree), snap.base_commit


def safe_path(worktree: Path, rel: str) -> Path:
    """`rel` inside `worktree`, or ZenError: no absolute paths, no way out, not git's or zen's."""
    if not rel or rel.startswith("/") or "\0" in rel or "\\" in rel:
        raise UsageError(f"{rel!r} is not a path inside the worktree")
    parts = Path(rel).parts
    if any(p in ("..", "") for p in parts) or parts[0] in _PRIVATE:
        raise UsageError(f"{rel!r} is not a file of the job's work (no '..', not .git or zen's own files)")
    target = worktree / rel
    root = worktree.resolve()
    try:
        resolved = target.resolve()
    except (OSError, RuntimeError):
        raise UsageError(f"{rel!r} cannot be resolved inside the worktree") from None
    if not resolved.is_relative_to(root) or resolved == root:
        raise UsageError(f"{rel!r} leads out of the worktree")
    return target


def listing(home: Home, ref: str) -> Listing:
    """Every file the work holds now, each marked against the base: M, A, D, or ''."""
    job_id, wt, base = _worktree(home, ref)
    tree = g.snapshot_tree(wt)
    changed: dict[str, str] = {}
    if base:
        for line in g.diff_objects(wt, base, tree, name_status=True).splitlines():
            code, _, path = line.partition("\t")
            if path:
                changed[path] = _STATUS.get(code[:1], "M")
    paths = set(g.tree_paths(wt, tree)) | {p for p, c in changed.items() if c == "D"}
    return Listing(job_id, wt, base, [WorkFile(p, changed.get(p, "")) for p in sorted(paths)])


def diff(home: Home, ref: str) -> Diff:
    """The work against the base it started from, as `git diff` prints it."""
    job_id, wt, base = _worktree(home, ref)
    if not base:
        raise ZenError(f"job {job_id} has no recorded base commit to diff against")
    tree = g.snapshot_tree(wt)
    text = g.diff_objects(wt, base, tree)
    if len(text) > MAX_DIFF:
        text = text[:MAX_DIFF] + "\n[... the diff is longer; git diff shows all of it]\n"
    return Diff(job_id, base, text, g.diff_objects(wt, base, tree, stat=True))


def sha_of(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def read(home: Home, ref: str, rel: str) -> FileText:
    job_id, wt, _ = _worktree(home, ref)
    target = safe_path(wt, rel)
    if not target.is_file():
        raise NotFound(f"{rel} is not a file in job {job_id}'s worktree")
    size = target.stat().st_size
    if size > MAX_READ:
        raise ZenError(f"{rel} is {size // 1000} kB, more than the editor opens ({MAX_READ // 1000} kB)")
    data = target.read_bytes()
    binary = b"\0" in data[:8192]
    text = "" if binary else data.decode("utf-8", errors="replace")
    return FileText(job_id, rel, text, sha_of(data), binary)


def write(home: Home, ref: str, rel: str, content: str, *, expected_sha: str | None = None,
          actor: str = "human") -> Saved:
    """A human's save: the file replaced atomically, recorded as files.edited."""
    job_id, wt, _ = _worktree(home, ref)
    target = safe_path(wt, rel)
    data = content.encode()
    existed = target.exists()
    if existed and not target.is_file():
        raise ZenError(f"{rel} is not a regular file")
    if expected_sha is not None:
        current = sha_of(target.read_bytes()) if existed else ""
        if current != expected_sha:
            raise Conflict(f"{rel} changed since you opened it (the agent may have edited it); reload it first")
    mode = target.stat().st_mode & 0o777 if existed else None
    target.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(target, data, mode=mode)
    digest = sha_of(data)
    ev = JobStore(home).append(job_id, E.FILES_EDITED, actor=actor, op="write" if existed else "create",
                               paths=[rel], bytes=len(data), sha=digest)
    return Saved(job_id, rel, digest, ev["seq"], not existed)


__all__ = ["Diff", "FileText", "Listing", "Saved", "WorkFile", "diff", "listing", "read", "safe_path", "write"]


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

import contextlib
import errno
import hashlib
import os
import secrets
import stat
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from zen.adapters import git as g
from zen.core.events import EventType as E
from zen.core.results import Result
from zen.errors import Conflict, NotFound, UsageError, ZenError
from zen.orchestration.read.query import resolve_job
from zen.store.atomic import write_all
from zen.store.home import Home
from zen.store.jobs import JobStore
from zen.store.layout import WORKTREE_PRIVATE, WORKTREE_TMP, user_umask

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


# -- reads and saves, relative to a descriptor of the worktree (M13) ---------------------------------
# Every component is opened with O_NOFOLLOW from the descriptor of the folder before it, and the
# file is read, and its replacement written and renamed, relative to the last folder's descriptor:
# a symlink an agent swaps in mid-request can never lead a read or a save out of the worktree.
# A path that vanishes meanwhile is a 404 or a 409 with one sentence, never a 500 (L19).
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_FILE_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC


def _parts(worktree: Path, rel: str) -> list[str]:
    safe_path(worktree, rel)  # the same refusals as ever, with the same sentences
    return list(Path(rel).parts)


def _refused(rel: str, exc: OSError) -> ZenError:
    """One sentence for what went wrong on the way to `rel`."""
    if exc.errno in (errno.ELOOP, errno.ENOTDIR, errno.EMLINK):
        return UsageError(f"{rel!r} leads through a symbolic link or a non-folder; the editor follows none")
    if exc.errno == errno.ENOENT:
        return NotFound(f"{rel} is not in the worktree (it may have just been moved or deleted)")
    return ZenError(f"cannot use {rel} in the worktree: {exc.strerror or exc}")


@contextlib.contextmanager
def _folder(worktree: Path, folders: list[str], rel: str, *, create: bool = False) -> Iterator[int]:
    """A descriptor of the folder `folders` below the worktree, each step opened without following a
    symlink (made, with the user's umask, when `create`)."""
    try:
        fd = os.open(worktree, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except OSError as exc:
        raise NotFound(f"the worktree {worktree} is gone") from exc
    try:
        for name in folders:
            try:
                nxt = os.open(name, _DIR_FLAGS, dir_fd=fd)
            except FileNotFoundError:
                if not create:
                    raise
                with contextlib.suppress(FileExistsError):
                    os.mkdir(name, 0o700, dir_fd=fd)
                nxt = os.open(name, _DIR_FLAGS, dir_fd=fd)
                os.fchmod(nxt, 0o777 & ~user_umask())  # the user's work, not zen's private record
            os.close(fd)
            fd = nxt
        yield fd
    except OSError as exc:
        raise _refused(rel, exc) from None
    finally:
        os.close(fd)


def _read_at(dir_fd: int, name: str, rel: str, limit: int | None = None, *, data: bool = True) -> tuple[bytes, int]:
    """The bytes of regular file `name` in `dir_fd` (never through a symlink; none unless `data`)
    and its mode."""
    fd = os.open(name, _FILE_FLAGS, dir_fd=dir_fd)
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise ZenError(f"{rel} is not a regular file")
        if limit is not None and st.st_size > limit:
            raise ZenError(f"{rel} is {st.st_size // 1000} kB, more than the editor opens ({limit // 1000} kB)")
        if not data:
            return b"", stat.S_IMODE(st.st_mode)
        chunks = []
        while chunk := os.read(fd, 1 << 20):
            chunks.append(chunk)
        return b"".join(chunks), stat.S_IMODE(st.st_mode)
    finally:
        os.close(fd)


def read(home: Home, ref: str, rel: str) -> FileText:
    job_id, wt, _ = _worktree(home, ref)
    parts = _parts(wt, rel)
    with _folder(wt, parts[:-1], rel) as d:
        try:
            data, _ = _read_at(d, parts[-1], rel, MAX_READ)
        except FileNotFoundError:
            raise NotFound(f"{rel} is not a file in job {job_id}'s worktree") from None
        except OSError as exc:
            raise _refused(rel, exc) from None
    binary = b"\0" in data[:8192]
    text = "" if binary else data.decode("utf-8", errors="replace")
    return FileText(job_id, rel, text, sha_of(data), binary)


def write(home: Home, ref: str, rel: str, content: str, *, expected_sha: str | None = None,
          actor: str = "human") -> Saved:
    """A human's save: the file replaced atomically, recorded as files.edited."""
    job_id, wt, _ = _worktree(home, ref)
    parts = _parts(wt, rel)
    data = content.encode()
    name = parts[-1]
    with _folder(wt, parts[:-1], rel, create=True) as d:
        try:
            current, mode = _read_at(d, name, rel, data=expected_sha is not None)
            existed = True
        except FileNotFoundError:
            current, mode, existed = b"", 0o666 & ~user_umask(), False
        except OSError as exc:
            raise _refused(rel, exc) from None
        if expected_sha is not None and (sha_of(current) if existed else "") != expected_sha:
            raise Conflict(f"{rel} changed since you opened it (the agent may have edited it); reload it first")
        _replace_at(d, name, data, mode, rel)
    digest = sha_of(data)
    ev = JobStore(home).append(job_id, E.FILES_EDITED, actor=actor, op="write" if existed else "create",
                               paths=[rel], bytes=len(data), sha=digest)
    return Saved(job_id, rel, digest, ev["seq"], not existed)


def _replace_at(dir_fd: int, name: str, data: bytes, mode: int, rel: str) -> None:
    """temp + fsync + rename, all inside the folder `dir_fd`: readers see the old or the new file."""
    tmp = f".{name}.{secrets.token_hex(6)}"
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600, dir_fd=dir_fd)
    except OSError as exc:
        raise _refused(rel, exc) from None
    try:
        try:
            os.fchmod(fd, mode)
            write_all(fd, data)
            os.fsync(fd)
        finally:
            os.close(fd)
        os.rename(tmp, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
        os.fsync(dir_fd)
    except OSError as exc:
        with contextlib.suppress(OSError):
            os.unlink(tmp, dir_fd=dir_fd)
        if exc.errno in (errno.EISDIR, errno.ENOTDIR):
            raise Conflict(f"{rel} became a folder while it was being saved; nothing was written") from None
        raise _refused(rel, exc) from None


__all__ = ["Diff", "FileText", "Listing", "Saved", "WorkFile", "diff", "listing", "read", "safe_path", "write"]


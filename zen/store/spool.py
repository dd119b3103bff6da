"""The spool: Maildir-style intake (tmp -> new -> cur). The directory listing is the queue.

A task is written whole to spool/tmp, fsynced, then linked into spool/new under its id (a link
never clobbers, so two dispatchers that drew the same id cannot overwrite each other), and the
directory is fsynced. A crash at any point leaves either a complete task in spool/new or none.

Anything can be dropped into spool/new, so an entry is never trusted: it is claimed only if it is
a regular file (a symlink, FIFO or folder is set aside where it lies, never opened), claimed by
link + unlink (a name already in spool/cur is never overwritten), and read without following a
link or blocking, up to a size limit (`read_entry`). What cannot be used goes to spool/quarantine/
with a `<name>.reason` file beside it (`quarantine`).
"""

from __future__ import annotations

import contextlib
import os
import stat
from pathlib import Path

from zen.core.events import timestamp
from zen.errors import Rejected
from zen.store.atomic import atomic_write, fsync_dir, write_temp
from zen.store.faults import crash_point
from zen.store.layout import SPOOL_REASON_SUFFIX, Home

TYPE_CHECKING = False
if TYPE_CHECKING:  # the lean readers (zen status) list the spool without the task model
    from zen.core.model import Task


def new_dir(home: Home) -> Path:
    return home.spool_new


def cur_dir(home: Home) -> Path:
    return home.spool_cur


def publish(home: Home, task: Task, text: str) -> bool:
    """Publish a serialised task under its id. False if that id is already taken."""
    return publish_text(home, task.id, text)


def publish_text(home: Home, job_id: str, text: str) -> bool:
    """Publish the task file `text` under `job_id`. False if that id is already taken."""
    tmp = write_temp(home.spool_tmp, text.encode(), prefix=f"{job_id}.")
    try:
        os.link(tmp, new_dir(home) / f"{job_id}.yaml")
    except FileExistsError:
        return False
    finally:
        try:
            os.unlink(tmp)
        except OSError:
            pass
    fsync_dir(new_dir(home))
    return True


def id_taken(home: Home, job_id: str) -> bool:
    name = f"{job_id}.yaml"
    return (
        (new_dir(home) / name).exists()
        or (cur_dir(home) / name).exists()
        or home.job_dir(job_id).exists()
    )


def pending(home: Home) -> list[Path]:
    """Task files waiting in spool/new, oldest id first (names only: read one with read_entry,
    which never blocks on a FIFO or follows a link)."""
    return [p for p in entries(home) if p.suffix == ".yaml"]


def entries(home: Home) -> list[Path]:
    """Everything in spool/new but hidden names, oldest first: intake claims the task files and
    quarantines the rest."""
    try:
        return sorted(p for p in new_dir(home).iterdir() if not p.name.startswith("."))
    except FileNotFoundError:
        return []


def claim(home: Home, path: Path) -> Path | None:
    """Move a task from new/ to cur/. None if someone else claimed it first. Raises Rejected for
    an entry that is no regular .yaml file or whose name is taken in cur/ (left where it is)."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return None
    if not stat.S_ISREG(st.st_mode):
        kind = ("a symlink" if stat.S_ISLNK(st.st_mode) else "a FIFO" if stat.S_ISFIFO(st.st_mode)
                else "a folder" if stat.S_ISDIR(st.st_mode) else "not a regular file")
        raise Rejected(f"{path.name} is {kind}, not a task file")
    if path.suffix != ".yaml":
        raise Rejected(f"{path.name} is not named <id>.yaml")
    dst = cur_dir(home) / path.name
    try:
        os.link(path, dst)  # a link never clobbers: a name already in cur/ stays as it was
    except FileNotFoundError:
        return None
    except FileExistsError:
        try:
            same = os.path.samefile(path, dst)
        except FileNotFoundError:
            return None   # another claimer linked it and has unlinked it from new/ since: theirs
        except OSError:
            same = False
        if same:
            # a claim cut short between its link and unlink (a crash), or another claimer in
            # between: finish it; whoever linked records the task
            with contextlib.suppress(FileNotFoundError):
                os.unlink(path)
            return None
        raise Rejected(f"{path.name}: a task of that id was taken in already (duplicate id)") from None
    crash_point("intake.linked")
    with contextlib.suppress(FileNotFoundError):
        os.unlink(path)
    fsync_dir(cur_dir(home))
    crash_point("intake.claimed")
    return dst


def read_entry(path: Path, max_bytes: int) -> str:
    """A claimed entry's text: opened without following a link or blocking, a regular file of at
    most `max_bytes`, strictly UTF-8. Raises Rejected with the reason."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError as exc:
        raise Rejected(f"{path.name} cannot be opened: {exc.strerror}") from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise Rejected(f"{path.name} is not a regular file")
        if st.st_size > max_bytes:
            raise Rejected(f"{path.name} is {st.st_size} bytes, over the limit of {max_bytes}")
        chunks, total = [], 0
        while chunk := os.read(fd, 1 << 20):
            total += len(chunk)
            if total > max_bytes:
                raise Rejected(f"{path.name} is over the limit of {max_bytes} bytes")
            chunks.append(chunk)
    finally:
        os.close(fd)
    try:
        return b"".join(chunks).decode("utf-8")
    except UnicodeDecodeError as exc:
        raise Rejected(f"{path.name} is not UTF-8 text (byte {exc.start})") from None


def quarantine(home: Home, path: Path, reason: str) -> Path:
    """Move an entry (whatever it is: never opened, a link moved as a link) to spool/quarantine/
    under a free name, with `<name>.reason` beside it. Returns where it went."""
    qdir = home.spool_quarantine
    qdir.mkdir(parents=True, exist_ok=True)
    base = path.name.lstrip(".") or "entry"
    target = qdir / base
    n = 0
    while os.path.lexists(target) or os.path.lexists(f"{target}{SPOOL_REASON_SUFFIX}"):
        n += 1
        target = qdir / f"{base}.{n}"
    os.rename(path, target)
    atomic_write(Path(f"{target}{SPOOL_REASON_SUFFIX}"), f"{timestamp()} {reason}\n")
    fsync_dir(qdir)
    return target


def quarantined(home: Home) -> list[tuple[str, str]]:
    """(file, reason) of every quarantined entry, oldest name first."""
    try:
        names = sorted(p.name for p in home.spool_quarantine.iterdir()
                       if not p.name.endswith(SPOOL_REASON_SUFFIX) and not p.name.startswith("."))
    except FileNotFoundError:
        return []
    out = []
    for name in names:
        try:
            with open(home.spool_quarantine / f"{name}{SPOOL_REASON_SUFFIX}", encoding="utf-8", errors="replace") as f:
                reason = f.read(2000).strip().split(" ", 1)[-1]
        except OSError:
            reason = "(no reason recorded)"
        out.append((name, reason))
    return out


def claimed(home: Home) -> list[Path]:
    try:
        return sorted(p for p in cur_dir(home).iterdir() if p.suffix == ".yaml")
    except FileNotFoundError:
        return []

"""The spool: Maildir-style intake (tmp -> new -> cur). The directory listing is the queue.

A task is written whole to spool/tmp, fsynced, then linked into spool/new under its id (a link
never clobbers, so two dispatchers that drew the same id cannot overwrite each other), and the
directory is fsynced. A crash at any point leaves either a complete task in spool/new or none.
"""

from __future__ import annotations

import os
from pathlib import Path

from zen.store.atomic import fsync_dir, write_temp
from zen.store.layout import Home

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
    """Task files waiting in spool/new, oldest id first."""
    try:
        return sorted(p for p in new_dir(home).iterdir() if p.suffix == ".yaml" and not p.name.startswith("."))
    except FileNotFoundError:
        return []


def claim(home: Home, path: Path) -> Path | None:
    """Move a task from new/ to cur/. None if someone else claimed it first."""
    dst = cur_dir(home) / path.name
    try:
        os.rename(path, dst)
    except FileNotFoundError:
        return None
    fsync_dir(cur_dir(home))
    return dst


def claimed(home: Home) -> list[Path]:
    try:
        return sorted(p for p in cur_dir(home).iterdir() if p.suffix == ".yaml")
    except FileNotFoundError:
        return []

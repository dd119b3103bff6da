"""zen gc: retention of old, finished jobs. Worktrees of harvested jobs go first (their work is
on review branches); with `records`, the job records too. Branches are never touched."""

from __future__ import annotations

import shutil
from typing import Any

from zen.core.ids import parse_iso, utcnow
from zen.errors import ZenError
from zen.orchestration import control
from zen.store.home import Home
from zen.store.jobs import JobStore


def collect(home: Home, older_than_s: float, *, records: bool = False) -> list[dict[str, Any]]:
    store = JobStore(home)
    now = utcnow()
    out: list[dict[str, Any]] = []
    for snap in store.snapshots():
        if not snap.state.final:
            continue
        stamp = snap.ended_at or snap.updated_at
        if not stamp or (now - parse_iso(stamp)).total_seconds() < older_than_s:
            continue
        entry: dict[str, Any] = {"job": snap.job, "state": snap.state.value, "worktree_removed": False,
                                 "record_removed": False, "review_branch": snap.review_branch}
        if snap.worktree and (home.worktrees / snap.job).exists():
            try:
                control.clean(home, snap.job)
                entry["worktree_removed"] = True
            except ZenError as exc:
                entry["kept"] = str(exc)  # e.g. work not on a review branch: never removed
        if records and "kept" not in entry:
            if snap.worktree and (home.worktrees / snap.job).exists():
                entry["kept"] = "its worktree is still there"
            else:
                shutil.rmtree(store.dir(snap.job))
                entry["record_removed"] = True
        if entry["worktree_removed"] or entry["record_removed"] or "kept" in entry:
            out.append(entry)
    return out

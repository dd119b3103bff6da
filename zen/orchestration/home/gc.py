"""zen gc: retention of old, finished jobs. Worktrees of harvested jobs go first (their work is
on review branches); with `records`, the job records too. With `branches`, a job's review branch
and its agent's branch go once what they hold is merged into the lane's base; one that is not
merged is kept (and counted) unless `unmerged` says so too. Without `branches`, no branch is touched.

The observatory's retention (`observatory.history_retention`) applies to every job: its
minute-by-minute metrics older than that are compacted into per-job totals, and a finished
job's transcript ledgers (jobs/<id>/observe/) go once it ended longer ago than that."""

from __future__ import annotations

import shutil
from datetime import timedelta
from pathlib import Path
from typing import Any

from zen.adapters import git as g
from zen.core.ids import iso, parse_iso, utcnow
from zen.errors import ZenError
from zen.observe import snapshot
from zen.orchestration.job import control
from zen.orchestration.lanes import resolve_lane
from zen.store.config import Config
from zen.store.home import Home
from zen.store.jobs import JobStore


def compact_history(home: Home, retention_s: float) -> dict[str, dict[str, Any]]:
    """Apply the observatory's retention: job id -> what was compacted or removed."""
    store = JobStore(home)
    now = utcnow()
    cutoff = iso(now - timedelta(seconds=retention_s))
    out: dict[str, dict[str, Any]] = {}
    for snap in store.snapshots():
        done: dict[str, Any] = {}
        merged = snapshot.compact(store.dir(snap.job), snap.job, cutoff)
        if merged:
            done["history_compacted"] = merged
        ledgers = store.paths(snap.job).observe
        if snap.state.final and snap.ended_at and snap.ended_at < cutoff and ledgers.is_dir():
            shutil.rmtree(ledgers)      # the usage they counted is in the timeline
            done["ledgers_removed"] = True
        if done:
            out[snap.job] = done
    return out


def _branches(home: Home, job_id: str, snap: Any, unmerged: bool) -> dict[str, Any]:
    """Remove the job's review and agent branches when merged into the base (or `unmerged`)."""
    store = JobStore(home)
    try:
        lane = resolve_lane(Config.load(home), store.task(job_id))
    except ZenError as exc:
        return {"branches_kept": f"its lane cannot be read ({exc})"}
    repo = Path(lane.repo)
    base = g.rev(repo, f"refs/heads/{lane.base}")
    names = [b for b in (snap.review_branch, snap.branch) if b]
    tips = {b: g.rev(repo, f"refs/heads/{b}") for b in names}
    merged = base is not None and all(t is None or g.is_ancestor(repo, t, base) for t in tips.values())
    if not merged and not unmerged:
        return {"branches_kept": f"not merged into {lane.base}"}
    removed = [b for b, tip in tips.items() if tip and g.delete_ref(repo, f"refs/heads/{b}", tip)]
    return {"branches_removed": removed}


def collect(home: Home, older_than_s: float, *, records: bool = False,
            retention_s: float | None = None, branches: bool = False,
            unmerged: bool = False) -> list[dict[str, Any]]:
    store = JobStore(home)
    now = utcnow()
    out: list[dict[str, Any]] = []
    history = compact_history(home, retention_s) if retention_s is not None else {}
    for snap in store.snapshots():
        if not snap.state.final:
            if snap.job in history:
                out.append({"job": snap.job, "state": snap.state.value, "worktree_removed": False,
                            "record_removed": False, "review_branch": snap.review_branch,
                            **history[snap.job]})
            continue
        stamp = snap.ended_at or snap.updated_at
        entry: dict[str, Any] = {"job": snap.job, "state": snap.state.value, "worktree_removed": False,
                                 "record_removed": False, "review_branch": snap.review_branch,
                                 **history.get(snap.job, {})}
        if not stamp or (now - parse_iso(stamp)).total_seconds() < older_than_s:
            if snap.job in history:
                out.append(entry)
            continue
        if snap.worktree and (home.worktrees / snap.job).exists():
            try:
                control.clean(home, snap.job)
                entry["worktree_removed"] = True
            except ZenError as exc:
                entry["kept"] = str(exc)  # e.g. work not on a review branch: never removed
        if branches and "kept" not in entry:
            entry.update(_branches(home, snap.job, snap, unmerged))
        if records and "kept" not in entry:
            if snap.worktree and (home.worktrees / snap.job).exists():
                entry["kept"] = "its worktree is still there"
            else:
                shutil.rmtree(store.dir(snap.job))
                entry["record_removed"] = True
        if (entry["worktree_removed"] or entry["record_removed"] or "kept" in entry or snap.job in history
                or "branches_kept" in entry or entry.get("branches_removed")):
            out.append(entry)
    return out

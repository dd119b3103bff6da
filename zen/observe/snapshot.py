"""jobs/<id>/metrics.json: a job's metrics fold, derived from its timeline and always rebuildable.

Like state.json it remembers the byte offset and seq it has folded up to, so bringing it up to
date reads only the new lines; a file that does not line up with the timeline (another version,
a gap, a rewritten timeline) is rebuilt from the first event. Read commands fold new events in
memory; the supervisor (as the job moves), `zen doctor --rebuild` and `zen gc` publish it,
atomically, under the job's metrics lock.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from zen.observe.metrics import JobFold
from zen.store.atomic import atomic_write, flocked
from zen.store.follow import Follower
from zen.store.layout import JobPaths


def _load(paths: JobPaths, job_id: str) -> JobFold:
    try:
        fold = JobFold.from_json(json.loads(paths.metrics.read_text()))
    except (OSError, ValueError, TypeError, KeyError, AttributeError):
        return JobFold(job_id)
    return fold if fold.job == job_id else JobFold(job_id)


def fold_new(paths: JobPaths, fold: JobFold) -> bool:
    """Fold what the timeline gained since `fold`; False when it does not line up (rebuild)."""
    timeline = Follower(paths.events, fold.offset)
    new = timeline.read()
    if timeline.restarted or (new and new[0].get("seq") != fold.seq + 1):
        return False
    for ev in new:
        fold.apply(ev)
    fold.offset = timeline.offset
    return True


def current(job_dir: Path, job_id: str, known: tuple[list[dict[str, Any]], int] | None = None) -> JobFold:
    """The job's fold up to its last complete event, without writing anything. `known`: the
    timeline up to a byte offset, read already (the end of a job): folded instead of reading
    the timeline again when there is no metrics.json yet."""
    paths = JobPaths(job_dir)
    fold = _load(paths, job_id)
    if known is not None and fold.offset == 0:
        for ev in known[0]:
            fold.apply(ev)
        fold.offset = known[1]
    if not fold_new(paths, fold):
        fold = JobFold(job_id)
        fold_new(paths, fold)
    return fold


def save(job_dir: Path, fold: JobFold) -> None:
    paths = JobPaths(job_dir)
    atomic_write(paths.metrics, json.dumps(fold.to_json(), separators=(",", ":")) + "\n", durable=False)


def refresh(job_dir: Path, job_id: str, known: tuple[list[dict[str, Any]], int] | None = None) -> JobFold:
    """Bring metrics.json up to date with the timeline and publish it (when it moved)."""
    paths = JobPaths(job_dir)
    with flocked(paths.metrics_lock):
        before = _load(paths, job_id)
        fold = current(job_dir, job_id, known)
        if fold.offset != before.offset or fold.seq != before.seq or not paths.metrics.exists():
            save(job_dir, fold)
    return fold


def rebuild(job_dir: Path, job_id: str) -> JobFold:
    """metrics.json from the first event (zen doctor --rebuild)."""
    paths = JobPaths(job_dir)
    with flocked(paths.metrics_lock):
        fold = JobFold(job_id)
        fold_new(paths, fold)
        save(job_dir, fold)
    return fold


def compact(job_dir: Path, job_id: str, before_iso: str) -> int:
    """Fold minute buckets older than `before_iso` into per-job totals (zen gc); returns how many
    were merged. The timeline keeps every event: a rebuild brings the detail back."""
    paths = JobPaths(job_dir)
    with flocked(paths.metrics_lock):
        fold = current(job_dir, job_id)
        merged = fold.compact(before_iso)
        if merged or not paths.metrics.exists():
            save(job_dir, fold)
    return merged

"""Every job's state, read with the stdlib alone, for the commands that must answer at once
(`zen status`, `zen show`, `zen dispatch`; issue 21).

A finished job comes from jobs/.index.json (zen.store.index) while its timeline has not grown
since; any other job from its state.json, brought up to date in memory with what its timeline
gained since (the supervisor's reducer, zen.core.states, folding into a plain Snap), or replayed
from its first event when the snapshot is missing or does not line up. Nothing is written.

    ids(jobs_dir)                -> job ids, sorted
    state(jobs_dir, job_id)      -> state.json as JobSnapshot writes it, up to date (None: no job)
    rows(jobs_dir, full=False)   -> one dict per job: index rows for finished ones (`full`: their
                                    whole state instead), the whole state for the others
    unfinished(jobs_dir)         -> the whole state of every job the index does not hold (a
                                    finished job never moves again: what `zen dispatch` counts)
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from zen.core import states
from zen.core.jobstate import Snap, plausible
from zen.store import events as ev_store
from zen.store import index, spool
from zen.store.layout import EVENTS, STATE, TASK, Home, valid_job_id

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


def ids(jobs_dir: str) -> list[str]:
    try:
        names = os.listdir(jobs_dir)
    except FileNotFoundError:
        return []
    return sorted(n for n in names if not n.startswith(".") and valid_job_id(n))


def state(jobs_dir: str, job_id: str) -> dict[str, Any] | None:
    d = os.path.join(jobs_dir, job_id)
    raw: Any = None
    try:
        with open(os.path.join(d, STATE), "rb") as f:
            raw = json.loads(f.read())
    except (OSError, ValueError):
        pass
    events_path = os.path.join(d, EVENTS)
    if plausible(job_id, raw) and isinstance(raw.get("_offset", 0), int):
        snap = Snap(job_id, raw)
        offset = int(raw.get("_offset", 0))
        new, _ = ev_store.read_from(Path(events_path), offset)
        if not new and not (offset and offset > _size(events_path)):
            raw.pop("_offset", None)
            return dict(raw)
        # else state.json read further than the timeline now reaches: not believed (replayed)
        if new and new[0].get("seq") == snap.seq + 1:
            return states.replay_plain(job_id, new, snap).as_json()
    if not os.path.isfile(os.path.join(d, TASK)):
        return None
    events, _ = ev_store.read_from(Path(events_path), 0)
    return states.replay_plain(job_id, events).as_json()


def _size(path: str) -> int:
    try:
        return os.stat(path).st_size
    except OSError:
        return 0


def rows(jobs_dir: str, *, full: bool = False) -> list[dict[str, Any]]:
    known = index.read(jobs_dir)
    out = []
    for job_id in ids(jobs_dir):
        hit = known.get(job_id)
        if hit is not None and not full and isinstance(hit.get("row"), dict):
            try:
                size = os.stat(os.path.join(jobs_dir, job_id, EVENTS)).st_size
            except OSError:
                size = -1
            if size == hit.get("offset"):
                out.append({"job": job_id, **hit["row"]})
                continue
        got = state(jobs_dir, job_id)
        if got is not None:
            out.append(got)
    return out


def unfinished(jobs_dir: str) -> list[dict[str, Any]]:
    known = index.read(jobs_dir)
    out = []
    for job_id in ids(jobs_dir):
        if job_id not in known and (got := state(jobs_dir, job_id)) is not None:
            out.append(got)
    return out


def queued_count(home: Home) -> int:
    """Tasks waiting in spool/new and queued jobs (finished jobs, held by the index, unread)."""
    return len(spool.pending(home)) + sum(1 for s in unfinished(str(home.jobs)) if s["state"] == "queued")

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
    catch_up(job_dir, job_id, load, fresh)
                                 -> the one reading of state.json against its timeline, for this
                                    module's plain Snap and for JobStore's JobSnapshot alike
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Generic, NamedTuple, TypeVar

from zen.core import states
from zen.core.jobstate import Snap, plausible
from zen.store import index, spool
from zen.store.follow import Follower
from zen.store.layout import EVENTS, STATE, TASK, Home, valid_job_id

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

S = TypeVar("S")


class Caught(NamedTuple, Generic[S]):
    snap: S              # state.json brought up to date with its timeline
    end: int             # bytes of the timeline it has folded
    moved: bool          # it folded events state.json did not hold yet
    replayed: bool       # state.json was not believed: replayed from the timeline's first event
    raw: Any = None      # state.json's JSON as read (what `snap` is, when nothing moved)


def catch_up(job_dir: Path, job_id: str, load: Callable[[Any], S | None], fresh: Callable[[], S]) -> Caught[S]:
    """state.json (`load` turns its JSON into a snapshot, None when it is not this job's) brought
    up to date with what the timeline gained since the offset it records; replayed into `fresh()`
    when it is missing, unreadable, read further than the timeline now reaches (the timeline was
    cut short or replaced) or does not line up with it (the next event is not its seq + 1)."""
    raw: Any = None
    try:
        with open(job_dir / STATE, "rb") as f:
            raw = json.loads(f.read())
    except (OSError, ValueError):
        pass
    offset = raw.get("_offset", 0) if isinstance(raw, dict) else 0
    snap = load(raw) if isinstance(offset, int) and not isinstance(offset, bool) else None
    if snap is not None:
        timeline = Follower(job_dir / EVENTS, offset)
        new = timeline.read()
        if not timeline.restarted and not new:
            return Caught(snap, offset, False, False, raw)
        if not timeline.restarted and new[0].get("seq") == snap.seq + 1:  # type: ignore[attr-defined]
            for ev in new:
                states.apply(snap, ev)  # type: ignore[arg-type]  # a Snap has JobSnapshot's fields
            return Caught(snap, timeline.offset, True, False, raw)
    timeline = Follower(job_dir / EVENTS)
    snap = fresh()
    for ev in timeline.read():
        states.apply(snap, ev)  # type: ignore[arg-type]
    return Caught(snap, timeline.offset, True, True)


def _plain(job_id: str) -> Callable[[Any], Snap | None]:
    def load(raw: Any) -> Snap | None:
        return Snap(job_id, raw) if plausible(job_id, raw) else None
    return load


def ids(jobs_dir: str) -> list[str]:
    try:
        names = os.listdir(jobs_dir)
    except FileNotFoundError:
        return []
    return sorted(n for n in names if not n.startswith(".") and valid_job_id(n))


def state(jobs_dir: str, job_id: str) -> dict[str, Any] | None:
    d = Path(jobs_dir, job_id)
    got = catch_up(d, job_id, _plain(job_id), lambda: Snap(job_id))
    if got.replayed and not os.path.isfile(d / TASK):
        return None
    if not got.moved:      # state.json as it is (the common case: no Snap made back into JSON)
        out = dict(got.raw)
        out.pop("_offset", None)
        return out
    return got.snap.as_json()


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

"""The coordinator's entry points for the CLI, the HTTP API and the team tools (DESIGN 10, 11, 13).

    lock(home, job_id, path, shared=False, ttl_s=None, reason="", by="human") -> LeaseView
    unlock(home, job_id, paths=None) -> [LeaseView]          unlock_id(home, lease_id) -> LeaseView
    locks(home, lane=None, stale=False) -> [LeaseView]
    changes(home, since=None, job=None) -> [Change]

Jobs are named by their exact id (callers resolve what a user typed first: zen.orchestration.read.query
.resolve_job). Errors are ZenError sentences: Conflict for a path another job holds, LeaseError for
a request that cannot be met, NotFound for an unknown job.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from zen.coord import leases
from zen.coord.settings import Settings
from zen.core.durations import parse_duration
from zen.core.events import EventType as E
from zen.core.events import timestamp
from zen.core.model import JobSnapshot
from zen.core.results import Result
from zen.errors import LeaseConflict, LeaseError, LeaseNotFound, NotFound, UsageError, ZenError
from zen.store.config import Config, lane_path
from zen.store.events import read_events
from zen.store.home import Home
from zen.store.jobs import JobStore

# what `zen changes` and GET /api/v1/agent/changes serve
CHANGE_TYPES = frozenset({E.FILES_CHANGED, E.COORD_OVERLAP, E.COORD_CONFLICT, E.BASE_MOVED,
                          E.LOCK_ACQUIRED, E.LOCK_RELEASED, E.LOCK_CONFLICT})


@dataclass(frozen=True)
class LeaseView(Result):
    id: str
    lane: str
    job: str
    path: str
    mode: str
    glob: bool
    reason: str
    by: str
    created: str
    expires: str
    revision: int
    fixed: bool
    live: bool           # not expired and its job alive: it is enforced
    job_state: str | None


def view(home: Home, lease: leases.Lease, now: str | None = None) -> LeaseView:
    job = str(lease.get("job") or "")
    snap = _snap(home, job)
    return LeaseView(id=str(lease.get("id")), lane=str(lease.get("lane") or ""), job=job,
                     path=str(lease["path"]), mode=str(lease.get("mode") or leases.EXCLUSIVE),
                     glob=bool(lease.get("glob")), reason=str(lease.get("reason") or ""),
                     by=str(lease.get("by") or ""), created=str(lease.get("created") or ""),
                     expires=str(lease.get("expires") or ""), revision=int(lease.get("revision") or 0),
                     fixed=bool(lease.get("fixed")), live=leases.live(home.root, lease, now),
                     job_state=snap.state.value if snap is not None else None)


def _snap(home: Home, job: str) -> JobSnapshot | None:
    store = JobStore(home)
    if not job or not store.exists(job):
        return None
    return store.snapshot(job, write=False)


def _lane_path(home: Home, snap: JobSnapshot) -> Path | None:
    try:
        spec = Config.load(home).lanes.get(snap.lane or "")
    except ZenError:
        return None
    return lane_path(spec) if spec else (Path(snap.lane) if snap.lane and snap.lane.startswith("/") else None)


def relative(home: Home, snap: JobSnapshot, path: str) -> str:
    """`path` as a lease path: absolute paths inside the job's worktree or the lane's checkout
    become relative to it; anything else must already be relative."""
    text = str(path).strip()
    if text.startswith("/"):
        for root in (snap.worktree, _lane_path(home, snap)):
            if not root:
                continue
            for r in {str(root).rstrip("/"), os.path.realpath(str(root))}:
                if text == r:
                    raise LeaseError(f"{text} is the whole repository; lease a path or glob inside it")
                if text.startswith(r + "/"):
                    return leases.normalize(text[len(r) + 1:] + ("/" if text.endswith("/") else ""))
        raise LeaseError(f"{text} is outside the job's worktree and its lane; give a path inside the "
                                "repository (e.g. src/app.py)")
    return leases.normalize(text)


def lock(home: Home, job_id: str, path: str, *, shared: bool = False, ttl_s: float | None = None,
         reason: str = "", by: str = "human") -> LeaseView:
    """Lease `path` (a file, a directory ending in /, or a glob) of the job's lane for the job.
    Without `ttl_s` the lease lasts as long as the job (lock_timeout, renewed); with it, it ends
    after `ttl_s` at the latest."""
    snap = _snap(home, job_id)
    if snap is None:
        raise NotFound(f"no job {job_id}")
    if snap.state.value in leases.ENDED:
        raise ZenError(f"job {job_id} is {snap.state.value}; only a job that can still work holds leases")
    if not snap.lane:
        raise ZenError(f"job {job_id} names no lane, so there is nothing to lease")
    if ttl_s is not None and ttl_s <= 0:
        raise UsageError("--ttl must be positive")
    rel = relative(home, snap, path)
    settings = Settings.load(home)
    lease = leases.acquire(home.root, snap.lane, job_id, rel, mode=leases.SHARED if shared else leases.EXCLUSIVE,
                           ttl_s=ttl_s if ttl_s is not None else settings.lock_timeout_s, reason=reason,
                           by=by, fixed=ttl_s is not None)
    return view(home, lease)


def lock_task_paths(home: Home, job_id: str) -> tuple[list[LeaseView], list[str]]:
    """The task's `paths:` leased for its job (at start): (leases taken, one sentence per path
    another job holds, recorded as lock.conflict)."""
    store = JobStore(home)
    try:
        task = store.task(job_id)
    except ZenError:
        return [], []
    taken: list[LeaseView] = []
    refused: list[str] = []
    for p in task.paths:
        try:
            taken.append(lock(home, job_id, p, reason="the task's paths", by="task"))
        except LeaseConflict as exc:
            refused.append(str(exc))
            leases.record_event(home.root, job_id, E.LOCK_CONFLICT, path=p, holder=str(exc.lease.get("job")),
                                resolution="not-taken", lease=str(exc.lease.get("id")),
                                lane=str(exc.lease.get("lane") or ""))
        except ZenError as exc:
            refused.append(str(exc))
    return taken, refused


def unlock(home: Home, job_id: str, paths: list[str] | None = None, why: str = "released by a human"
           ) -> list[LeaseView]:
    snap = _snap(home, job_id)
    if snap is None:
        raise NotFound(f"no job {job_id}")
    rels = None if not paths else [relative(home, snap, p) for p in paths]
    before = [view(home, x) for x in leases.all_leases(home.root) if x.get("job") == job_id]
    done = {x["id"] for x in leases.release_job(home.root, job_id, why, rels)}
    if rels and not done:
        raise LeaseNotFound(f"job {job_id} holds no lease on {', '.join(rels)} (zen locks lists them)")
    return [v for v in before if v.id in done]


def unlock_id(home: Home, lease_ref: str, why: str = "released by a human") -> LeaseView:
    lease = leases.release_id(home.root, lease_ref, why)
    return view(home, lease)


def locks(home: Home, lane: str | None = None, *, stale: bool = False) -> list[LeaseView]:
    """The home's leases (of one lane), enforced ones only unless `stale`."""
    now = timestamp()
    out = [view(home, x, now) for x in leases.all_leases(home.root, lane)]
    out = [v for v in out if stale or v.live]
    return sorted(out, key=lambda v: (v.lane, v.path, v.job))


# -- changes --------------------------------------------------------------------------------------

def parse_since(since: str | None, now_s: float | None = None) -> str | None:
    """An ISO time as given, or a duration ("10m": ten minutes ago) as an ISO time."""
    if since is None or not str(since).strip():
        return None
    text = str(since).strip()
    if text[:4].isdigit() and "T" in text:
        return text if text.endswith("Z") else text + "Z"
    try:
        ago = parse_duration(text)
    except ValueError:
        raise UsageError(f"--since takes a time (2026-11-29T10:15:00Z) or a duration (10m), not {text!r}") from None
    return timestamp((time.time() if now_s is None else now_s) - ago)


@dataclass(frozen=True)
class Change:
    id: str              # <job>:<seq>, the same cursor as the event stream
    ts: str
    job: str
    type: str
    event: dict[str, Any]

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "ts": self.ts, "job": self.job, "type": self.type, **{
            k: v for k, v in self.event.items() if k not in ("v", "seq", "ts", "job", "type")}}


def changes(home: Home, since: str | None = None, job: str | None = None) -> list[Change]:
    """Coordination events (files changed, overlaps, predicted conflicts, base moves, leases) of
    every job (or one), oldest first, after `since` (an ISO time)."""
    store = JobStore(home)
    ids = [job] if job else store.ids()
    out: list[Change] = []
    for j in ids:
        for ev in read_events(store.events_path(j)):
            if ev.get("type") in CHANGE_TYPES and (since is None or str(ev.get("ts", "")) > since):
                out.append(Change(f"{j}:{ev.get('seq')}", str(ev.get("ts", "")), j, str(ev["type"]), ev))
    return sorted(out, key=lambda c: (c.ts, c.id))

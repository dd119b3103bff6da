"""/api/v1/agent/locks and /changes: the coordinator's leases and what it saw (DESIGN section 10),
through the same zen.coord.service calls as `zen lock`, `zen unlock`, `zen locks`, `zen changes`."""

from __future__ import annotations

from fastapi import APIRouter, Depends, Query, status

from zen.coord import service
from zen.core.durations import parse_duration
from zen.errors import InvalidTask, NotFound
from zen.orchestration.read.query import resolve_job
from zen.server.api_tasks import ERRORS
from zen.server.context import home
from zen.server.hub import parse_id
from zen.server.models import ChangeList, ChangeOut, LeaseList, LeaseOut, LockBody
from zen.store.events import read_events
from zen.store.home import Home

router = APIRouter(prefix="/api/v1/agent", tags=["coordinator"], responses=ERRORS)


@router.post("/locks", response_model=LeaseOut, status_code=status.HTTP_201_CREATED)
def lock(body: LockBody, h: Home = Depends(home)) -> LeaseOut:
    """Lease a path (file, directory/, or glob) of the job's lane for the job (as `zen lock`);
    409 names the holder when another live job has it."""
    ttl_s = None
    if body.ttl is not None:
        try:
            ttl_s = parse_duration(body.ttl)
        except ValueError as exc:
            raise InvalidTask(f"ttl: {exc}") from None
    v = service.lock(h, resolve_job(h, body.job), body.path, shared=body.shared, ttl_s=ttl_s,
                     reason=body.reason, by="human")
    return LeaseOut(**v.to_json())


@router.delete("/locks/{lease_id}", response_model=LeaseOut)
def unlock(lease_id: str, h: Home = Depends(home)) -> LeaseOut:
    """End one lease by its id or a unique prefix of it (as `zen unlock --id`)."""
    return LeaseOut(**service.unlock_id(h, lease_id).to_json())


@router.get("/locks", response_model=LeaseList)
def locks(lane: str | None = Query(None, max_length=200), stale: bool = False, h: Home = Depends(home)) -> LeaseList:
    """The leases in force (with `stale`, also expired ones and those of ended jobs)."""
    return LeaseList(locks=[LeaseOut(**v.to_json()) for v in service.locks(h, lane, stale=stale)])


def _cursor(h: Home, since: str) -> tuple[str, str] | None:
    """An event id `<job>:<seq>` (the event stream's cursor) as the (time, id) to list after."""
    parsed = parse_id(since)
    if parsed is None or not h.job(parsed[0]).events.exists():
        return None  # a time or a duration (a time's "10:15:00" parses as an id of no job)
    job, seq = parsed
    for ev in read_events(h.job(job).events):
        if int(ev.get("seq", 0)) == seq:
            return str(ev.get("ts", "")), since
    raise NotFound(f"job {job} has no event {seq}")


@router.get("/changes", response_model=ChangeList)
def changes(since: str | None = Query(None, max_length=300, description="An event id <job>:<seq> (the "
                                      "/events cursor), a time (2026-11-29T10:15:00Z) or a duration ago (10m)."),
            job: str | None = Query(None, max_length=200), h: Home = Depends(home)) -> ChangeList:
    """Files each job changed, overlaps, predicted conflicts, base moves, leases: oldest first."""
    job_id = resolve_job(h, job) if job else None
    cursor = _cursor(h, since) if since else None
    if cursor is not None:
        ts, eid = cursor
        rows = [c for c in service.changes(h, None, job_id) if (c.ts, c.id) > (ts, eid)]
    else:
        rows = service.changes(h, service.parse_since(since), job_id)
    return ChangeList(changes=[ChangeOut(**c.to_json()) for c in rows])

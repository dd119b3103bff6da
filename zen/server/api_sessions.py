"""/api/v1/agent/sessions: the jobs, their metrics, and the controls `zen` has for them."""

from __future__ import annotations

import json
from typing import Any

from fastapi import APIRouter, Depends, Query
from fastapi.responses import Response
from starlette.concurrency import run_in_threadpool

from zen.core.inert import inert_text
from zen.errors import UsageError
from zen.orchestration.job import control, land, pause, terminal
from zen.orchestration.read.query import resolve_job
from zen.orchestration.read.status import supervisor_status
from zen.server import figures
from zen.server.api_tasks import ERRORS, task_out
from zen.server.context import ServerContext, ctx, home
from zen.server.models import (
    ActionResult,
    FleetMetrics,
    InputBody,
    KeysBody,
    LandResult,
    Metrics,
    Screen,
    Session,
    SessionDetail,
    SessionList,
)
from zen.store.home import Home
from zen.store.jobs import JobStore

router = APIRouter(prefix="/api/v1/agent", tags=["sessions"], responses=ERRORS)


def session_of(snap: Any) -> Session:
    return Session(**snap.model_dump(mode="json"))


@router.get("/sessions", response_model=SessionList)
async def list_sessions(live: bool = Query(False, description="Only jobs whose agent may be running."),
                        c: ServerContext = Depends(ctx)) -> Response:
    """Every job's state (state.json), oldest first."""
    # async: with the jobs unchanged this is a stat per job (a fraction of a millisecond for a
    # hundred), cheaper than the hop to the thread pool a plain def costs; reading the jobs
    # whose timeline moved is real I/O, so that part goes to the pool
    h = c.home
    listing = c.sessions.listing(h)
    stale = c.sessions.stale(listing)
    loaded = await run_in_threadpool(c.sessions.load, h, stale) if stale else {}
    rows = c.sessions.rows(listing, loaded)
    if live:
        rows = [r for r in rows if r[0]]
    sup = supervisor_status(h)
    head = json.dumps({"supervisor": {"running": sup["running"], "pid": sup["pid"]}, "kill_switch": sup["kill_switch"]})
    body = b'{"sessions":[' + b",".join(r[1] for r in rows) + b"]," + head[1:].encode()
    return Response(content=body, media_type="application/json")


@router.get("/sessions/{job}", response_model=SessionDetail)
def get_session(job: str, events: int = Query(200, ge=0, le=5000, description="How many of the last events."),
                h: Home = Depends(home)) -> SessionDetail:
    """One job: its state, its task, and the end of its timeline."""
    store = JobStore(h)
    job_id = resolve_job(h, job)
    snap = store.snapshot(job_id)
    evs = store.events(job_id)
    return SessionDetail(session=session_of(snap), task=task_out(store.task(job_id), snap.state.value),
                         events=evs[-events:] if events else [])


@router.get("/sessions/{job}/metrics", response_model=Metrics)
def session_metrics(job: str, h: Home = Depends(home)) -> Metrics:
    """Tokens, cost, API calls and errors, tool calls, file operations, turns and their latency."""
    job_id = resolve_job(h, job)
    return Metrics(**figures.job_metrics(h, job_id))


@router.get("/metrics", response_model=FleetMetrics)
def fleet_metrics(h: Home = Depends(home)) -> FleetMetrics:
    """The same figures for every job, and in total (those of zen metrics --json)."""
    return FleetMetrics(**figures.fleet_metrics(h))


@router.post("/sessions/{job}/input", response_model=ActionResult)
def send_input(job: str, body: InputBody, h: Home = Depends(home)) -> ActionResult:
    """Type text and Enter into a waiting agent (as `zen send`; `force` types into a busy one)."""
    # whoever holds the cookie or token types text, never keys: no \r (an Enter), no escape
    # sequence or paste marker; a terminal tile's keys are the way to send those (H6)
    text = inert_text(body.text)
    if not text.strip():
        raise UsageError("nothing to send (the text is empty)")
    return ActionResult(**control.send(h, job, text, force=body.force).to_json())


@router.post("/sessions/{job}/keys", response_model=ActionResult)
def send_keys(job: str, body: KeysBody, h: Home = Depends(home)) -> ActionResult:
    """Keys typed in a focused terminal tile: literal text and named keys, in order."""
    items: list[tuple[str, str]] = []
    for item in body.items:
        if (item.text is None) == (item.key is None):
            raise UsageError("each item is either text or a key, not both or neither")
        items.append(("text", item.text) if item.text is not None else ("key", str(item.key)))
    return ActionResult(**terminal.type_keys(h, job, items).to_json())


@router.get("/sessions/{job}/screen", response_model=Screen)
def get_screen(job: str, h: Home = Depends(home)) -> Screen:
    """The agent's terminal as tmux shows it now (rows with colour escapes, cursor, size)."""
    return Screen(**terminal.screen(h, job).to_json())


def _stopped(stopped: control.Stopped) -> ActionResult:
    result = stopped.to_json()
    return ActionResult(**{k: v for k, v in result.items() if v is not None or k in ("job", "state")})


@router.post("/sessions/{job}/cancel", response_model=ActionResult)
def cancel(job: str, h: Home = Depends(home)) -> ActionResult:
    """Stop the agent now and harvest what exists (as `zen cancel`)."""
    return _stopped(control.cancel(h, job, "cancelled from the dashboard"))


@router.post("/sessions/{job}/finish", response_model=ActionResult)
def finish(job: str, h: Home = Depends(home)) -> ActionResult:
    """End the agent gracefully and harvest (as `zen finish`); the branch stays."""
    return _stopped(control.finish(h, job))


@router.post("/sessions/{job}/harvest", response_model=ActionResult)
def harvest(job: str, h: Home = Depends(home)) -> ActionResult:
    """Snapshot the work onto zen/review/<id> (a live agent keeps running)."""
    r = control.harvest_now(h, job)
    return ActionResult(job=r.job, state=None, branch=r.branch, commit=r.commit, files=r.files)


@router.post("/sessions/{job}/pause", response_model=ActionResult)
def pause_job(job: str, h: Home = Depends(home)) -> ActionResult:
    """Stop the agent's processes where they are (as `zen pause`); the timeout clock stops too."""
    return ActionResult(**pause.pause(h, job).to_json())


@router.post("/sessions/{job}/resume", response_model=ActionResult)
def resume_job(job: str, h: Home = Depends(home)) -> ActionResult:
    """Continue a paused agent (as `zen resume`)."""
    return ActionResult(**pause.resume(h, job).to_json())


@router.post("/sessions/{job}/land", response_model=LandResult)
def land_job(job: str, h: Home = Depends(home)) -> LandResult:
    """Merge the job's review branch into its lane's base (as `zen land`): clean merges only."""
    return LandResult(**land.land(h, job).to_json())

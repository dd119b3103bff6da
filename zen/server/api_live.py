"""Server-sent events: /api/v1/agent/events (every timeline, resumable) and a job's screen.

An event is `id: <job>:<seq>` and `data: <the timeline line>`; a stream that reconnects with
`Last-Event-ID` (EventSource does it by itself) continues right after that event. `?since=start`
replays the whole journal, `?job=ID` follows one job. Changes of the approval queue, the kill
switch and the spool come as `event: approvals` / `killswitch` / `spool` (no id: no cursor). Idle
streams get a comment every keepalive period, so proxies and browsers keep them open.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator
from typing import Any

from fastapi import APIRouter, Depends, Header, Query
from fastapi.responses import StreamingResponse

from zen.errors import UsageError, ZenError
from zen.orchestration.job import terminal
from zen.orchestration.read.query import resolve_job
from zen.server.api_tasks import ERRORS
from zen.server.context import ServerContext, ctx
from zen.server.hub import event_id, parse_id

router = APIRouter(prefix="/api/v1/agent", tags=["live"], responses=ERRORS)

SSE_HEADERS = {"Cache-Control": "no-store", "X-Accel-Buffering": "no"}
SCREEN_MIN_GAP_S = 0.1
# hub hints passed on as named events: the approval queue, the kill switch, the spool's intake
HINTS = {"approvals": "approvals", "kill": "killswitch", "spool": "spool"}
_STREAM: dict[int | str, dict[str, Any]] = {200: {"content": {"text/event-stream": {}}, "description": "a stream of server-sent events"}}


def frame(data: Any, *, eid: str | None = None, event: str | None = None) -> str:
    head = (f"id: {eid}\n" if eid else "") + (f"event: {event}\n" if event else "")
    return head + f"data: {json.dumps(data, separators=(',', ':'), default=str)}\n\n"


async def _timeline(c: ServerContext, start: int, job: str | None, reset: bool) -> AsyncIterator[str]:
    hub = c.hub
    yield "retry: 1000\n\n"
    if reset:
        yield frame({"reason": "unknown Last-Event-ID; reload the snapshot and follow from here"}, event="reset")
    pos = start
    seen = {k: hub.hint(k) for k in HINTS}
    while not hub.stopping:
        events, pos = hub.read(pos, job=job)
        for ev in events:
            yield frame(ev, eid=event_id(str(ev.get("job")), int(ev.get("seq", 0))))
        for key, name in HINTS.items():
            now = hub.hint(key)
            if now != seen[key]:
                seen[key] = now
                yield frame({"changed": name}, event=name)
        if await hub.wait(pos, c.keepalive_s, tuple(HINTS), seen):
            continue
        if not hub.stopping:
            yield ": keepalive\n\n"


def start_of(c: ServerContext, cursor: str | None) -> tuple[int, bool]:
    """Where a stream starts in the hub for a Last-Event-ID / `since` cursor (None or `now`: the
    end, `start`: everything, else just after that event), and whether the client must resync
    (an id the hub no longer knows: it starts at the end and says so)."""
    if cursor is None or cursor == "now":
        return c.hub.end(), False
    if cursor == "start":
        return 0, False
    if parse_id(cursor) is None:
        raise UsageError(f"{cursor!r} is not an event id (<job>:<seq>), start or now")
    found = c.hub.position_after(cursor)
    return (found, False) if found is not None else (c.hub.end(), True)


@router.get("/events", response_class=StreamingResponse, responses=_STREAM)
def events(last_event_id: str | None = Header(None, max_length=300),
           since: str | None = Query(None, max_length=300,
                                     description="`start` for everything, or an event id to follow after"),
           job: str | None = Query(None, max_length=200, description="Only this job's events."),
           c: ServerContext = Depends(ctx)) -> StreamingResponse:
    """Every timeline event as it is appended, with id `<job>:<seq>`; resumable."""
    start, reset = start_of(c, last_event_id or since)
    if job is not None:
        job = resolve_job(c.home, job)
    return StreamingResponse(_timeline(c, start, job, reset), media_type="text/event-stream", headers=SSE_HEADERS)


async def _screens(c: ServerContext, job_id: str) -> AsyncIterator[str]:
    hub = c.hub
    key = f"pane:{job_id}"
    yield "retry: 1000\n\n"
    last: terminal.Screen | None = None
    while not hub.stopping:
        seen = {key: hub.hint(key)}
        try:
            shot = await asyncio.to_thread(terminal.screen, c.home, job_id)
        except ZenError:
            shot = None
        if shot is not None and shot != last:
            last = shot
            yield frame(shot.to_json(), event="screen")
        t0 = time.monotonic()
        # a live agent's screen changes with its output (file events on pane.log); re-read at
        # least every two seconds for cursor moves that print nothing
        got = await hub.wait(hub.end() + 10**12, 2.0, (key,), seen)
        if not got and not hub.stopping and shot is not None and not shot.live:
            yield ": keepalive\n\n"
        gap = SCREEN_MIN_GAP_S - (time.monotonic() - t0)
        if gap > 0:
            await asyncio.sleep(gap)


@router.get("/sessions/{job}/screen/stream", response_class=StreamingResponse, responses=_STREAM)
def screen_stream(job: str, c: ServerContext = Depends(ctx)) -> StreamingResponse:
    """The agent's screen (as GET .../screen) each time it changes, as `event: screen`."""
    job_id = resolve_job(c.home, job)
    return StreamingResponse(_screens(c, job_id), media_type="text/event-stream", headers=SSE_HEADERS)

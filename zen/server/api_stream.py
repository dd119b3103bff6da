"""One stream for the whole page (issue 35): /api/v1/agent/stream carries every timeline event (as
/events does, resumable by `Last-Event-ID`), the approval, kill switch and spool hints, and the
screen of every live agent as `event: screen`, so the page holds one connection however many
tiles it shows (a browser allows six per host; a stream per tile froze the page at five).

Screens: at the start of a stream every live job's screen is sent, so a page that reconnects
has them all again without asking. Afterwards a screen is re-read when its pane's output grows
(the hub's `pane:<job>` hint) or its job's timeline moves, and sent only when it changed; a
job whose agent ended gets one last screen with `live: false`, then is no longer watched.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator

from fastapi import APIRouter, Depends, Header, Query
from fastapi.responses import StreamingResponse

from zen.errors import UsageError, ZenError
from zen.orchestration.job import terminal
from zen.server.api_live import _STREAM, HINTS, SSE_HEADERS, frame
from zen.server.api_tasks import ERRORS
from zen.server.context import ServerContext, ctx
from zen.server.hub import event_id, parse_id
from zen.store.home import Home
from zen.store.jobs import JobStore

router = APIRouter(prefix="/api/v1/agent", tags=["live"], responses=ERRORS)

CAPTURE_GAP_S = 0.05     # at most this often a round of screen captures per stream
REFRESH_S = 5.0          # every watched screen re-read this often (output is seen by pane.log)
REFRESH_UNWATCHED_S = 1.0  # the same without file events (the hub sweeps instead)


def live_jobs(home: Home) -> list[str]:
    """The jobs whose agent may be running now."""
    store = JobStore(home)
    out = []
    for job_id in store.ids():
        try:
            if store.snapshot(job_id, write=False).state.live:
                out.append(job_id)
        except (ZenError, OSError, ValueError):
            continue
    return out


async def _live(c: ServerContext, start: int, reset: bool, with_screens: bool) -> AsyncIterator[str]:
    hub = c.hub
    yield "retry: 1000\n\n"
    if reset:
        yield frame({"reason": "unknown Last-Event-ID; reload the snapshot and follow from here"}, event="reset")
    pos = start
    seen = {k: hub.hint(k) for k in HINTS}
    shown: dict[str, terminal.Screen] = {}     # watched job -> the screen last sent
    pane_seen: dict[str, int] = {}
    dirty: set[str] = set(await asyncio.to_thread(live_jobs, c.home)) if with_screens else set()
    refresh = REFRESH_S if hub.watching else REFRESH_UNWATCHED_S
    last_round = last_sent = time.monotonic()
    while not hub.stopping:
        events, pos = hub.read(pos)
        for ev in events:
            yield frame(ev, eid=event_id(str(ev.get("job")), int(ev.get("seq", 0))))
            if with_screens and ev.get("job"):
                dirty.add(str(ev["job"]))
            last_sent = time.monotonic()
        for key, name in HINTS.items():
            now = hub.hint(key)
            if now != seen[key]:
                seen[key] = now
                yield frame({"changed": name}, event=name)
                last_sent = time.monotonic()
        for job in shown:
            if hub.hint(f"pane:{job}") != pane_seen.get(job):
                dirty.add(job)
        if shown and time.monotonic() - last_round >= refresh:
            dirty.update(shown)
        if dirty:
            jobs = sorted(dirty)
            dirty.clear()
            for job in jobs:
                pane_seen[job] = hub.hint(f"pane:{job}")   # before the capture: nothing is missed
            last_round = time.monotonic()
            shots = await asyncio.to_thread(terminal.screens, c.home, jobs)
            for job, shot in shots.items():
                before = shown.get(job)
                if shot != before and (shot.live or before is not None or shot.text):
                    yield frame(shot.to_json(), event="screen")
                    last_sent = time.monotonic()
                if shot.live:
                    shown[job] = shot
                else:
                    shown.pop(job, None)
                    pane_seen.pop(job, None)
            gap = CAPTURE_GAP_S - (time.monotonic() - last_round)
            if gap > 0:
                await asyncio.sleep(gap)
            continue
        keys = (*HINTS, *(f"pane:{j}" for j in shown))
        marks = {**seen, **{f"pane:{j}": n for j, n in pane_seen.items()}}
        wait = refresh - (time.monotonic() - last_round) if shown else c.keepalive_s
        got = await hub.wait(pos, max(0.05, min(wait, c.keepalive_s)), keys, marks)
        if not got and not hub.stopping and time.monotonic() - last_sent >= c.keepalive_s:
            yield ": keepalive\n\n"
            last_sent = time.monotonic()


@router.get("/stream", response_class=StreamingResponse, responses=_STREAM)
def live(last_event_id: str | None = Header(None, max_length=300),
         since: str | None = Query(None, max_length=300,
                                   description="`start` for everything, or an event id to follow after"),
         screens: bool = Query(True, description="Also the screens of the live agents, as `event: screen`."),
         c: ServerContext = Depends(ctx)) -> StreamingResponse:
    """The page's one stream: every timeline event (id `<job>:<seq>`, resumable), the hints, and
    each live agent's screen whenever it changes."""
    cursor = last_event_id or since
    reset = False
    if cursor is None or cursor == "now":
        start = c.hub.end()
    elif cursor == "start":
        start = 0
    else:
        if parse_id(cursor) is None:
            raise UsageError(f"{cursor!r} is not an event id (<job>:<seq>), start or now")
        found = c.hub.position_after(cursor)
        start, reset = (found, False) if found is not None else (c.hub.end(), True)
    return StreamingResponse(_live(c, start, reset, screens), media_type="text/event-stream", headers=SSE_HEADERS)

"""One stream for the whole page (issue 35): /api/v1/agent/stream carries every timeline event (as
/events does, resumable by `Last-Event-ID`), the approval, kill switch and spool hints, and the
terminal of every live agent, so the page holds one connection however many tiles it shows (a
browser allows six per host; a stream per tile froze the page at five).

Terminals: each live job's terminal starts with `event: seed` (its scrollback and screen as tmux
holds them, the cursor, the size, and the offset of pane.log it goes on from), then `event: out`
frames carry what the pane printed (pane.log, which tmux's pipe-pane writes, read from that
offset as it grows), and `event: ended` when the agent is gone. Every stream seeds every live
job at its start, so a page that reconnects has them all again without asking.
"""

from __future__ import annotations

import asyncio
import codecs
import time
from collections.abc import AsyncIterator

from fastapi import APIRouter, Depends, Header, Query
from fastapi.responses import StreamingResponse

from zen.errors import ZenError
from zen.orchestration.job import terminal
from zen.server.api_live import _STREAM, HINTS, SSE_HEADERS, frame, start_of
from zen.server.api_tasks import ERRORS
from zen.server.context import ServerContext, ctx
from zen.server.hub import event_id
from zen.store.home import Home
from zen.store.jobs import JobStore

router = APIRouter(prefix="/api/v1/agent", tags=["live"], responses=ERRORS)

CAPTURE_GAP_S = 0.005    # at most this often a round of terminal reads per stream
REFRESH_S = 5.0          # every attached pane.log looked at this often besides its file events
REFRESH_UNWATCHED_S = 0.5  # the same without file events (the hub sweeps instead)
OUT_CHUNK = 256 * 1024   # the most of one pane's output in one frame


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


async def _live(c: ServerContext, start: int, reset: bool, with_terms: bool) -> AsyncIterator[str]:
    hub = c.hub
    yield "retry: 1000\n\n"
    if reset:
        yield frame({"reason": "unknown Last-Event-ID; reload the snapshot and follow from here"}, event="reset")
    pos = start
    seen = {k: hub.hint(k) for k in HINTS}
    offsets: dict[str, int] = {}             # attached job -> how far into pane.log this stream has sent
    decoders: dict[str, codecs.IncrementalDecoder] = {}
    pane_seen: dict[str, int] = {}
    dirty: set[str] = set(await asyncio.to_thread(live_jobs, c.home)) if with_terms else set()
    refresh = REFRESH_S if hub.watching else REFRESH_UNWATCHED_S
    last_round = last_sent = time.monotonic()
    while not hub.stopping:
        events, pos = hub.read(pos)
        for ev in events:
            yield frame(ev, eid=event_id(str(ev.get("job")), int(ev.get("seq", 0))))
            if with_terms and ev.get("job"):
                dirty.add(str(ev["job"]))
            last_sent = time.monotonic()
        for key, name in HINTS.items():
            now = hub.hint(key)
            if now != seen[key]:
                seen[key] = now
                yield frame({"changed": name}, event=name)
                last_sent = time.monotonic()
        grown = [j for j in offsets if hub.hint(f"pane:{j}") != pane_seen.get(j)]
        if offsets and time.monotonic() - last_round >= refresh:
            grown = list(offsets)
        if dirty or grown:
            for job in {*dirty, *grown}:
                pane_seen[job] = hub.hint(f"pane:{job}")   # before reading: nothing is missed
            last_round = time.monotonic()
            for out in await asyncio.to_thread(_round, c.home, sorted(dirty), grown, offsets, decoders):
                yield out
                last_sent = time.monotonic()
            dirty.clear()
            for job in [j for j in pane_seen if j not in offsets]:
                pane_seen.pop(job, None)
            gap = CAPTURE_GAP_S - (time.monotonic() - last_round)
            if gap > 0:
                await asyncio.sleep(gap)
            continue
        keys = (*HINTS, *(f"pane:{j}" for j in offsets))
        marks = {**seen, **{f"pane:{j}": n for j, n in pane_seen.items()}}
        wait = refresh - (time.monotonic() - last_round) if offsets else c.keepalive_s
        got = await hub.wait(pos, max(0.05, min(wait, c.keepalive_s)), keys, marks)
        if not got and not hub.stopping and time.monotonic() - last_sent >= c.keepalive_s:
            yield ": keepalive\n\n"
            last_sent = time.monotonic()


def _round(home: Home, changed: list[str], grown: list[str], offsets: dict[str, int],
           decoders: dict[str, codecs.IncrementalDecoder]) -> list[str]:
    """One round of terminal frames (in a thread): a seed for each job that became live, the new
    output of each attached one, `ended` for each whose agent is gone."""
    out: list[str] = []
    store = JobStore(home)
    for job in changed:
        try:
            live = store.snapshot(job, write=False).state.live
        except (ZenError, OSError, ValueError):
            live = False
        if live and job not in offsets:
            got = terminal.seed(home, job)
            if got.live:
                offsets[job] = got.offset
                decoders[job] = codecs.getincrementaldecoder("utf-8")(errors="replace")
                out.append(frame(got.to_json(), event="seed"))
        elif not live and job in offsets:
            grown = [*grown, job]   # its last output first
    for job in dict.fromkeys(grown):
        if job not in offsets:
            continue
        while True:
            data, end = terminal.output(home, job, offsets[job], OUT_CHUNK)
            if not data:
                break
            at, offsets[job] = offsets[job], end
            out.append(frame({"job": job, "at": at, "data": decoders[job].decode(data)}, event="out"))
            if len(data) < OUT_CHUNK:
                break
    for job in changed:
        if job in offsets:
            try:
                gone = not store.snapshot(job, write=False).state.live
            except (ZenError, OSError, ValueError):
                gone = True
            if gone:
                offsets.pop(job, None)
                decoders.pop(job, None)
                out.append(frame({"job": job}, event="ended"))
    return out


@router.get("/stream", response_class=StreamingResponse, responses=_STREAM)
def live(last_event_id: str | None = Header(None, max_length=300),
         since: str | None = Query(None, max_length=300,
                                   description="`start` for everything, or an event id to follow after"),
         terminals: bool = Query(True, description="Also the live agents' terminals: `event: seed` (scrollback and "
                                                   "screen), `out` (what the pane printed since), `ended`."),
         c: ServerContext = Depends(ctx)) -> StreamingResponse:
    """The page's one stream: every timeline event (id `<job>:<seq>`, resumable), the hints, and
    each live agent's screen whenever it changes."""
    start, reset = start_of(c, last_event_id or since)
    return StreamingResponse(_live(c, start, reset, terminals), media_type="text/event-stream", headers=SSE_HEADERS)

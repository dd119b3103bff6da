"""Following a turn on a Ray cluster: its output to pane.log, the worker's events to the timeline.

`pump` reads the Ray job's log from where the last read stopped (remembered in the job's
remote log file, so a restarted supervisor goes on from there) and records each event of the
worker once, with `via` "<submission>#<n>", in the worker's order. The rest of a remote job's
life is remote/turns.py's.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass

from zen.adapters.ray import RayJobs
from zen.core.remote import WORKER_EVENTS, Output, parse_log
from zen.store import events as ev_store
from zen.store.atomic import atomic_write
from zen.store.jobs import JobStore

log = logging.getLogger("zen.orchestration.remote.turns")

@dataclass
class Cursor:
    sid: str
    chars: int = 0          # how far the Ray job's log has been read
    events_at: int = 0      # bytes of the timeline already scanned for this submission's events
    seen: int = 0           # the highest worker event number on record


_CURSORS: dict[str, Cursor] = {}


def _cursor(store: JobStore, job_id: str, sid: str) -> Cursor:
    cur = _CURSORS.get(job_id)
    if cur is None or cur.sid != sid:
        cur = Cursor(sid)
        try:
            saved = json.loads(store.paths(job_id).remote_log.read_text())
            if saved.get("sid") == sid:
                cur.chars = int(saved.get("chars") or 0)
        except (OSError, ValueError, AttributeError):
            pass
        _CURSORS[job_id] = cur
    new, cur.events_at = ev_store.read_from(store.events_path(job_id), cur.events_at)
    prefix = f"{sid}#"
    for ev in new:
        via = str(ev.get("via", ""))
        if via.startswith(prefix) and via[len(prefix):].isdigit():
            cur.seen = max(cur.seen, int(via[len(prefix):]))
    return cur


def pump(store: JobStore, job_id: str, sid: str, jobs: RayJobs) -> int:
    """Bring the Ray job's log into the record: output appended to pane.log, the worker's events
    (only the types a worker may record) appended to the timeline with `via`. Call under the
    job's remote lock. The number of events appended."""
    text = jobs.logs(sid)
    cur = _cursor(store, job_id, sid)
    items, end = parse_log(text, cur.chars)
    if not items and end == cur.chars:
        return 0
    output = "".join(i.text for i in items if isinstance(i, Output))
    if output:
        with store.paths(job_id).pane_log.open("a", encoding="utf-8") as f:
            f.write(output)
    batch = []
    for item in items:
        if isinstance(item, Output) or item.n <= cur.seen:
            continue
        cur.seen = item.n
        if item.type not in WORKER_EVENTS:
            log.warning("job %s: the worker sent a %s event, which a worker may not record", job_id, item.type)
            continue
        fields = {**item.fields, "via": f"{sid}#{item.n}", **({"worker_ts": item.ts} if item.ts else {})}
        batch.append((item.type, item.actor, fields))
    if batch:
        ev_store.append_many(store.dir(job_id), job_id, batch)
        store.snapshot(job_id)
    cur.chars = end
    atomic_write(store.paths(job_id).remote_log, json.dumps({"v": 1, "sid": sid, "chars": end}) + "\n",
                 durable=False)
    return len(batch)

"""jobs/.index.json: a summary of every finished job, so that `zen status`, `zen show` and
`zen dispatch` read one file instead of a thousand (issue 21).

    {"v": 1, "jobs": {"<id>": {"offset": 1265, "row": {"name": ..., "state": "harvested", ...}}}}

A cache, never the truth: kept up to date by whoever writes a finished job's state.json (the
store's `JobStore`, under the index's flock, replaced atomically), rebuilt by the supervisor on
start, and trusted by a reader only while the job's events.jsonl is still `offset` bytes long (a
timeline that grew since, or a job missing from the index, is read from its own state.json).
Stdlib only: the lean readers import it.
"""

from __future__ import annotations

import contextlib
import json
import os

from zen.store.atomic import atomic_write, flocked
from zen.store.layout import Home

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

INDEX = ".index.json"
INDEX_LOCK = ".index.lock"
VERSION = 1
# what a row keeps of state.json: what `zen status` shows, and names for references
ROW_FIELDS = ("name", "state", "reason", "agent", "lane", "created_at", "usage",
              "executor", "remote_host", "remote_address",  # where it runs (zen status, DESIGN 14)
              "checks")  # the lane's checks on its harvest (issue 37)


def path(jobs_dir: str) -> str:
    return os.path.join(jobs_dir, INDEX)


def read(jobs_dir: str) -> dict[str, dict[str, Any]]:
    """{job id: {"offset": int, "row": {...}}}; empty when the index is missing or unreadable."""
    try:
        with open(path(jobs_dir), "rb") as f:
            data = json.loads(f.read())
    except (OSError, ValueError):
        return {}
    if not isinstance(data, dict) or data.get("v") != VERSION or not isinstance(data.get("jobs"), dict):
        return {}
    jobs: dict[str, dict[str, Any]] = data["jobs"]
    return jobs


def row_of(state: dict[str, Any]) -> dict[str, Any]:
    return {k: state.get(k) for k in ROW_FIELDS}


def update(home: Home, put: dict[str, tuple[int, dict[str, Any]]], drop: tuple[str, ...] = ()) -> None:
    """Record finished jobs ({id: (events offset, state)}) and forget `drop`, atomically."""
    jobs_dir = str(home.jobs)
    with flocked(home.jobs / INDEX_LOCK):
        jobs = read(jobs_dir)
        before = dict(jobs)
        for job_id, (offset, state) in put.items():
            jobs[job_id] = {"offset": offset, "row": row_of(state)}
        for job_id in drop:
            jobs.pop(job_id, None)
        if jobs == before:
            return
        text = json.dumps({"v": VERSION, "jobs": jobs}, separators=(",", ":"), ensure_ascii=False)
        with contextlib.suppress(OSError):  # a cache: a failed write costs readers time, nothing else
            atomic_write(home.jobs / INDEX, text + "\n", durable=False)

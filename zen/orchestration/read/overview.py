"""What `zen status` and `zen show` print, gathered with the stdlib alone (issue 21): the CLI's
typer commands and its fast entry (zen.cli.fast) both call these, so both print the same.

Every job comes from zen.store.snapshots (the index of finished jobs, live jobs' state.json
brought up to date in memory): no timeline is replayed and no pydantic model is built, so the
cost stays flat as finished jobs accumulate. The results are plain JSON data, shaped as the
`--json` output documents them (DESIGN section 2's state.json fields for each job).
"""

from __future__ import annotations

import os
import time
from pathlib import Path

from zen.core import teamtree
from zen.core.events import EventType as E
from zen.core.events import timestamp
from zen.core.refs import resolve
from zen.core.taskcheck import quick, read_text
from zen.errors import NotFound
from zen.observe import snapshot as metrics_snapshot
from zen.observe.metrics import figures, headline_total
from zen.orchestration.read.status import supervisor_status
from zen.orchestration.safety import breaker as breaker_kinds
from zen.store import events as ev_store
from zen.store import snapshots, spool
from zen.store.config import Config
from zen.store.layout import Home

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


def breaker(home: Home, cfg: Config, now: float | None = None) -> dict[str, Any]:
    """The circuit breaker on automatic work as control/breaker.json and zen.yaml have it."""
    return breaker_kinds.overall(home, cfg, time.time() if now is None else now)


def pending(home: Home) -> list[dict[str, Any]]:
    """Tasks waiting in spool/new, oldest first (those that cannot be read are left out)."""
    out: list[dict[str, Any]] = []
    for path in spool.pending(home):
        try:
            data = read_text(path.read_text())
        except (OSError, UnicodeDecodeError):
            continue    # claimed meanwhile, or not text: the supervisor reports it when it claims
        task = quick(data) if data is not None else None
        if task is None:
            task = _modelled(path)
        if task is not None:
            out.append({"id": task["id"], "name": task["name"], "agent": task["agent"],
                        "lane": task["lane"] or task["repo"], "created_at": task["created_at"],
                        "parent": task.get("parent")})
    return out


def _modelled(path: Path) -> dict[str, Any] | None:
    """A task file zen dispatch's quick lane did not write, read by the model."""
    # here: only a task written by hand or by the model's lane pays for pydantic and ruamel
    from zen.store.jobs import load_task_text

    try:
        return load_task_text(path.read_text(), str(path)).model_dump(mode="json")
    except Exception:
        return None  # being written or garbled; the supervisor reports it when it claims


def usage_of(jobs: list[dict[str, Any]]) -> dict[str, Any]:
    """Tokens, cost, API calls and errors of every job together (from state.json's sums)."""
    return headline_total(j.get("usage") or {} for j in jobs)


def quarantine_json(entries: list[tuple[str, str]]) -> list[dict[str, str]]:
    """Rejected spool entries (spool/quarantine/) as `zen status` and `zen queue` give them."""
    return [{"file": f, "reason": r, "path": f"spool/quarantine/{f}"} for f, r in entries]


def status(home: Home, *, full: bool = False) -> dict[str, Any]:
    """`zen status`: the supervisor, the breaker, the spool and every job (`full`: each job's
    whole state, as --json prints it; else what the table shows)."""
    cfg = Config.load(home)
    jobs = snapshots.rows(str(home.jobs), full=full)
    waiting = pending(home)
    # agent teams: each worker nested under the job that spawned it
    tree = teamtree.forest([{"id": p.get("id"), "name": p.get("name"), "state": "pending", "parent": p.get("parent")}
                            for p in waiting] +
                           [{"id": j.get("job"), "name": j.get("name"), "state": j.get("state"),
                             "parent": j.get("parent")} for j in jobs])
    return {"supervisor": supervisor_status(home), "breaker": breaker(home, cfg), "pending": waiting,
            "jobs": jobs, "usage": usage_of(jobs), "quarantined": quarantine_json(spool.quarantined(home)),
            "tree": tree}


# -- one job -----------------------------------------------------------------------------------

def names(home: Home) -> dict[str, str]:
    """Every job's name by id (the index, else its state)."""
    return {r["job"]: str(r.get("name") or "") for r in snapshots.rows(str(home.jobs))}


def resolve_job(home: Home, ref: str) -> str:
    """The job `ref` names: the whole id, a unique prefix, a unique name (like git)."""
    ref = ref.strip()
    ids = [i for i in snapshots.ids(str(home.jobs)) if os.path.isfile(home.job(i).task)]
    if ref in ids:
        return ref
    by_prefix = [i for i in ids if i.startswith(ref)] if ref else []
    if len(by_prefix) == 1:
        return by_prefix[0]
    return resolve(ref, {i: n for i, n in names(home).items() if i in set(ids)})


def task_of(events: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The task as accepted, from the timeline's task.received (all of task.yaml but `script`)."""
    for ev in events[:3]:
        if ev.get("type") == E.TASK_RECEIVED and isinstance(ev.get("task"), dict):
            return dict(ev["task"])
    return None


def job(home: Home, ref: str, *, last_events: int = 10) -> dict[str, Any]:
    """`zen show JOB`: its task, state, metrics and last events, as plain data."""
    job_id = resolve_job(home, ref)
    d = home.job_dir(job_id)
    events, _ = ev_store.read_from(home.job(job_id).events, 0)
    task = task_of(events)
    state = snapshots.state(str(home.jobs), job_id)
    if task is None or state is None:
        raise NotFound(f"job {job_id} has no record")
    fold = metrics_snapshot.current(d, job_id)
    return {"job": job_id, "task": task, "state": state, "metrics": figures([fold], now=timestamp()),
            "events": events[-last_events:] if last_events > 0 else [],
            "parent": (task or {}).get("parent"),
            "workers": [str(e["worker"]) for e in events if e.get("type") == E.TEAM_SPAWNED]}

"""Reading the home: pending tasks, jobs, their states and timelines. No process control here."""

from __future__ import annotations

import json
from typing import Any

from zen.core.model import JobSnapshot, JobStatus
from zen.core.refs import resolve
from zen.store import spool
from zen.store.home import Home
from zen.store.jobs import JobStore, load_task_text


def pending_tasks(home: Home) -> list[dict[str, Any]]:
    out = []
    for path in spool.pending(home):
        try:
            task = load_task_text(path.read_text(), str(path))
        except Exception:
            continue  # being written or garbled; the supervisor reports it when it claims
        out.append(task.model_dump(mode="json"))
    return out


def _state_name(home: Home, job_id: str) -> tuple[str, str]:
    """(name, state) from state.json without validating the whole snapshot (fast path)."""
    try:
        raw = json.loads(home.job(job_id).state.read_text())
        return str(raw.get("name") or ""), str(raw.get("state") or "")
    except (OSError, ValueError):
        return "", ""


def job_names(home: Home, *, include_pending: bool = False) -> dict[str, str]:
    store = JobStore(home)
    names: dict[str, str] = {}
    for job_id in store.ids():
        name, _ = _state_name(home, job_id)
        if not name:
            name = store.snapshot(job_id).name
        names[job_id] = name
    if include_pending:
        for t in pending_tasks(home):
            names[t["id"]] = t["name"]
        for path in spool.claimed(home):
            names.setdefault(path.stem, path.stem.split("-", 1)[-1].rsplit("-", 1)[0])
    return names


def resolve_job(home: Home, ref: str) -> str:
    return resolve(ref, job_names(home))


def queued_count(home: Home) -> int:
    count = len(spool.pending(home))
    for job_id in JobStore(home).ids():
        _, state = _state_name(home, job_id)
        if state == JobStatus.queued:
            count += 1
    return count


def job_rows(home: Home) -> list[JobSnapshot]:
    return JobStore(home).snapshots()

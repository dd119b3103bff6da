"""Reading the home: pending tasks, jobs, their states and timelines. No process control here.

Read commands never write: snapshots are brought up to date in memory (`write=False`); only the
supervisor and the commands that act on a job publish state.json.
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from zen.core import teamtree
from zen.core.events import EventType, timestamp
from zen.core.model import JobSnapshot, Task
from zen.core.refs import resolve
from zen.observe import snapshot as metrics_snapshot
from zen.observe.metrics import JobFold, figures, headline_total
from zen.orchestration.read.schedule import breaker_status
from zen.orchestration.read.status import supervisor_status
from zen.store import readers, snapshots, spool
from zen.store.follow import Follower
from zen.store.home import Home
from zen.store.jobs import JobStore, load_task_text

# a task file's size limit: the prompt's (limits.max_prompt_size) and room for the rest
SPOOL_ENTRY_MAX = 16 * 2**20


def pending_tasks(home: Home) -> list[Task]:
    """Tasks in spool/new, not yet taken in by a supervisor, oldest first."""
    out = []
    for path in spool.pending(home):
        try:
            task = load_task_text(spool.read_entry(path, SPOOL_ENTRY_MAX), str(path))
        except Exception:
            continue  # garbled, a FIFO, a link...: the supervisor quarantines it when it claims
        out.append(task)
    return out


def _state_name(home: Home, job_id: str) -> tuple[str, str]:
    """(name, state) from state.json without validating the whole snapshot (fast path)."""
    raw = readers.read_state(str(home.root), job_id) or {}
    return str(raw.get("name") or ""), str(raw.get("state") or "")


def job_names(home: Home, *, include_pending: bool = False) -> dict[str, str]:
    store = JobStore(home)
    names: dict[str, str] = {}
    for job_id in store.ids():
        name, _ = _state_name(home, job_id)
        if not name:
            name = store.snapshot(job_id, write=False).name
        names[job_id] = name
    if include_pending:
        for t in pending_tasks(home):
            names[t.id] = t.name
        for path in spool.claimed(home):
            names.setdefault(path.stem, path.stem.split("-", 1)[-1].rsplit("-", 1)[0])
    return names


def resolve_job(home: Home, ref: str) -> str:
    """The job `ref` names (core.refs.resolve: the whole id, a unique prefix, a unique name).
    The names are read from every job's state.json only when the ids alone cannot answer."""
    ref = ref.strip()
    ids = JobStore(home).ids()
    if ref in ids:
        return ref
    by_prefix = [i for i in ids if i.startswith(ref)] if ref else []
    if len(by_prefix) == 1:
        return by_prefix[0]
    return resolve(ref, job_names(home))


def queued_count(home: Home) -> int:
    """Tasks in the spool and queued jobs (finished jobs, held in the index, are not read)."""
    return snapshots.queued_count(home)


def job_rows(home: Home) -> list[JobSnapshot]:
    store = JobStore(home)
    return [store.snapshot(i, write=False) for i in store.ids()]


# -- zen status ----------------------------------------------------------------------


@dataclass(frozen=True)
class Status:
    """What `zen status` shows: the supervisor, the circuit breaker, the spool and every job."""

    supervisor: Mapping[str, Any]
    breaker: Mapping[str, Any]
    pending: list[Task]
    jobs: list[JobSnapshot]
    quarantined: list[tuple[str, str]] = field(default_factory=list)   # spool/quarantine: (file, reason)

    def to_json(self) -> dict[str, Any]:
        return {
            "supervisor": dict(self.supervisor),
            "breaker": dict(self.breaker),
            "pending": [{"id": t.id, "name": t.name, "agent": t.agent.value, "lane": t.lane or t.repo,
                         "created_at": t.created_at, "parent": t.parent} for t in self.pending],
            "jobs": [j.model_dump(mode="json") for j in self.jobs],
            "quarantined": quarantine_json(self.quarantined),
            "usage": self.usage(),
            "tree": self.tree(),
        }

    def tree(self) -> list[dict[str, Any]]:
        """Jobs and pending tasks nested under the job that spawned them (agent teams)."""
        nodes = [{"id": t.id, "name": t.name, "state": "pending", "parent": t.parent} for t in self.pending]
        nodes += [{"id": j.job, "name": j.name, "state": j.state.value, "parent": j.parent} for j in self.jobs]
        return teamtree.forest(nodes)

    def usage(self) -> dict[str, Any]:
        """Tokens, cost, API calls and errors of every job together (from state.json's sums)."""
        return headline_total(j.usage for j in self.jobs)


def status(home: Home) -> Status:
    return Status(supervisor_status(home), breaker_status(home), pending_tasks(home), job_rows(home),
                  spool.quarantined(home))


def quarantine_json(entries: list[tuple[str, str]]) -> list[dict[str, str]]:
    return [{"file": f, "reason": r, "path": f"spool/quarantine/{f}"} for f, r in entries]


def quarantine_lines(entries: list[tuple[str, str]]) -> list[str]:
    """What `zen status` and `zen queue` say about rejected spool entries (one line each)."""
    if not entries:
        return []
    return [f"quarantined: {len(entries)} spool entr{'y' if len(entries) == 1 else 'ies'} rejected, in "
            "spool/quarantine/ (each with a .reason file; delete them when read)",
            *(f"  {f}: {r}" for f, r in entries[-10:])]


# -- zen show / zen log ----------------------------------------------------------------


@dataclass(frozen=True)
class JobDetail:
    """A job's task, its state, its metrics (zen metrics JOB) and the last of its events."""

    job: str
    task: Task
    state: JobSnapshot
    events: list[dict[str, Any]]
    metrics: dict[str, Any] = field(default_factory=dict)
    workers: list[str] = field(default_factory=list)   # the jobs this one spawned (agent teams)

    def to_json(self) -> dict[str, Any]:
        return {"task": self.task.model_dump(mode="json"), "state": self.state.model_dump(mode="json"),
                "metrics": self.metrics, "events": self.events, "parent": self.task.parent,
                "workers": self.workers}


def job_detail(home: Home, ref: str, *, last_events: int = 10) -> JobDetail:
    job_id = resolve_job(home, ref)
    store = JobStore(home)
    timeline = store.events(job_id)
    events = timeline[-last_events:] if last_events > 0 else []
    fold: JobFold = metrics_snapshot.current(store.dir(job_id), job_id)
    # the workers it started, from its own timeline (team.spawned): no other job is read
    workers = [str(e["worker"]) for e in timeline if e.get("type") == EventType.TEAM_SPAWNED]
    return JobDetail(job_id, store.task(job_id), store.snapshot(job_id, write=False), events,
                     figures([fold], now=timestamp()), workers)


@dataclass(frozen=True)
class Timeline:
    """A job's events, as stored, in order."""

    job: str
    events: list[dict[str, Any]] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {"job": self.job, "events": self.events}


def timeline(home: Home, ref: str) -> Timeline:
    job_id = resolve_job(home, ref)
    return Timeline(job_id, JobStore(home).events(job_id))


def follow(home: Home, job_id: str, *, poll_s: float = 0.2) -> Iterator[list[dict[str, Any]]]:
    """A job's events in batches as they are appended, from the first; ends once the job is
    final and nothing new came."""
    store = JobStore(home)
    timeline = Follower(store.events_path(job_id))
    while True:
        new = timeline.read()
        if new:
            yield new
        elif store.snapshot(job_id, write=False).state.final:
            return
        else:
            time.sleep(poll_s)

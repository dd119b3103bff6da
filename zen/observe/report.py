"""`zen metrics`: figures of one job, or of the fleet (optionally one lane) over a time window,
in total and grouped by lane, agent or domain. Fleet figures are computed from the jobs.

Every job is read from its metrics.json brought up to date in memory (read commands write
nothing); a job with no telemetry still has what zen saw itself (guard decisions, turns, wall
time) and what its transcript or rollout said.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from zen.core.events import timestamp
from zen.core.model import JobStatus
from zen.errors import NotFound, UsageError
from zen.observe import limits, snapshot
from zen.observe.metrics import JobFold, figures, reconciliation
from zen.store import spool
from zen.store.jobs import JobStore
from zen.store.layout import Home

GROUPS = ("lane", "agent", "domain")


@dataclass
class MetricsReport:
    scope: str                              # "job" | "fleet"
    since: str | None                       # ISO time the window starts at (None: all time)
    until: str
    total: dict[str, Any]
    job: str | None = None
    lane: str | None = None
    by: str | None = None
    groups: dict[str, dict[str, Any]] = field(default_factory=dict)
    extra: dict[str, Any] = field(default_factory=dict)
    folds: list[JobFold] = field(default_factory=list, repr=False)   # what the total was folded from

    def per_job(self) -> list[dict[str, Any]]:
        """The figures of each job the total holds, over the same window, in the total's order."""
        return [{"job": f.job, **figures([f], self.since, self.until)} for f in self.folds]

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"scope": self.scope, "since": self.since, "until": self.until}
        if self.job:
            out["job"] = self.job
        if self.lane:
            out["lane"] = self.lane
        out.update(self.total)
        out.update(self.extra)
        if self.by:
            out["by"] = self.by
            out["groups"] = self.groups
        return out


def since_iso(since_s: float | None, now: float) -> str | None:
    return timestamp(now - since_s) if since_s is not None else None


def job_report(home: Home, job_id: str, since: str | None = None) -> MetricsReport:
    store = JobStore(home)
    if not store.exists(job_id):
        raise NotFound(f"job {job_id} has no record")
    fold = snapshot.current(store.dir(job_id), job_id)
    now = timestamp()
    state = store.snapshot(job_id, write=False).state
    extra: dict[str, Any] = {"name": fold.info["name"], "lane_name": fold.info["lane"],
                             "agent": fold.info["agent"], "domain": fold.info["domain"],
                             "state": state.value, "models": fold.models}
    rec = reconciliation(fold)
    if rec is not None:
        extra["reconciliation"] = rec
    against = limits.usage_of(home, fold)
    if against:
        extra["limits"] = against           # policy/guardian.yaml limits: max and used
    return MetricsReport("job", since, now, figures([fold], since, now), job=job_id, extra=extra, folds=[fold])


def fleet_report(home: Home, since: str | None = None, lane: str | None = None,
                 by: str | None = None) -> MetricsReport:
    if by is not None and by not in GROUPS:
        raise UsageError(f"--by must be one of {', '.join(GROUPS)}, not {by!r}")
    store = JobStore(home)
    now = timestamp()
    folds: list[JobFold] = []
    live = queued = 0
    for job_id in store.ids():
        fold = snapshot.current(store.dir(job_id), job_id)
        if lane is not None and fold.info["lane"] != lane:
            continue
        state = store.snapshot(job_id, write=False).state
        live += state.live
        queued += state is JobStatus.queued
        # a window holds the jobs active in it (a job that ended before it adds nothing)
        if since is None or (fold.last_at or "") >= since or state.live:
            folds.append(fold)
    pending = len(spool.pending(home)) if lane is None else 0
    extra = {"active_sessions": live, "tasks_in_progress": live + queued + pending,
             "tasks_queued": queued + pending}
    report = MetricsReport("fleet", since, now, figures(folds, since, now), lane=lane, by=by, extra=extra,
                           folds=folds)
    if by is not None:
        grouped: dict[str, list[JobFold]] = {}
        for fold in folds:
            grouped.setdefault(fold.info[by] or "-", []).append(fold)
        report.groups = {k: figures(v, since, now) for k, v in sorted(grouped.items())}
    return report

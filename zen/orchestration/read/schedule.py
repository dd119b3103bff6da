"""The queue as the supervisor sees it: facts from the job records, decisions from the pure
scheduler (zen.core.schedule), breaker state in control/breaker.json."""

from __future__ import annotations

import time
from typing import Any

from zen.core import schedule as core
from zen.core.ids import epoch_of
from zen.core.model import JobSnapshot, JobStatus
from zen.orchestration.safety import breaker
from zen.store import spool
from zen.store.config import Config
from zen.store.home import Home
from zen.store.jobs import JobStore


def is_automatic(snap: JobSnapshot, created_by: str) -> bool:
    """Work no human asked for just now: a retry, or a spawn requested by an agent."""
    return created_by != "human" or snap.attempts > 0


def facts(home: Home, snaps: list[JobSnapshot] | None = None) -> tuple[list[core.Queued], dict[str, core.DepState], int]:
    store = JobStore(home)
    # given none (zen queue), read them without publishing: a read command never writes
    snaps = snaps if snaps is not None else store.snapshots(write=False)
    by_id = {s.job: s for s in snaps}
    queued: list[core.Queued] = []
    for s in snaps:
        if s.state is not JobStatus.queued:
            continue
        task = store.task(s.job)
        queued.append(core.Queued(
            id=s.job, name=s.name, priority=task.priority, created_at=task.created_at,
            depends_on=tuple(task.depends_on), automatic=is_automatic(s, task.created_by),
            retry_at=epoch_of(s.retry_at),
        ))
    running = sum(1 for s in snaps if s.state.live)
    return queued, dep_states(home, queued, by_id), running


def dep_states(home: Home, queued: list[core.Queued], known: dict[str, JobSnapshot]) -> dict[str, core.DepState]:
    """The state of every job the queued ones depend on: from `known` snapshots, else the job
    record, else `queued` while the task still waits in the spool (absent = does not exist)."""
    store = JobStore(home)
    out: dict[str, core.DepState] = {}
    for q in queued:
        for dep in q.depends_on:
            if dep in out:
                continue
            snap = known.get(dep) or (store.snapshot(dep, write=False) if store.exists(dep) else None)
            if snap is not None:
                out[dep] = core.DepState(snap.state.value, snap.exit_code)
            elif (spool.new_dir(home) / f"{dep}.yaml").exists():
                out[dep] = core.DepState("queued")
    return out


# the breaker's file has one owner, zen.orchestration.safety.breaker; the names the scheduler's callers use
load_breaker = breaker.load_breaker
breaker_until = breaker.automatic_until
try_automatic_start = breaker.try_automatic


def plan(home: Home, now: float | None = None, snaps: list[JobSnapshot] | None = None) -> list[core.Decision]:
    cfg = Config.load(home)
    now = time.time() if now is None else now
    queued, deps, running = facts(home, snaps)
    return core.plan(queued, deps, running=running, max_concurrent=int(cfg.get("supervisor", "max_concurrent_tasks")),
                     breaker_until=breaker_until(home, cfg, now), now=now)


def breaker_status(home: Home, now: float | None = None) -> dict[str, Any]:
    return breaker.overall(home, Config.load(home), time.time() if now is None else now)

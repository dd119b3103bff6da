"""The queue as the supervisor sees it: facts from the job records, decisions from the pure
scheduler (zen.core.schedule), breaker state in control/breaker.json."""

from __future__ import annotations

import json
import time
from typing import Any

from zen.core import schedule as core
from zen.core.ids import parse_iso
from zen.core.model import CONTROL_VERSION, JobSnapshot, JobStatus
from zen.orchestration import breaker
from zen.store import spool
from zen.store.atomic import atomic_write, flocked
from zen.store.config import Config
from zen.store.home import Home
from zen.store.jobs import JobStore


def _epoch(ts: str | None) -> float | None:
    if not ts:
        return None
    try:
        return parse_iso(ts).timestamp()
    except ValueError:
        return None


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
            retry_at=_epoch(s.retry_at),
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


def load_breaker(home: Home) -> dict[str, Any]:
    try:
        data = json.loads(home.breaker.read_text())
        return data if isinstance(data, dict) else {}
    except (OSError, ValueError):
        return {}


def breaker_until(home: Home, cfg: Config, now: float) -> float | None:
    data = load_breaker(home)
    return core.breaker(
        [float(t) for t in data.get("automatic_starts", [])], now=now,
        window_s=cfg.seconds("breaker", "window"), limit=int(cfg.get("breaker", "max_automatic")),
        hold_s=cfg.seconds("breaker", "hold"), open_until=data.get("open_until"),
    )


def try_automatic_start(home: Home, cfg: Config, now: float) -> bool:
    """May one more piece of automatic work start now? Counts it when yes; when it would go
    over the limit, opens the breaker for the hold period and says no."""
    path = home.breaker
    with flocked(home.breaker_lock):
        data = load_breaker(home)
        window = cfg.seconds("breaker", "window")
        limit = int(cfg.get("breaker", "max_automatic"))
        starts = [float(t) for t in data.get("automatic_starts", []) if now - float(t) <= window]
        until = data.get("open_until")
        if until is not None and until > now:
            return False
        allowed = len(starts) + 1 <= limit
        if allowed:
            starts.append(now)
            until = None
        else:
            until = now + cfg.seconds("breaker", "hold")
        # the per-kind counts (zen.orchestration.breaker) share the file: kept as they are
        atomic_write(path, json.dumps({**data, "v": CONTROL_VERSION, "automatic_starts": starts,
                                       "open_until": until}) + "\n", durable=False)
    return allowed


def plan(home: Home, now: float | None = None, snaps: list[JobSnapshot] | None = None) -> list[core.Decision]:
    cfg = Config.load(home)
    now = time.time() if now is None else now
    queued, deps, running = facts(home, snaps)
    return core.plan(queued, deps, running=running, max_concurrent=int(cfg.get("supervisor", "max_concurrent_tasks")),
                     breaker_until=breaker_until(home, cfg, now), now=now)


def breaker_status(home: Home, now: float | None = None) -> dict[str, Any]:
    cfg = Config.load(home)
    now = time.time() if now is None else now
    data = load_breaker(home)
    window = cfg.seconds("breaker", "window")
    recent = [t for t in data.get("automatic_starts", []) if now - float(t) <= window]
    until = breaker_until(home, cfg, now)
    return {"open": until is not None, "open_until": until, "automatic_in_window": len(recent),
            "limit": int(cfg.get("breaker", "max_automatic")), "window_s": window,
            "kinds": breaker.status(home, cfg, now)}

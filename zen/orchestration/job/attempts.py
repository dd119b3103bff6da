"""Best of N, the reviewer's side (issue 37): a group's attempts side by side, and one picked.

    zen compare JOB|GROUP   each attempt: its state and exit, files and lines changed against its
                            base, the lane's checks, tokens and cost, wall time, guard denials
    zen pick JOB            lands that attempt (as zen land does: the checks gate it) and finishes
                            the others that still run; every attempt keeps its review branch

Recorded: `attempt.picked` on the one landed, `attempt.passed_over` on each other.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from zen.adapters import git as g
from zen.core.events import Actor
from zen.core.events import EventType as E
from zen.core.ids import parse_iso
from zen.core.results import Result
from zen.errors import NotFound, ZenError
from zen.orchestration.job import checks, control, land
from zen.orchestration.lanes import resolve_lane
from zen.orchestration.read.query import resolve_job
from zen.store.config import Config
from zen.store.home import Home
from zen.store.jobs import JobStore

_TOKENS = ("input_tokens", "output_tokens", "cache_read_input_tokens", "cache_creation_input_tokens",
           "cache_creation_1h_input_tokens")


def members(home: Home, ref: str) -> tuple[str, list[str]]:
    """(group, its jobs in the order dispatched) for a job of a group or the group's id."""
    store = JobStore(home)
    groups: dict[str, list[str]] = {}
    for job_id in store.ids():
        try:
            g_id = store.task(job_id).group
        except ZenError:
            continue
        if g_id:
            groups.setdefault(g_id, []).append(job_id)
    if ref in groups:
        return ref, sorted(groups[ref])
    job_id = resolve_job(home, ref)
    group = store.task(job_id).group
    if not group:
        raise NotFound(f"job {job_id} is not one of a group's attempts (zen dispatch --attempts N makes some)")
    return group, sorted(groups.get(group, [job_id]))


def _wall_s(start: str | None, end: str | None) -> float | None:
    if not start or not end:
        return None
    try:
        return round((parse_iso(end) - parse_iso(start)).total_seconds(), 1)
    except ValueError:
        return None


def row(home: Home, job_id: str) -> dict[str, Any]:
    store = JobStore(home)
    snap = store.snapshot(job_id)
    task = store.task(job_id)
    out: dict[str, Any] = {"job": job_id, "name": snap.name, "agent": snap.agent, "state": snap.state.value,
                           "exit_code": snap.exit_code, "files": None, "insertions": None, "deletions": None}
    if snap.harvest_commit and snap.base_commit:
        try:
            repo = Path(resolve_lane(Config.load(home), task).repo)
            files, ins, dels, _ = g.diff_numbers(repo, snap.base_commit, snap.harvest_commit)
            out.update(files=files, insertions=ins, deletions=dels)
        except ZenError:
            pass
    run = checks.latest_run(store.events(job_id))
    out["checks"] = None if run is None else ("passed" if run.passed else "failed" if run.failed else "running")
    usage = snap.usage or {}
    out["tokens"] = int(sum(usage.get(k, 0) for k in _TOKENS))
    out["cost_usd"] = round(float(usage.get("cost_usd", 0.0)), 6)
    out["wall_s"] = _wall_s(snap.started_at, snap.ended_at)
    out["denials"] = int((snap.guard or {}).get("denied", 0))
    out["landed"] = bool(snap.landed_commit)
    return out


@dataclass(frozen=True)
class Compared(Result):
    group: str
    attempts: list[dict[str, Any]] = field(default_factory=list)


def compare(home: Home, ref: str) -> Compared:
    group, jobs = members(home, ref)
    return Compared(group, [row(home, j) for j in jobs])


@dataclass(frozen=True)
class Picked(Result):
    group: str
    job: str
    commit: str
    finished: list[str] = field(default_factory=list)     # the others that still ran
    kept: list[str] = field(default_factory=list)         # the others' review branches, all kept


def pick(home: Home, ref: str, *, force: bool = False) -> Picked:
    """Land `ref` (gated by the lane's checks unless `force`), finish the group's other live
    attempts, keep every review branch."""
    job_id = resolve_job(home, ref)
    group, jobs = members(home, job_id)
    landed = land.land(home, job_id, force=force)
    store = JobStore(home)
    others = [j for j in jobs if j != job_id]
    finished = []
    for other in others:
        if store.snapshot(other).state.live:
            try:
                control.finish(home, other)
                finished.append(other)
            except ZenError:
                pass    # it ended meanwhile
        store.append(other, E.ATTEMPT_PASSED_OVER, actor=Actor.HUMAN, group=group, picked=job_id)
    store.append(job_id, E.ATTEMPT_PICKED, actor=Actor.HUMAN, group=group, others=others)
    kept = [b for b in (store.snapshot(o).review_branch for o in others) if b]
    return Picked(group, job_id, landed.commit, finished, kept)


__all__ = ["Compared", "Picked", "compare", "members", "pick", "row"]

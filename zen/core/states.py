"""The job state machine: one reducer that folds events into a JobSnapshot.

state.json is always `replay(events)`; the supervisor, hooks and CLI append events and this
function decides what they mean. Unknown event types are kept in the timeline and leave the
state as it was, so new event types never break old readers.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from zen.core.model import JobSnapshot, JobStatus

S = JobStatus

# event type -> state it moves a job to (None: the state does not change)
_MOVES: dict[str, JobStatus | None] = {
    "task.received": S.queued,
    "job.queued": S.queued,
    "retry.scheduled": S.queued,
    "preflight.passed": None,
    "worktree.created": S.starting,
    "agent.spawned": S.working,
    "turn.working": S.working,
    "turn.waiting": S.waiting,
    "input.sent": None,
    "agent.exited": S.exited,
    "harvest.done": S.harvested,
    "job.failed": S.failed,
    "preflight.failed": None,
    "job.cancelled": S.cancelled,
}

# from-state -> states it may move to. Anything else is recorded but ignored for the state.
_ALLOWED: dict[JobStatus, frozenset[JobStatus]] = {
    S.queued: frozenset({S.queued, S.starting, S.working, S.failed, S.cancelled}),
    S.starting: frozenset({S.starting, S.working, S.waiting, S.exited, S.failed, S.cancelled, S.queued}),
    # a harvest of a live agent (zen harvest) is a snapshot: the job stays working / waiting
    S.working: frozenset({S.working, S.waiting, S.exited, S.failed, S.cancelled}),
    S.waiting: frozenset({S.working, S.waiting, S.exited, S.failed, S.cancelled}),
    S.exited: frozenset({S.harvested, S.failed, S.cancelled, S.queued}),
    # a re-harvest (zen harvest twice) keeps the job harvested with the newer commit
    S.harvested: frozenset({S.harvested}),
    S.failed: frozenset({S.failed}),
    S.cancelled: frozenset(),
}


def can_move(current: JobStatus, target: JobStatus) -> bool:
    return target in _ALLOWED[current]


def apply(snap: JobSnapshot, ev: dict[str, Any]) -> JobSnapshot:
    """Fold one event into the snapshot (mutates and returns it)."""
    etype = ev.get("type", "")
    seq = int(ev.get("seq", snap.seq + 1))
    snap.seq = seq
    snap.revision += 1
    ts = ev.get("ts")
    snap.updated_at = ts

    if etype == "task.received":
        task = ev.get("task") or {}
        snap.name = task.get("name", snap.name)
        snap.agent = task.get("agent", snap.agent)
        snap.lane = task.get("lane") or task.get("repo") or snap.lane
        snap.domain = task.get("domain", snap.domain)
        snap.priority = int(task.get("priority", snap.priority))
        snap.created_at = task.get("created_at", ts)
    elif etype == "worktree.created":
        snap.worktree = ev.get("path", snap.worktree)
        snap.branch = ev.get("branch", snap.branch)
        snap.base_commit = ev.get("base_commit", snap.base_commit)
        snap.attempts += 1
    elif etype == "agent.spawned":
        snap.tmux_session = ev.get("session", snap.tmux_session)
        snap.tmux_target = ev.get("target", snap.tmux_target)
        snap.started_at = snap.started_at or ts
    elif etype == "turn.waiting":
        snap.turns += 1 if snap.state is not S.waiting else 0
    elif etype == "agent.exited":
        snap.exit_code = ev.get("exit_code")
        snap.exit_signal = ev.get("signal")
        snap.ended_at = ts
    elif etype == "harvest.done":
        snap.review_branch = ev.get("branch", snap.review_branch)
        snap.harvest_commit = ev.get("commit", snap.harvest_commit)
    elif etype == "usage":
        for key in ("input_tokens", "output_tokens", "cache_creation_input_tokens",
                    "cache_read_input_tokens", "cost_usd"):
            if key in ev:
                snap.usage[key] = snap.usage.get(key, 0) + float(ev[key])
    elif etype == "output":
        snap.last_output_at = ts
    elif etype in ("guard.allowed", "guard.denied"):
        key = etype.split(".")[1]
        snap.guard[key] = snap.guard.get(key, 0) + 1
    elif etype == "job.cancelled":
        snap.cancelled = True
        snap.ended_at = snap.ended_at or ts
    elif etype == "job.timeout":
        snap.timed_out = True
    elif etype == "retry.scheduled":
        snap.retry_at = ev.get("at")
    elif etype == "job.failed":
        snap.ended_at = snap.ended_at or ts

    target = _MOVES.get(etype)
    if target is not None and target is not snap.state:
        if snap.cancelled and target is S.harvested:
            pass  # a cancelled job stays cancelled; harvest.done still records its branch
        elif can_move(snap.state, target):
            snap.state = target
    if target is not None and snap.state is target:
        snap.reason = ev.get("reason") if target in (S.waiting, S.failed, S.queued) else None
    return snap


def replay(job_id: str, events: Iterable[dict[str, Any]]) -> JobSnapshot:
    snap = JobSnapshot(job=job_id)
    for ev in events:
        apply(snap, ev)
    return snap

"""The job state machine: one reducer that folds events into a JobSnapshot.

state.json is always `replay(events)`; the supervisor, hooks and CLI append events and this
function decides what they mean. Unknown event types are kept in the timeline and leave the
state as it was, so new event types never break old readers.

The reducer works on a JobSnapshot (zen.core.model) or on a Snap (zen.core.jobstate: the same
fields, no pydantic), so the lean readers of `zen status` fold with the very same rules.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from zen.core.events import EventType, usable
from zen.core.jobstate import JobStatus, Snap

TYPE_CHECKING = False
if TYPE_CHECKING:
    from zen.core.model import JobSnapshot

S = JobStatus
E = EventType

# event type -> state it moves a job to (None: the state does not change)
_MOVES: dict[str, JobStatus | None] = {
    E.TASK_RECEIVED: S.queued,
    E.JOB_QUEUED: S.queued,
    E.RETRY_SCHEDULED: S.queued,
    E.PREFLIGHT_PASSED: None,
    E.WORKTREE_CREATED: S.starting,
    E.AGENT_SPAWNED: S.working,
    E.TURN_WORKING: S.working,
    E.TURN_WAITING: S.waiting,
    E.INPUT_SENT: None,
    E.AGENT_EXITED: S.exited,
    E.HARVEST_DONE: S.harvested,
    E.JOB_FAILED: S.failed,
    E.PREFLIGHT_FAILED: None,
    E.JOB_CANCELLED: S.cancelled,
    E.JOB_PAUSED: S.paused,
    E.REMOTE_SUBMITTED: S.working,   # a turn on a Ray cluster (DESIGN 14) is under way
    E.RECOVERY_STARTED: S.starting,    # zen recover: a new session in the same worktree
}

# from-state -> states it may move to. Anything else is recorded but ignored for the state.
_ALLOWED: dict[JobStatus, frozenset[JobStatus]] = {
    S.queued: frozenset({S.queued, S.starting, S.working, S.failed, S.cancelled}),
    S.starting: frozenset({S.starting, S.working, S.waiting, S.exited, S.failed, S.cancelled, S.queued,
                           S.paused}),
    # a harvest of a live agent (zen harvest) is a snapshot: the job stays working / waiting
    S.working: frozenset({S.working, S.waiting, S.exited, S.failed, S.cancelled, S.paused}),
    S.waiting: frozenset({S.working, S.waiting, S.exited, S.failed, S.cancelled, S.paused}),
    # a stopped agent makes no turns: only job.resumed (to the state it was paused in) or its end
    S.paused: frozenset({S.paused, S.exited, S.failed, S.cancelled}),
    S.exited: frozenset({S.harvested, S.failed, S.cancelled, S.queued, S.starting}),
    # a re-harvest (zen harvest twice) keeps the job harvested with the newer commit; a recovery
    # (zen recover) starts it again in its worktree
    S.harvested: frozenset({S.harvested, S.starting}),
    S.failed: frozenset({S.failed, S.starting}),
    S.cancelled: frozenset(),
}


def can_move(current: JobStatus, target: JobStatus) -> bool:
    return target in _ALLOWED[current]


Event = dict[str, Any]


def _task_received(snap: JobSnapshot, ev: Event, ts: str | None) -> None:
    task = ev.get("task") or {}
    snap.name = task.get("name", snap.name)
    snap.agent = task.get("agent", snap.agent)
    snap.lane = task.get("lane") or task.get("repo") or snap.lane
    snap.domain = task.get("domain", snap.domain)
    snap.priority = int(task.get("priority", snap.priority))
    snap.created_at = task.get("created_at", ts)
    snap.parent = task.get("parent") or snap.parent
    snap.created_by = task.get("created_by") or snap.created_by
    snap.group = task.get("group") or snap.group


def _worktree_created(snap: JobSnapshot, ev: Event, ts: str | None) -> None:
    snap.worktree = ev.get("path", snap.worktree)
    snap.branch = ev.get("branch", snap.branch)
    snap.base_commit = ev.get("base_commit", snap.base_commit)
    snap.attempts += 1


def _agent_spawned(snap: JobSnapshot, ev: Event, ts: str | None) -> None:
    snap.tmux_session = ev.get("session", snap.tmux_session)
    snap.tmux_target = ev.get("target", snap.tmux_target)
    snap.started_at = snap.started_at or ts
    if ev.get("kind") == "attached":   # `zen run`: the agent runs in the user's own terminal
        snap.executor = "attached"


def _recovery_started(snap: JobSnapshot, ev: Event, ts: str | None) -> None:
    if snap.state is not S.cancelled:
        snap.exit_code = snap.exit_signal = snap.ended_at = None


def _turn_waiting(snap: JobSnapshot, ev: Event, ts: str | None) -> None:
    snap.turns += 1 if snap.state is not S.waiting else 0


def _agent_exited(snap: JobSnapshot, ev: Event, ts: str | None) -> None:
    snap.exit_code = ev.get("exit_code")
    snap.exit_signal = ev.get("signal")
    snap.ended_at = ts


def _harvest_done(snap: JobSnapshot, ev: Event, ts: str | None) -> None:
    snap.review_branch = ev.get("branch", snap.review_branch)
    snap.harvest_commit = ev.get("commit", snap.harvest_commit)


USAGE_SUMS = ("input_tokens", "output_tokens", "cache_creation_input_tokens", "cache_read_input_tokens",
              "cost_usd", "cache_creation_1h_input_tokens", "api_calls", "api_errors")
# api.request / api.error (OpenTelemetry) are summed apart, under these names: the same calls
# also reach the timeline from the transcript, and the observatory chooses one source per job
OTEL_SUMS = {"cost_usd": "otel_cost_usd", "input_tokens": "otel_tokens", "output_tokens": "otel_tokens",
             "cache_creation_input_tokens": "otel_tokens", "cache_read_input_tokens": "otel_tokens"}


def _usage(snap: JobSnapshot, ev: Event, ts: str | None) -> None:
    for key in USAGE_SUMS:
        if isinstance(ev.get(key), int | float) and not isinstance(ev.get(key), bool):
            snap.usage[key] = snap.usage.get(key, 0) + float(ev[key])


def _api_request(snap: JobSnapshot, ev: Event, ts: str | None) -> None:
    snap.usage["otel_api_calls"] = snap.usage.get("otel_api_calls", 0) + 1
    for key, into in OTEL_SUMS.items():
        if isinstance(ev.get(key), int | float) and not isinstance(ev.get(key), bool):
            snap.usage[into] = snap.usage.get(into, 0) + float(ev[key])


def _api_error(snap: JobSnapshot, ev: Event, ts: str | None) -> None:
    snap.usage["otel_api_errors"] = snap.usage.get("otel_api_errors", 0) + 1


def _output(snap: JobSnapshot, ev: Event, ts: str | None) -> None:
    snap.last_output_at = ts


def _guard_allowed(snap: JobSnapshot, ev: Event, ts: str | None) -> None:
    snap.guard["allowed"] = snap.guard.get("allowed", 0) + 1


def _guard_denied(snap: JobSnapshot, ev: Event, ts: str | None) -> None:
    snap.guard["denied"] = snap.guard.get("denied", 0) + 1


def _anomaly_flagged(snap: JobSnapshot, ev: Event, ts: str | None) -> None:
    snap.anomalies += 1
    snap.anomaly = str(ev.get("message") or ev.get("what") or "") or None


def _check_started(snap: JobSnapshot, ev: Event, ts: str | None) -> None:
    snap.checks = "running"
    snap.checks_left = len(ev.get("checks") or [])


def _check_passed(snap: JobSnapshot, ev: Event, ts: str | None) -> None:
    if snap.checks == "running":
        snap.checks_left = max(0, snap.checks_left - 1)
        if not snap.checks_left:
            snap.checks = "passed"


def _check_failed(snap: JobSnapshot, ev: Event, ts: str | None) -> None:
    snap.checks, snap.checks_left = "failed", 0


def _job_cancelled(snap: JobSnapshot, ev: Event, ts: str | None) -> None:
    snap.cancelled = True
    snap.ended_at = snap.ended_at or ts


def _job_timeout(snap: JobSnapshot, ev: Event, ts: str | None) -> None:
    snap.timed_out = True


def _retry_scheduled(snap: JobSnapshot, ev: Event, ts: str | None) -> None:
    snap.retry_at = ev.get("at")


def _job_failed(snap: JobSnapshot, ev: Event, ts: str | None) -> None:
    snap.ended_at = snap.ended_at or ts


def _job_paused(snap: JobSnapshot, ev: Event, ts: str | None) -> None:
    if snap.state in (S.starting, S.working, S.waiting):
        snap.paused_from = snap.state.value
        snap.paused_reason = snap.reason
        snap.paused_at = ts


def _job_resumed(snap: JobSnapshot, ev: Event, ts: str | None) -> None:
    """Back to the state it was paused in (a stopped agent cannot have changed its turn)."""
    if snap.state is not S.paused:
        return
    snap.state = S(snap.paused_from or S.working)
    snap.reason = snap.paused_reason
    snap.paused_s += float(ev.get("paused_s") or 0.0)
    snap.paused_from = snap.paused_at = snap.paused_reason = None


def _job_landed(snap: JobSnapshot, ev: Event, ts: str | None) -> None:
    snap.landed_commit = ev.get("commit", snap.landed_commit)


def _remote_submit(snap: JobSnapshot, ev: Event, ts: str | None) -> None:
    snap.executor = "ray"
    snap.remote_job = ev.get("submission_id", snap.remote_job)
    snap.remote_address = ev.get("address", snap.remote_address)


def _remote_submitted(snap: JobSnapshot, ev: Event, ts: str | None) -> None:
    snap.started_at = snap.started_at or ts


def _remote_started(snap: JobSnapshot, ev: Event, ts: str | None) -> None:
    snap.remote_host = ev.get("host", snap.remote_host)


# event type -> what it records in the snapshot besides the state (a dict: one lookup per event)
_FOLD: dict[str, Callable[[JobSnapshot, Event, str | None], None]] = {
    E.TASK_RECEIVED: _task_received,
    E.WORKTREE_CREATED: _worktree_created,
    E.AGENT_SPAWNED: _agent_spawned,
    E.TURN_WAITING: _turn_waiting,
    E.AGENT_EXITED: _agent_exited,
    E.HARVEST_DONE: _harvest_done,
    E.USAGE: _usage,
    E.API_REQUEST: _api_request,
    E.API_ERROR: _api_error,
    E.OUTPUT: _output,
    E.GUARD_ALLOWED: _guard_allowed,
    E.GUARD_DENIED: _guard_denied,
    E.ANOMALY_FLAGGED: _anomaly_flagged,
    E.CHECK_STARTED: _check_started,
    E.CHECK_PASSED: _check_passed,
    E.CHECK_FAILED: _check_failed,
    E.JOB_CANCELLED: _job_cancelled,
    E.JOB_TIMEOUT: _job_timeout,
    E.RETRY_SCHEDULED: _retry_scheduled,
    E.JOB_FAILED: _job_failed,
    E.JOB_PAUSED: _job_paused,
    E.JOB_RESUMED: _job_resumed,
    E.JOB_LANDED: _job_landed,
    E.REMOTE_SUBMIT: _remote_submit,
    E.REMOTE_SUBMITTED: _remote_submitted,
    E.REMOTE_STARTED: _remote_started,
    E.RECOVERY_STARTED: _recovery_started,
}
_WITH_REASON = (S.waiting, S.failed, S.queued)


def apply(snap: JobSnapshot, ev: Event) -> JobSnapshot:
    """Fold one event into the snapshot (mutates and returns it)."""
    if not usable(ev):
        # a line with a wrong-typed field (a damaged or foreign writer): kept in the timeline,
        # reported by `zen doctor`, never folded, so no reader can trip on it
        if isinstance(ev, dict) and isinstance(ev.get("seq"), int) and not isinstance(ev["seq"], bool):
            snap.seq = ev["seq"]
        return snap
    etype = ev["type"]
    snap.seq = ev.get("seq", snap.seq + 1)
    snap.revision += 1
    ts = ev.get("ts")
    snap.updated_at = ts
    fold = _FOLD.get(etype)
    if fold is not None:
        try:
            fold(snap, ev, ts)
        except (TypeError, ValueError, AttributeError):
            pass  # a nested value of the wrong shape (e.g. task.received's task): the move still counts
    target = _MOVES.get(etype)
    if target is None:
        return snap
    if target is not snap.state:
        if snap.cancelled and target is S.harvested:
            pass  # a cancelled job stays cancelled; harvest.done still records its branch
        elif can_move(snap.state, target):
            snap.state = target
    if snap.state is target:
        snap.reason = ev.get("reason") if target in _WITH_REASON else None
    return snap


def replay(job_id: str, events: Iterable[dict[str, Any]]) -> JobSnapshot:
    # here: the reducer itself stays free of pydantic for the lean readers (replay_plain)
    from zen.core.model import JobSnapshot

    snap = JobSnapshot(job=job_id)
    for ev in events:
        apply(snap, ev)
    return snap


def replay_plain(job_id: str, events: Iterable[dict[str, Any]], start: Snap | None = None) -> Snap:
    """`replay` into a Snap (from `start` when given: a state.json to bring up to date)."""
    snap = start if start is not None else Snap(job_id)
    for ev in events:
        apply(snap, ev)  # type: ignore[arg-type]  # a Snap has JobSnapshot's fields
    return snap

"""The team tools besides spawn (DESIGN 13): status, wait, report, control, message, leases, brief.

Ownership: a job sees and controls only its own recorded children (a human, any job); a worker
reports to its parent and may message it, never a sibling. Control is compare-and-set on the
target's `revision` (its timeline's length: every event is one revision): the check and the
`team.control` record happen under the target's job lock, so of two controllers with the same
expected revision exactly one wins and the other learns the revision now.

Messages: to an agent waiting at its prompt, typed in (input.sent); to one at work, queued
(`team.message` with queued: true) and delivered at its next turn boundary, by the Stop hook
(Claude Code and the sim: `zen hook Stop` answers with the messages, so the agent goes on with
them) or by the supervisor typing them once the turn has ended (`team.delivered` records each
delivery once, whoever makes it).
"""

from __future__ import annotations

import time
import uuid
from typing import Any

from zen.adapters.tmux import Tmux
from zen.coord import service
from zen.core import messages
from zen.core.events import EventType as E
from zen.core.inert import inert_text
from zen.core.model import JobStatus
from zen.errors import NotFound, UsageError, ZenError
from zen.orchestration.job import control as job_control
from zen.orchestration.job import pause
from zen.orchestration.teams.workers import (
    Caller,
    Refused,
    RevisionMismatch,
    children_of,
    worker_of,
)
from zen.store import events as ev_store
from zen.store.config import Config
from zen.store.home import Home
from zen.store.jobs import JobStore

REPORT_STATUSES = ("done", "blocked", "progress")
ACTIONS = ("pause", "resume", "cancel", "finish", "continue")
ENDED = frozenset({JobStatus.exited, JobStatus.harvested, JobStatus.failed, JobStatus.cancelled})
CONTINUE_TEXT = "Continue with your goal. When it is done, report it with agent_report (status done)."
MAX_TEXT = 20000


# -- reading a worker ---------------------------------------------------------------------------

def _last(events: list[dict[str, Any]], *types: str) -> dict[str, Any] | None:
    for ev in reversed(events):
        if ev.get("type") in types:
            return dict(ev)
    return None


def worker_view(home: Home, job_id: str) -> dict[str, Any]:
    """What a parent sees of one worker: state, revision, its last report, whether it is settled
    (reported done or blocked, or its agent gone)."""
    store = JobStore(home)
    if not store.exists(job_id):
        return {"id": job_id, "state": "pending", "revision": 0, "settled": False, "report": None}
    snap = store.snapshot(job_id, write=False)
    events = store.events(job_id)
    report = _last(events, E.TEAM_REPORT)
    task = store.task(job_id)
    goal_end = _last(events, E.GOAL_DONE, E.GOAL_BLOCKED, E.GOAL_STOPPED)
    # a goal's worker reports blockers along the way: only its goal's end (or a done) settles it
    settle_on = ("done",) if task.goal == "until-done" else ("done", "blocked")
    settled = snap.state in ENDED or bool(report and report.get("status") in settle_on) or goal_end is not None
    return {
        "id": job_id, "name": snap.name, "state": snap.state.value, "reason": snap.reason,
        "revision": snap.revision, "parent": task.parent, "agent": snap.agent, "goal": task.prompt[:2000],
        "until_done": task.goal == "until-done",
        "report": None if report is None else {k: report.get(k) for k in ("status", "summary", "blocker", "ts")},
        "goal_end": None if goal_end is None else {k: goal_end.get(k) for k in ("type", "reason", "blocker", "turns")},
        "settled": settled, "exit_code": snap.exit_code, "branch": snap.branch,
        "review_branch": snap.review_branch, "worktree": snap.worktree,
    }


def _targets(home: Home, caller: Caller, ids: list[str] | None) -> list[str]:
    if not ids:
        if caller.job is None:
            raise UsageError("name the jobs to look at")
        return children_of(home, caller.job)
    return [worker_of(home, caller, i).id for i in ids]


def status(home: Home, caller: Caller, ids: list[str] | None = None) -> list[dict[str, Any]]:
    """The caller's workers (all of them, or `ids`), as worker_view shows them."""
    return [worker_view(home, i) for i in _targets(home, caller, ids)]


def wait(home: Home, caller: Caller, ids: list[str] | None = None, timeout_s: float = 60.0,
         poll_s: float = 0.25) -> dict[str, Any]:
    """Hold until every named worker is settled or `timeout_s` passed (capped by teams.wait_max):
    {done, waited_s, workers}. A report returned here counts as delivered to the parent."""
    cap = Config.load(home).seconds("teams", "wait_max")
    timeout_s = max(0.0, min(float(timeout_s), cap))
    targets = _targets(home, caller, ids)
    start = time.monotonic()
    while True:
        views = [worker_view(home, i) for i in targets]
        done = all(v["settled"] for v in views)
        if done or time.monotonic() - start >= timeout_s:
            break
        time.sleep(poll_s)
    if caller.job is not None:
        _mark_reports_seen(home, caller.job, [v["id"] for v in views if v["settled"]])
    return {"done": done, "waited_s": round(time.monotonic() - start, 3), "workers": views}


def _mark_reports_seen(home: Home, parent: str, workers: list[str]) -> None:
    """The queued report messages of these workers reached the parent through agent_wait."""
    store = JobStore(home)
    wanted = set(workers)
    for msg in pending_messages(store.events(parent)):
        if msg.get("kind") == "report" and msg.get("sender") in {f"job:{w}" for w in wanted}:
            claim_delivery(home, parent, str(msg["id"]), "wait")


# -- reports ---------------------------------------------------------------------------------------

def report(home: Home, caller: Caller, status: str, summary: str = "", blocker: str = "") -> dict[str, Any]:
    """A worker's report on its own job (done | blocked | progress); its parent gets it as a
    message (queued for its next turn boundary, or typed in when it waits)."""
    if caller.job is None:
        raise Refused("a report comes from a job's agent (there is no job here)")
    if status not in REPORT_STATUSES:
        raise UsageError(f"status must be one of {', '.join(REPORT_STATUSES)} (not {status!r})")
    if status == "blocked" and not blocker.strip():
        raise UsageError("a blocked report says what blocks it (blocker)")
    store = JobStore(home)
    task = store.task(caller.job)
    fields: dict[str, Any] = {"status": status, "parent": task.parent}
    if summary:
        fields["summary"] = summary[:MAX_TEXT]
    if blocker:
        fields["blocker"] = blocker[:2000]
    delivered = None
    # a goal's blockers go to the parent once the goal stops as blocked (zen.orchestration.loop.goals)
    tell = status == "done" or (status == "blocked" and task.goal != "until-done")
    if task.parent and tell and store.exists(task.parent) \
            and store.snapshot(task.parent, write=False).state.live:
        text = f"Worker {caller.job} ({task.name}) reports {status}"
        text += f": {summary}" if summary else ""
        text += f" Blocker: {blocker}" if blocker else ""
        # the parent's message first: an agent_wait that sees the report finds it there to mark seen
        delivered = send_to(home, Caller(caller.job), task.parent, text, kind="report")
    ev = store.append(caller.job, E.TEAM_REPORT, actor=caller.actor, **fields)
    return {"job": caller.job, "seq": ev["seq"], "status": status, "parent": task.parent,
            "parent_message": delivered}


# -- control -----------------------------------------------------------------------------------------

def control(home: Home, caller: Caller, job_id: str, action: str, expected_revision: int | None) -> dict[str, Any]:
    """pause | resume | cancel | finish | continue a worker, if its revision is still the one the
    caller saw (RevisionMismatch with the current one otherwise)."""
    if action not in ACTIONS:
        raise UsageError(f"action must be one of {', '.join(ACTIONS)} (not {action!r})")
    if expected_revision is None and not caller.is_human:
        raise UsageError("expected_revision is required: read the worker's status and pass its revision")
    task = worker_of(home, caller, job_id)
    job_id = task.id
    store = JobStore(home)
    if not store.exists(job_id):
        raise ZenError(f"job {job_id} is still waiting in the spool; control it once it has started")
    seen: dict[str, int] = {}

    def moved(events: list[dict[str, Any]]) -> bool:
        seen["revision"] = len(events)
        return expected_revision is not None and len(events) != expected_revision

    fields: dict[str, Any] = {"target": job_id, "action": action, "ok": True, "by": caller.label}
    if expected_revision is not None:
        fields["expected_revision"] = int(expected_revision)
    ev = ev_store.append_unless(store.dir(job_id), job_id, E.TEAM_CONTROL, moved, caller.actor, **fields)
    if ev is None:
        raise RevisionMismatch(job_id, int(expected_revision or 0), seen["revision"])
    result = _act(home, caller, job_id, action)
    snap = store.snapshot(job_id)
    return {"id": job_id, "action": action, "state": snap.state.value, "revision": snap.revision,
            **({"detail": result} if result else {})}


def _act(home: Home, caller: Caller, job_id: str, action: str) -> dict[str, Any] | None:
    if action == "pause":
        return pause.pause(home, job_id, by=caller.label).to_json()
    if action == "resume":
        return pause.resume(home, job_id, by=caller.label).to_json()
    if action == "cancel":
        return job_control.cancel(home, job_id, reason=f"cancelled by {caller.label}", actor=caller.actor).to_json()
    if action == "finish":
        return job_control.finish(home, job_id, actor=caller.actor).to_json()
    return send_to(home, caller, job_id, CONTINUE_TEXT, kind="continue")


# -- messages ----------------------------------------------------------------------------------------

def pending_messages(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Queued team.message events with no team.delivered yet, oldest first."""
    return [dict(m) for m in messages.pending(events)]


def claim_delivery(home: Home, job_id: str, msg_id: str, via: str) -> bool:
    """Record that message `msg_id` reached the agent, once: False when someone already did."""
    store = JobStore(home)
    return ev_store.append_unless(store.dir(job_id), job_id, E.TEAM_DELIVERED,
                                  lambda evs: messages.delivered(evs, msg_id), "supervisor",
                                  id=msg_id, via=via) is not None


def message(home: Home, caller: Caller, job_id: str, text: str) -> dict[str, Any]:
    """A message to one of the caller's workers or to its parent."""
    if not text.strip():
        raise UsageError("the message is empty")
    store = JobStore(home)
    if caller.job is not None:
        parent = store.task(caller.job).parent
        if job_id != parent:
            worker_of(home, caller, job_id)   # refused unless it is the caller's own worker
    else:
        job_id = worker_of(home, caller, job_id).id
    if not store.exists(job_id):
        raise NotFound(f"job {job_id} has not started yet; message it once it runs")
    return send_to(home, caller, job_id, text, kind="message")


def send_to(home: Home, caller: Caller, job_id: str, text: str, kind: str) -> dict[str, Any]:
    """Type `text` into a waiting agent; queue it for an agent at work."""
    store = JobStore(home)
    snap = store.snapshot(job_id, write=False)
    if not snap.state.live:
        raise ZenError(f"job {job_id} is {snap.state.value}: there is no agent to give the message to")
    msg_id = uuid.uuid4().hex[:12]
    # an agent's text reaches the other agent as text only: no Enter, no escape sequence (H6)
    text = inert_text(text[:MAX_TEXT])
    waiting = messages.at_prompt(store.events(job_id), snap.state is JobStatus.waiting)
    store.append(job_id, E.TEAM_MESSAGE, actor=caller.actor, target=job_id, text=text, id=msg_id,
                 sender=caller.label, queued=not waiting, kind=kind)
    if not waiting:
        return {"id": msg_id, "job": job_id, "delivered": False, "queued": True}
    ok = type_messages(home, job_id, [{"id": msg_id, "text": text, "sender": caller.label}], actor=caller.actor)
    return {"id": msg_id, "job": job_id, "delivered": ok, "queued": False}


def type_messages(home: Home, job_id: str, msgs: list[dict[str, Any]], actor: str = "supervisor") -> bool:
    """Type messages into the job's pane (recorded as input.sent and team.delivered)."""
    store = JobStore(home)
    snap = store.snapshot(job_id, write=False)
    text = messages.text(msgs)
    tmux = Tmux.for_home(home)
    info = tmux.pane(snap.tmux_session) if snap.tmux_session else None
    if info is None or info.dead:
        return False
    for m in msgs:
        claim_delivery(home, job_id, str(m["id"]), "typed")
    store.append(job_id, E.INPUT_SENT, actor=actor, text=text[:2000], chars=len(text))
    try:
        # one paste that begins with zen's label, never a line of the sender's own (H6)
        tmux.send_text(info.pane_id, text, inert=True, **job_control.typing_of(snap.agent))
    except ZenError as exc:
        store.append(job_id, E.INPUT_FAILED, actor=actor, reason=str(exc))
        return False
    return True


def deliver_queued(home: Home, job_id: str) -> int:
    """At a turn's end: type the messages still queued for the job. How many were delivered."""
    msgs = pending_messages(JobStore(home).events(job_id))
    if not msgs:
        return 0
    return len(msgs) if type_messages(home, job_id, msgs) else 0


# -- leases and the brief ------------------------------------------------------------------------------

def lock(home: Home, caller: Caller, path: str, *, shared: bool = False, reason: str = "") -> dict[str, Any]:
    if caller.job is None:
        raise Refused("agent_lock leases a path for a job (there is no job here)")
    return service.lock(home, caller.job, path, shared=shared, reason=reason, by="agent").to_json()


def unlock(home: Home, caller: Caller, paths: list[str] | None = None) -> list[dict[str, Any]]:
    if caller.job is None:
        raise Refused("agent_unlock ends a job's leases (there is no job here)")
    return [v.to_json() for v in service.unlock(home, caller.job, paths or None, why="released by the agent")]


def brief(home: Home, caller: Caller) -> dict[str, Any]:
    """The caller's own job: its goal, parent, workers, handoff and the coordination agreement."""
    if caller.job is None:
        raise Refused("get_agent_brief describes a job (there is no job here)")
    store = JobStore(home)
    task = store.task(caller.job)
    snap = store.snapshot(caller.job, write=False)
    handoff = store.paths(caller.job).handoff
    try:
        text = handoff.read_text()
    except OSError:
        text = ""
    return {"id": caller.job, "name": task.name, "goal": task.prompt, "until_done": task.goal == "until-done",
            "parent": task.parent, "workers": children_of(home, caller.job), "lane": snap.lane,
            "worktree": snap.worktree, "branch": snap.branch, "paths": task.paths, "revision": snap.revision,
            "handoff": text}


__all__ = ["brief", "control", "deliver_queued", "lock", "message", "pending_messages", "report", "status",
           "unlock", "wait", "worker_view"]

"""Turns on a Ray cluster, the supervisor's side (DESIGN section 14): what any process (the
supervisor, `zen cancel`, the kill switch) does to a job whose turns run as Ray jobs.

A job's timeline, in order:

    preflight.passed, worktree.created      as for a local job: the supervisor's worktree is
                                            where the work lands and what harvest reads
    remote.submit {submission_id}           recorded BEFORE Ray is asked: after a crash between
                                            the two, Ray is asked for that id, and the turn is
                                            submitted only if Ray never saw it
    remote.submitted                        Ray took the job (state working)
    ...the worker's own events              guard.*, turn.*, usage, remote.started / pushed /
                                            finished, each with via "<submission>#<n>", in the
                                            worker's order and never twice
    remote.ended {status, exit_code}        Ray says the job ended
    remote.fetched {ref, commit}            its work is in the supervisor's worktree
    agent.exited, harvest.done              exactly as for a local job (or turn.waiting when the
                                            agent's session resumes: the next input is a new turn)

Every step after the submission is taken under the job's remote lock and checked against the
timeline first, so the supervisor and a command racing on one job record each thing once.
Following a turn's log (`pump`) is remote/follow.py's.
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from zen.adapters import git as g
from zen.adapters.ray import RayJob, RayJobs
from zen.agents.headless import resumable
from zen.coord.runner import release_ended
from zen.core import schedule as core_schedule
from zen.core.events import EventType as E
from zen.core.ids import iso
from zen.core.remote import (
    SPEC_ENV,
    Executor,
    TurnSpec,
    base_ref,
    parse_executor,
    submission_id,
    turn_ref,
)
from zen.errors import AlreadySubmitted, RayUnreachable, RemoteError, ZenError
from zen.orchestration.remote.follow import pump
from zen.store.atomic import atomic_write, flocked
from zen.store.config import Config
from zen.store.home import Home
from zen.store.jobs import JobStore, dump_task

log = logging.getLogger(__name__)

REMOTE_LOCK = ".remote.lock"
STOP_WAIT_S = 30.0                # how long a stop waits for Ray to end the job
OUTCOMES = (E.AGENT_EXITED, E.TURN_WAITING, E.RETRY_SCHEDULED, E.JOB_FAILED)
ENDING = (E.JOB_CANCELLED, E.JOB_TIMEOUT, E.FINISH_REQUESTED)

Events = list[dict[str, Any]]
# harvest once after the exit (zen.orchestration.job.settle.harvest_after_exit, handed in by the
# callers: control itself dispatches here, so this module may not import it)
Harvest = Callable[[Home, str], object]


# -- what the timeline says -------------------------------------------------------------------

@dataclass(frozen=True)
class Current:
    """The job's latest Ray submission, as its timeline records it."""

    sid: str
    turn: int
    attempt: int
    address: str
    start: str
    submitted: bool
    ended: dict[str, Any] | None
    pushed: dict[str, Any] | None
    finished: dict[str, Any] | None
    fetched: bool
    outcome: dict[str, Any] | None    # how the supervisor settled it (exit, wait, retry, failure)
    ending: bool                      # a cancel, timeout or finish was asked after it was submitted
    inputs: list[dict[str, Any]]      # input.sent since (the next turn's prompt, once it waits)

    @property
    def settled(self) -> bool:
        return self.outcome is not None


def current(events: Events) -> Current | None:
    at = max((i for i, e in enumerate(events) if e.get("type") == E.REMOTE_SUBMIT), default=-1)
    if at < 0:
        return None
    sub = events[at]
    sid = str(sub.get("submission_id"))
    via = f"{sid}#"
    mine: dict[str, dict[str, Any]] = {}
    outcome = None
    ending = False
    inputs: list[dict[str, Any]] = []
    for ev in events[at + 1:]:
        etype = ev.get("type")
        if etype in OUTCOMES and ev.get("submission_id") == sid:
            outcome = outcome or ev
        elif etype in ENDING:
            ending = True
        elif etype == E.INPUT_SENT:
            inputs.append(ev)
        if str(ev.get("via", "")).startswith(via) or ev.get("submission_id") == sid:
            mine.setdefault(str(etype), ev)
    return Current(sid=sid, turn=int(sub.get("turn") or 1), attempt=int(sub.get("attempt") or 1),
                   address=str(sub.get("address") or ""), start=str(sub.get("start") or ""),
                   submitted=E.REMOTE_SUBMITTED in mine, ended=mine.get(E.REMOTE_ENDED),
                   pushed=mine.get(E.REMOTE_PUSHED), finished=mine.get(E.REMOTE_FINISHED),
                   fetched=E.REMOTE_FETCHED in mine, outcome=outcome, ending=ending, inputs=inputs)


def is_remote(events: Events) -> bool:
    return any(e.get("type") == E.REMOTE_SUBMIT for e in events)


def executor_of(cfg: Config, lane: str | None, task_executor: Any) -> Executor:
    """The task's executor when it names one, else its lane's, else local."""
    if task_executor not in (None, ""):
        return parse_executor(task_executor, "the task's executor")
    spec = cfg.lanes.get(lane or "", {})
    return parse_executor(spec.get("executor"), f"zen.yaml lanes.{lane}.executor")


def lane_remote(cfg: Config, lane: str | None) -> str:
    remote = str(cfg.lanes.get(lane or "", {}).get("remote") or "")
    if not remote:
        raise RemoteError(f"lane {lane} runs its turns on Ray but has no remote: (a bare repository the "
                          f"nodes clone from: zen lane set {lane} --remote PATH_OR_URL)")
    return remote


def _lock(store: JobStore, job_id: str) -> Any:
    return flocked(store.dir(job_id) / REMOTE_LOCK)


# -- submitting a turn ----------------------------------------------------------------------------

def policy_files(home: Home) -> dict[str, str]:
    """The guardian's inputs a worker needs, home-relative path -> text."""
    out: dict[str, str] = {}
    for folder in (home.root / "policy", home.root / "incidents"):
        for path in sorted(folder.glob("*.yaml")) if folder.is_dir() else []:
            out[str(path.relative_to(home.root))] = path.read_text()
    return out


def build_spec(home: Home, cfg: Config, job_id: str, ex: Executor, *, sid: str, turn: int, attempt: int,
               start: str, start_head: str | None, prompt: str, switch: tuple[str, str]) -> TurnSpec:
    store = JobStore(home)
    task = store.task(job_id)
    snap = store.snapshot(job_id, write=False)
    env = dict(ex.env)
    # of the supervisor's own environment, only the names the executor passes on
    env.update({k: os.environ[k] for k in ex.pass_env if k in os.environ})
    handoff = store.paths(job_id).handoff
    spec = cfg.lanes.get(task.lane or "", {})
    return TurnSpec(
        job=job_id, submission=sid, turn=turn, attempt=attempt, lane=task.lane or "repo",
        remote=lane_remote(cfg, task.lane), start_ref=start, start_head=start_head,
        push_ref=turn_ref(job_id, turn), task_yaml=dump_task(task), prompt=prompt, resume=turn > 1,
        handoff=handoff.read_text() if handoff.exists() else "", supervisor_worktree=snap.worktree or "",
        policy=policy_files(home), agent_settings=cfg.agent_settings(task.agent.value), env=env,
        setup=str(spec["setup"]) if spec.get("setup") else None, switch_url=switch[0], switch_token=switch[1],
        workdir=str(cfg.get("remote", "workdir") or ""))


def entrypoint(ex: Executor) -> str:
    return f"{ex.zen_command} remote-turn"


def submit(home: Home, cfg: Config, job_id: str, ex: Executor, *, turn: int, start: str,
           start_head: str | None, prompt: str, switch: tuple[str, str]) -> str:
    """Reserve the next submission id in the timeline, then ask Ray to run the turn."""
    store = JobStore(home)
    attempt = 1 + sum(1 for e in store.events(job_id) if e.get("type") == E.REMOTE_SUBMIT)
    sid = submission_id(job_id, attempt)
    spec = build_spec(home, cfg, job_id, ex, sid=sid, turn=turn, attempt=attempt, start=start,
                      start_head=start_head, prompt=prompt, switch=switch)
    # the turn's spec is kept beside the job: a resubmission after a crash sends the very same one
    atomic_write(store.dir(job_id) / f"remote-{sid}.spec", spec.encode() + "\n")
    store.append(job_id, E.REMOTE_SUBMIT, submission_id=sid, turn=turn, attempt=attempt,
                 address=str(ex.address), start=start)
    with RayJobs(str(ex.address)) as jobs:
        send(store, job_id, jobs, ex, sid, spec.encode())
    return sid


def send(store: JobStore, job_id: str, jobs: RayJobs, ex: Executor, sid: str, spec_text: str,
         recovered: bool = False) -> None:
    try:
        jobs.submit(sid, entrypoint(ex), env={SPEC_ENV: spec_text}, resources=ex.resources,
                    num_cpus=ex.num_cpus, metadata={"zen_job": job_id, "zen_home": str(store.home.root)})
    except AlreadySubmitted:
        recovered = True  # Ray had it: a supervisor before this one asked and crashed
    store.append(job_id, E.REMOTE_SUBMITTED, submission_id=sid, address=jobs.address, recovered=recovered)
    store.snapshot(job_id)


def ensure_submitted(store: JobStore, job_id: str, cur: Current, ex: Executor, jobs: RayJobs) -> None:
    """After a crash between remote.submit and remote.submitted: Ray is asked about the id, and
    the saved spec is sent only when Ray never saw it (never a turn twice)."""
    if cur.submitted:
        return
    if jobs.status(cur.sid) is not None:
        store.append(job_id, E.REMOTE_SUBMITTED, submission_id=cur.sid, address=jobs.address, recovered=True)
        store.snapshot(job_id)
        return
    spec_file = store.dir(job_id) / f"remote-{cur.sid}.spec"
    send(store, job_id, jobs, ex, cur.sid, spec_file.read_text().strip(), recovered=True)


def push_base(repo: Path, remote: str, job_id: str, commit: str) -> str:
    ref = base_ref(job_id)
    g.push(repo, remote, f"{commit}:{ref}")
    return ref


# -- settling a turn that ended --------------------------------------------------------------------

def _fetch(home: Home, store: JobStore, job_id: str, cur: Current, remote: str) -> None:
    """The turn's work from the remote into the supervisor's worktree, exactly as the worker left
    its worktree (the agent's commits, its uncommitted files uncommitted again)."""
    assert cur.pushed is not None
    snap = store.snapshot(job_id, write=False)
    worktree = Path(snap.worktree or home.worktree(job_id))
    ref, commit = str(cur.pushed["ref"]), str(cur.pushed["commit"])
    fetched = [e for e in store.events(job_id) if e.get("type") == E.REMOTE_FETCHED]
    last = str(fetched[-1]["commit"]) if fetched else str(snap.base_commit or "HEAD")
    g.fetch(worktree, remote, f"+{ref}:{ref}")
    g.move_worktree_to(worktree, commit, expect=last)
    head = cur.pushed.get("head")
    if cur.pushed.get("snapshot") and head:
        g.reset_index(worktree, str(head))
    store.append(job_id, E.REMOTE_FETCHED, ref=ref, commit=commit, turn=cur.turn)


def _failed_start(cur: Current, rj: RayJob | None) -> str | None:
    """Why the turn never ran to its end on the worker (None: it did, whatever the agent's code)."""
    if cur.pushed is not None:
        return None
    if cur.finished is not None and cur.finished.get("error"):
        return str(cur.finished["error"])
    status = rj.status if rj else "gone"
    detail = f": {rj.message}" if rj and rj.message else ""
    return f"the Ray job {cur.sid} ended {status} before the turn's work was pushed{detail}"


def settle(home: Home, cfg: Config, job_id: str, jobs: RayJobs, rj: RayJob | None, harvest: Harvest) -> str:
    """The Ray job ended (or is gone): record it and what follows, once. Returns the outcome:
    "exited", "waiting", "retry", "failed" (or "" when someone else settled it already)."""
    store = JobStore(home)
    with _lock(store, job_id):
        cur = current(store.events(job_id))
        if cur is None or cur.settled:
            return ""
        try:
            pump(store, job_id, cur.sid, jobs)
        except RayUnreachable:
            log.warning("job %s: the last of %s's log could not be read", job_id, cur.sid)
        if cur.ended is None:
            store.append(job_id, E.REMOTE_ENDED, submission_id=cur.sid, status=rj.status if rj else "GONE",
                         exit_code=rj.exit_code if rj else None, message=(rj.message if rj else "")[:500])
        cur = current(store.events(job_id))
        assert cur is not None
        task = store.task(job_id)
        if cur.pushed is not None and not cur.fetched:
            try:
                _fetch(home, store, job_id, cur, lane_remote(cfg, task.lane))
            except ZenError as exc:
                return _end(home, store, job_id, cur, None, f"could not fetch the turn's work: {exc}", harvest)
        why = _failed_start(cur, rj)
        finished = cur.finished or {}
        if why is None and not cur.ending and finished.get("exit_code") == 0 \
                and resumable(task.agent.value, task.script):
            store.append(job_id, E.TURN_WAITING, reason="idle", by="remote", submission_id=cur.sid)
            store.snapshot(job_id)
            return "waiting"
        if why is not None and not cur.ending:
            return _end(home, store, job_id, cur, finished, why, harvest, retry=True)
        return _end(home, store, job_id, cur, finished, None, harvest)


def _end(home: Home, store: JobStore, job_id: str, cur: Current, finished: dict[str, Any] | None,
         why: str | None, harvest: Harvest, retry: bool = False) -> str:
    exit_fields: dict[str, Any] = {"exit_code": (finished or {}).get("exit_code"), "signal": (finished or {}).get("signal"),
                   "submission_id": cur.sid}
    if why is not None and retry:
        cfg = Config.load(home)
        task = store.task(job_id)
        done = sum(1 for e in store.events(job_id) if e.get("type") == E.RETRY_SCHEDULED)
        store.append(job_id, E.AGENT_EXITED, why=why, **exit_fields)
        if done < task.max_retries:
            delay = core_schedule.backoff_s(done + 1, base_s=cfg.seconds("retry", "backoff_base"),
                                            factor=float(cfg.get("retry", "backoff_factor")),
                                            cap_s=cfg.seconds("retry", "backoff_cap"))
            at = iso(datetime.fromtimestamp(time.time() + delay, UTC))
            store.append(job_id, E.RETRY_SCHEDULED, attempt=done + 1, of=task.max_retries, delay_s=round(delay, 3),
                         at=at, reason=why, submission_id=cur.sid)
            store.snapshot(job_id)
            return "retry"
        store.append(job_id, E.JOB_FAILED, reason=why, submission_id=cur.sid)
        store.snapshot(job_id)
        release_ended(home, job_id, "job failed")
        return "failed"
    store.append(job_id, E.AGENT_EXITED, **exit_fields, **({"why": why} if why else {}))
    release_ended(home, job_id, "job exited")
    harvest(home, job_id)
    store.snapshot(job_id)
    return "exited"


# -- stopping: zen cancel / finish, the kill switch ------------------------------------------------

def stop(home: Home, job_id: str, *, harvest: Harvest, grace_s: float, actor: str = "human",
         reason: str | None = None) -> dict[str, Any]:
    """Stop the job's Ray job (Ray TERMs the entrypoint's process group, then KILLs it), wait for
    it to end, then record and harvest what the worker pushed. Works without a supervisor."""
    store = JobStore(home)
    cfg = Config.load(home)
    cur = current(store.events(job_id))
    note = None
    if cur is not None and not cur.settled and cur.address:
        with RayJobs(cur.address) as jobs:
            try:
                rj = jobs.status(cur.sid)
                if rj is not None and not rj.ended:
                    jobs.stop(cur.sid)
                    rj = _wait_ended(jobs, cur.sid, grace_s + STOP_WAIT_S)
                if rj is None or rj.ended:
                    settle(home, cfg, job_id, jobs, rj, harvest)
                else:
                    note = f"Ray did not end {cur.sid} in time; it is settled when it ends"
            except RayUnreachable as exc:
                note = f"{exc}; the turn may still run there"
    with _lock(store, job_id):
        cur = current(store.events(job_id))
        waited = cur is not None and cur.outcome is not None and cur.outcome.get("type") == E.TURN_WAITING
        if note is None and (cur is None or waited):
            # a job between turns (its session waits for input), or never submitted, ends here
            store.append(job_id, E.AGENT_EXITED, actor=actor, exit_code=None, signal=None,
                         **({"why": reason} if reason else {}), **({"submission_id": cur.sid} if cur else {}))
            release_ended(home, job_id, "job exited")
    harvested: Any = harvest(home, job_id) if note is None else None
    snap = store.snapshot(job_id)
    return {"job": job_id, "state": snap.state.value, "exit_code": snap.exit_code, "signal": snap.exit_signal,
            "review_branch": snap.review_branch, "harvest": harvested, "note": note}


def _wait_ended(jobs: RayJobs, sid: str, timeout_s: float) -> RayJob | None:
    deadline = time.monotonic() + timeout_s
    while True:
        rj = jobs.status(sid)
        if rj is None or rj.ended or time.monotonic() >= deadline:
            return rj
        time.sleep(0.2)


def queue_input(home: Home, job_id: str, text: str) -> dict[str, Any]:
    """`zen send` to a job whose agent runs on Ray: the text is the next turn's prompt, a new Ray
    job the supervisor submits (resuming the agent's session)."""
    store = JobStore(home)
    snap = store.snapshot(job_id)
    ev = store.append(job_id, E.INPUT_SENT, actor="human", text=text, chars=len(text), remote=True)
    return {"job": job_id, "seq": ev["seq"], "state": snap.state.value}


__all__ = ["Current", "RemoteError", "current", "executor_of", "is_remote", "pump", "queue_input", "settle",
           "stop", "submit"]

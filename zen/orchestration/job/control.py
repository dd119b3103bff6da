"""Acting on one job's agent: send input, finish, cancel, stop, harvest, clean.

Used by the CLI and the supervisor alike (and by the kill switch: `stop_job`). Everything works
with or without a supervisor running: it acts through the job record and tmux directly, and
every "record once" step (the agent's exit, the harvest after it) is decided under a lock, so
the supervisor and a command racing on the same job never record the same thing twice.

The control actions on one job (send, finish, cancel, harvest, the kill switch's stop, and the
supervisor's settling of an ended agent) are serialised by the job's control lock (`serialised`):
each checks the job's state and acts under it, so the timeline always reads as a valid path of
the state machine (never input.sent after job.cancelled), and each leaves state.json up to date.
The record-once steps of an agent's end are job/settle.py's; finding and stopping a pane, and a
dead pane's exit status, job/panes.py's.
"""

from __future__ import annotations

import contextlib
import logging
import os
import re
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from zen.adapters import git as g
from zen.adapters import procs
from zen.adapters.tmux import PaneInfo, Tmux
from zen.agents import get_adapter
from zen.agents.base import typing_of as agent_typing
from zen.coord.runner import release_ended
from zen.core.events import Actor
from zen.core.events import EventType as E
from zen.core.model import JobSnapshot, JobStatus
from zen.core.refs import resolve
from zen.core.results import Result
from zen.errors import JobBusy, NotFound, ZenError
from zen.orchestration.context import JobContext
from zen.orchestration.job.harvest import Harvest, harvest
from zen.orchestration.job.panes import pane_of, stop_pane, with_exit_status
from zen.orchestration.job.settle import (
    append_exit_once,
    end_pending,
    harvest_after_exit,
    harvest_job,
    make_branch,
)
from zen.orchestration.read.query import pending_tasks, resolve_job
from zen.orchestration.remote import turns
from zen.store import spool
from zen.store.atomic import lock_within
from zen.store.config import Config
from zen.store.home import Home
from zen.store.jobs import JobStore, load_task_text

log = logging.getLogger(__name__)

Events = list[dict[str, Any]]


# -- one control action at a time --------------------------------------------------------------

CONTROL_WAIT_S = 30.0   # how long a command waits for another's action on the same job


@contextlib.contextmanager
def serialised(home: Home, job_id: str, wait_s: float = CONTROL_WAIT_S, *, required: bool = True) -> Iterator[None]:
    """Hold the job's control lock (jobs/<id>/.control.lock) for one control action. Held by
    another for all of `wait_s`: JobBusy, or (`required=False`, the supervisor, whose loop must
    not stall) a warning and the action all the same."""
    try:
        fd: int | None = lock_within(home.job(job_id).control_lock, wait_s)
    except TimeoutError:
        if required:
            raise JobBusy(f"job {job_id} is busy: another zen command has been acting on it for "
                          f"{wait_s:.0f}s; try again when it is done") from None
        log.warning("job %s: a command has held it for over %.0fs; acting all the same", job_id, wait_s)
        fd = None
    try:
        yield
    finally:
        if fd is not None:
            os.close(fd)


# -- commands -----------------------------------------------------------------------------------

def _job(home: Home, ref: str) -> tuple[JobContext, JobSnapshot]:
    ctx = JobContext.load(home, resolve_job(home, ref))
    return ctx, ctx.snapshot()


def _live_pane(tmux: Tmux, job_id: str, snap: JobSnapshot) -> PaneInfo:
    info = pane_of(tmux, snap)
    if info is None or info.dead:
        raise ZenError(f"job {job_id} has no running agent (it is {snap.state.value})")
    return info


def typing_of(agent: str | None) -> dict[str, Any]:
    """How to type into this agent's pane (tmux.send_text options): its adapter's habits."""
    try:
        return agent_typing(get_adapter(agent or "cmd"))
    except ZenError:
        return {}


@dataclass(frozen=True)
class Sent(Result):
    """Text typed into an agent (`zen send`, a grid tile): the input.sent event's seq."""

    job: str
    seq: int
    state: str


@dataclass(frozen=True)
class Stopped:
    """What `zen finish`, `zen cancel` or the kill switch did to one job."""

    job: str
    state: str
    exit_code: int | None = None
    signal: int | None = None
    recorded_exit: bool = False        # False when someone else had recorded the exit already
    review_branch: str | None = None
    harvest: Harvest | None = None
    started: bool = True               # False: cancelled while queued, with no agent to stop

    def to_json(self) -> dict[str, Any]:
        if not self.started:
            return {"job": self.job, "state": self.state, "exit_code": None, "harvest": None}
        return {"job": self.job, "state": self.state, "exit_code": self.exit_code, "signal": self.signal,
                "recorded_exit": self.recorded_exit, "review_branch": self.review_branch,
                "harvest": self.harvest.brief() if self.harvest is not None else None}


@dataclass(frozen=True)
class Cleaned(Result):
    """A removed worktree (`zen clean`); the work stays on its review branch."""

    job: str
    worktree: str
    review_branch: str


def send(home: Home, ref: str, text: str, *, force: bool = False) -> Sent:
    ctx, _ = _job(home, ref)
    with serialised(home, ctx.job_id):
        sent = _send(ctx, ctx.snapshot(), text, force)
        ctx.snapshot()
        return sent


def _send(ctx: JobContext, snap: JobSnapshot, text: str, force: bool) -> Sent:
    home, job_id = ctx.home, ctx.job_id
    if not snap.state.live:
        raise ZenError(f"job {job_id} is {snap.state.value}, so there is no agent to type into")
    if snap.state is not JobStatus.waiting and not force:
        raise ZenError(f"job {job_id} is {snap.state.value}, not waiting for input (--force types anyway)")
    if snap.executor == "ray":  # the next turn is a new Ray job that resumes the agent's session
        queued = turns.queue_input(home, job_id, text)
        return Sent(job=job_id, seq=int(queued["seq"]), state=str(queued["state"]))
    tmux = Tmux.for_home(home)
    info = _live_pane(tmux, job_id, snap)
    shown = text if len(text) <= 2000 else text[:2000] + "..."
    # recorded before typing, so the timeline reads input, then the work it caused
    ev = ctx.append(E.INPUT_SENT, actor=Actor.HUMAN, text=shown, chars=len(text),
                    forced=bool(force and snap.state is not JobStatus.waiting))
    try:
        tmux.send_text(info.pane_id, text, **typing_of(snap.agent))
    except ZenError as exc:
        ctx.append(E.INPUT_FAILED, actor=Actor.HUMAN, reason=str(exc))
        raise
    return Sent(job_id, int(ev["seq"]), snap.state.value)


def _grace(cfg: Config) -> float:
    try:
        return cfg.seconds("supervisor", "kill_grace")
    except ZenError:
        return 5.0


def stop_job(home: Home, job_id: str, *, grace_s: float | None = None, keys: list[str] | None = None,
             actor: str = Actor.HUMAN, reason: str | None = None, ctx: JobContext | None = None,
             key_pause_s: float = 0.0) -> Stopped:
    """Stop a job's agent (keys, else TERM; grace; KILL), record its exit and harvest its work.

    The kill switch and `zen finish` use this; `cancel` adds job.cancelled first.
    """
    ctx = ctx if ctx is not None else JobContext.load(home, job_id)
    snap = ctx.snapshot()
    grace = _grace(ctx.config) if grace_s is None else grace_s
    if snap.executor == "ray":  # its turns run on a Ray cluster: Ray stops the job there
        r = turns.stop(home, job_id, harvest=harvest_job, grace_s=grace, actor=actor, reason=reason)
        return Stopped(job=job_id, state=r["state"], exit_code=r["exit_code"], signal=r["signal"], recorded_exit=True,
                       review_branch=r["review_branch"], harvest=r["harvest"])
    tmux = Tmux.for_home(home)
    info: PaneInfo | None = None
    if snap.tmux_session:
        info = with_exit_status(home, job_id, stop_pane(tmux, snap.tmux_session, grace, keys, key_pause_s))
    ev = append_exit_once(ctx.store, job_id, info, actor=actor, **({"why": reason} if reason else {}))
    harvested = harvest_after_exit(ctx)
    if snap.tmux_session:
        tmux.kill_session(snap.tmux_session)
    snap = ctx.snapshot()
    return Stopped(job_id, snap.state.value, exit_code=snap.exit_code, signal=snap.exit_signal,
                   recorded_exit=ev is not None, review_branch=snap.review_branch, harvest=harvested)


def finish(home: Home, ref: str, *, actor: str = Actor.HUMAN) -> Stopped:
    """End the agent gracefully and harvest; `actor` agent when a parent's team tool asks."""
    ctx, _ = _job(home, ref)
    with serialised(home, ctx.job_id):
        return _finish(ctx, ctx.snapshot(), actor)


def _finish(ctx: JobContext, snap: JobSnapshot, actor: str) -> Stopped:
    home, job_id = ctx.home, ctx.job_id
    if snap.state.final:
        raise ZenError(f"job {job_id} is already {snap.state.value}")
    if snap.state is JobStatus.queued:
        raise ZenError(f"job {job_id} has not started yet (zen cancel {job_id} drops it)")
    # recorded first, like job.cancelled: whoever records the exit, the timeline says a human asked
    ctx.append(E.FINISH_REQUESTED, actor=actor)
    keys, pause = None, 0.0
    with contextlib.suppress(ZenError):
        adapter = get_adapter(snap.agent or "cmd")
        keys, pause = adapter.exit_keys, float(getattr(adapter, "key_pause_s", 0.0))
    return stop_job(home, job_id, keys=keys, actor=actor, reason="finish", ctx=ctx, key_pause_s=pause)


def _claim_pending(home: Home, ref: str) -> bool:
    """A task still in spool/new has no job yet: take it in (as the supervisor would) so it can
    be cancelled like any queued job. False when `ref` names no pending task."""
    names = {t.id: t.name for t in pending_tasks(home)}
    try:
        job_id = resolve(ref, names)
    except NotFound:
        return False
    claimed = spool.claim(home, spool.new_dir(home) / f"{job_id}.yaml")
    if claimed is not None:  # else a supervisor took it in first: it is a job now either way
        JobStore(home).create(load_task_text(claimed.read_text(), str(claimed)))
    return True


def cancel(home: Home, ref: str, reason: str | None = None, *, actor: str = Actor.HUMAN) -> Stopped:
    try:
        ctx, _ = _job(home, ref)
    except NotFound:
        if not _claim_pending(home, ref):
            raise
        ctx, _ = _job(home, ref)
    with serialised(home, ctx.job_id):
        return _cancel(ctx, ctx.snapshot(), reason, actor)


def _cancel(ctx: JobContext, snap: JobSnapshot, reason: str | None, actor: str) -> Stopped:
    home, job_id = ctx.home, ctx.job_id
    if snap.state.final:
        if snap.state is JobStatus.cancelled and end_pending(ctx.events(), snap):
            # a cancel cut short (a full disk kept its exit or harvest from being written): its
            # sentence said to run it again, and this finishes what it began, once
            return stop_job(home, job_id, grace_s=_grace(ctx.config), actor=actor, reason="cancel", ctx=ctx)
        raise ZenError(f"job {job_id} is already {snap.state.value}")
    # recorded first: whoever sees the agent die next must find the job cancelled, not exited
    ctx.append(E.JOB_CANCELLED, actor=actor, reason=reason or "cancelled by a human")
    if snap.state is JobStatus.queued and not snap.tmux_session:
        release_ended(home, job_id, "job cancelled")
        ctx.snapshot()
        return Stopped(job_id, JobStatus.cancelled.value, started=False)
    return stop_job(home, job_id, grace_s=_grace(ctx.config), actor=actor, reason="cancel", ctx=ctx)


def harvest_now(home: Home, ref: str) -> Harvest:
    ctx, _ = _job(home, ref)
    with serialised(home, ctx.job_id):
        snap = ctx.snapshot()
        if not snap.worktree:
            raise ZenError(f"job {ctx.job_id} has no worktree yet (it is {snap.state.value}), "
                           "so there is nothing to harvest")
        return harvest(ctx, make_branch=make_branch(home, snap.domain))


OBSERVED_PREFIX = "refs/zen/observed/"


def _observed(snap: JobSnapshot) -> bool:
    """Harvested at autonomy level observe: a report, its work at a commit with no review branch."""
    return snap.state is JobStatus.harvested and not snap.review_branch and bool(snap.harvest_commit)


def _cleanable(snap: JobSnapshot, tmux: Tmux) -> str | None:
    """Why the job's worktree must stay, or None when it may go."""
    job_id = snap.job
    if snap.state.live or snap.state is JobStatus.queued:
        return f"job {job_id} is {snap.state.value}; finish or cancel it first"
    if not snap.review_branch and not _observed(snap):
        return f"job {job_id} is not harvested yet (zen harvest {job_id} first)"
    if snap.tmux_session:
        info = tmux.pane(snap.tmux_session)
        if info is not None and not info.dead:
            return f"job {job_id} still has a running agent; finish or cancel it first"
    return None


def clean(home: Home, ref: str | None = None, *, harvested: bool = False) -> list[Cleaned]:
    """Remove worktrees of harvested jobs; never one holding work not on its review branch."""
    store = JobStore(home)
    if ref is not None:
        ids = [resolve_job(home, ref)]
    elif harvested:
        ids = store.ids()
    else:
        raise ZenError("say which job to clean (zen clean JOB) or --harvested for all harvested jobs")
    cfg = Config.load(home)
    tmux = Tmux.for_home(home)
    done: list[Cleaned] = []
    for job_id in ids:
        snap = store.snapshot(job_id)
        wt = Path(snap.worktree) if snap.worktree else None
        why = f"job {job_id} has no worktree to remove" if wt is None or not wt.exists() else _cleanable(snap, tmux)
        if why is not None:
            if ref is not None:
                raise ZenError(why)
            continue
        assert wt is not None
        if snap.tmux_session:
            tmux.kill_session(snap.tmux_session)
        try:
            repo = JobContext.load(home, job_id, config=cfg, store=store).lane.repo
        except ZenError:
            repo = wt
        kept = snap.review_branch
        try:
            if kept is None:  # observe: no review branch; the harvested work is kept under a ref
                kept = f"{OBSERVED_PREFIX}{job_id}"
                g.keep_ref(wt, kept, str(snap.harvest_commit), f"zen clean {job_id}: observed work kept")
            g.remove_worktree(repo, wt, kept, snap.base_commit)
        except ZenError:
            if ref is not None:
                raise
            continue
        store.append(job_id, E.WORKTREE_REMOVED, actor=Actor.HUMAN, path=str(wt))
        done.append(Cleaned(job_id, str(wt), kept))
    return done


# -- output ----------------------------------------------------------------------------------------

_ANSI = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[PX^_][^\x1b]*\x1b\\|\x1b[@-Z\\-_]"
                   r"|\x1b[()][0-9A-Za-z]")


def strip_ansi(text: str) -> str:
    text = _ANSI.sub("", text)
    text = text.replace("\r\n", "\n")
    # a carriage return redraws the line: keep what was drawn last
    lines = [ln.rsplit("\r", 1)[-1] if "\r" in ln.rstrip("\r") else ln.rstrip("\r") for ln in text.split("\n")]
    return "\n".join(ln for ln in lines).replace("\x07", "")


def pane_log(home: Home, job_id: str) -> Path:
    return home.job(job_id).pane_log


def screen(home: Home, ref: str) -> str:
    job_id = resolve_job(home, ref)
    snap = JobStore(home).snapshot(job_id)
    tmux = Tmux.for_home(home)
    info = tmux.pane(snap.tmux_session) if snap.tmux_session else None
    if info is None:
        raise ZenError(f"job {job_id} has no tmux pane any more (zen output {job_id} shows its log)")
    return tmux.capture(info.pane_id)


def attach_argv(home: Home, ref: str) -> list[str]:
    job_id = resolve_job(home, ref)
    snap = JobStore(home).snapshot(job_id)
    tmux = Tmux.for_home(home)
    if not snap.state.live or not snap.tmux_session or tmux.pane(snap.tmux_session) is None:
        raise ZenError(f"job {job_id} is {snap.state.value} and has no live tmux session to attach to")
    return tmux.attach_argv(snap.tmux_session)


def _stop_serialised(home: Home, job_id: str, reason: str) -> Stopped:
    """The kill switch's stop of one job, after whatever action holds it; a job whose action
    outlasts the wait is stopped all the same (its exit and harvest are recorded once anyway)."""
    try:
        with serialised(home, job_id):
            return stop_job(home, job_id, actor=Actor.HUMAN, reason=reason)
    except JobBusy:
        return stop_job(home, job_id, actor=Actor.HUMAN, reason=reason)


def stop_all(home: Home, reason: str) -> list[str]:
    """Stop every live agent (TERM, grace, KILL) and harvest it; all at once, not one grace
    period after another. Returns the job ids stopped."""
    store = JobStore(home)
    live = [s.job for s in store.snapshots() if s.state.live]
    if not live:
        return []
    with ThreadPoolExecutor(max_workers=min(16, len(live))) as pool:
        list(pool.map(lambda j: _stop_serialised(home, j, reason), live))
    # what a job started and detached from its pane (setsid, nohup ... &) still carries its id
    procs.sweep("ZEN_JOB_ID", set(live))
    return live

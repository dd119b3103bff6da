"""zen pause / zen resume: stop an agent's process group and continue it (issue 17).

A paused agent keeps its worktree, its terminal and its place in the conversation: every process
below its pane gets SIGSTOP (zen.adapters.procs says why not the pane's group), the job's state becomes `paused`, and the supervisor neither reads turns off
its silence nor counts the time against the task's timeout. `resume` sends SIGCONT and the job
returns to the state it was paused in. Both are recorded (`job.paused`, `job.resumed`), under
the job's lock, so two humans pressing the button at once record one pause.

The CLI, the HTTP API and the dashboard all call these two functions.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from zen.adapters import procs
from zen.adapters.tmux import Tmux
from zen.core.events import EventType as E
from zen.core.ids import parse_iso, utcnow
from zen.core.model import JobStatus
from zen.core.results import Result
from zen.errors import ZenError
from zen.orchestration.read.query import resolve_job
from zen.store import events as ev_store
from zen.store.home import Home
from zen.store.jobs import JobStore

PAUSABLE = (JobStatus.starting, JobStatus.working, JobStatus.waiting)


@dataclass(frozen=True)
class Paused(Result):
    """A pause on record: the job, its state after, the job.paused event's seq, its revision."""

    job: str
    state: str
    seq: int
    revision: int


@dataclass(frozen=True)
class Resumed(Result):
    """A resume on record, with how long the agent was paused."""

    job: str
    state: str
    seq: int
    paused_s: float
    revision: int


def _last_pause(events: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The job.paused event not yet followed by job.resumed, if any."""
    for ev in reversed(events):
        if ev.get("type") == E.JOB_RESUMED:
            return None
        if ev.get("type") == E.JOB_PAUSED:
            return dict(ev)
    return None


def pause(home: Home, ref: str, *, by: str = "human") -> Paused:
    """SIGSTOP the agent's process group and record job.paused. Refused unless it is live."""
    store = JobStore(home)
    job_id = resolve_job(home, ref)
    snap = store.snapshot(job_id)
    if snap.state is JobStatus.paused:
        raise ZenError(f"job {job_id} is already paused (zen resume {job_id} continues it)")
    if snap.state not in PAUSABLE:
        raise ZenError(f"job {job_id} is {snap.state.value}, so there is no running agent to pause")
    info = Tmux.for_home(home).pane(snap.tmux_session) if snap.tmux_session else None
    if info is None or info.dead or not info.pid:
        raise ZenError(f"job {job_id} has no running agent in tmux (it is {snap.state.value})")

    def already(events: list[dict[str, Any]]) -> bool:
        return _last_pause(events) is not None

    # recorded first, under the job's lock: the supervisor must see `paused` before the silence
    ev = ev_store.append_unless(store.dir(job_id), job_id, E.JOB_PAUSED, already, actor="human",
                                by=by, pid=info.pid)
    if ev is None:
        raise ZenError(f"job {job_id} is already paused (zen resume {job_id} continues it)")
    if not procs.stop_below(info.pid):
        # it died in between: undo the pause so the exit is read as usual
        ev_store.append(store.dir(job_id), job_id, E.JOB_RESUMED, actor="human", by=by, paused_s=0.0,
                        pid=info.pid)
        raise ZenError(f"job {job_id}'s agent ended before it could be paused")
    snap = store.snapshot(job_id)
    return Paused(job_id, snap.state.value, ev["seq"], snap.revision)


def resume(home: Home, ref: str, *, by: str = "human") -> Resumed:
    """SIGCONT the agent's process group and record job.resumed with how long it was paused."""
    store = JobStore(home)
    job_id = resolve_job(home, ref)
    snap = store.snapshot(job_id)
    if snap.state is not JobStatus.paused:
        raise ZenError(f"job {job_id} is {snap.state.value}, not paused")
    info = Tmux.for_home(home).pane(snap.tmux_session) if snap.tmux_session else None
    paused_s = 0.0
    if snap.paused_at:
        try:
            paused_s = max(0.0, (utcnow() - parse_iso(snap.paused_at)).total_seconds())
        except ValueError:
            paused_s = 0.0
    # continued first, then recorded: a resumed agent's first output must find the job running
    if info is not None and not info.dead and info.pid:
        procs.continue_below(info.pid)

    def not_paused(events: list[dict[str, Any]]) -> bool:
        return _last_pause(events) is None

    ev = ev_store.append_unless(store.dir(job_id), job_id, E.JOB_RESUMED, not_paused, actor="human",
                                by=by, paused_s=round(paused_s, 3), pid=info.pid if info else None)
    if ev is None:
        raise ZenError(f"job {job_id} was resumed by someone else just now")
    snap = store.snapshot(job_id)
    return Resumed(job_id, snap.state.value, ev["seq"], round(paused_s, 3), snap.revision)


__all__ = ["Paused", "Resumed", "pause", "resume"]

"""The end of a job's agent: its exit recorded once, its work harvested once, its session closed.

The supervisor settles an agent whose pane died (`Ending`); the commands that end an agent (stop,
finish, cancel in job/control.py) and zen revive use the same record-once steps:

    exit_recorded / end_pending     is the current spawn's exit (and the harvest after it) on record
    append_exit_once                agent.exited for the current spawn, unless someone recorded it
    harvest_after_exit              the harvest due after the exit, once

Load once, read once (issue 34): an `Ending` reads the job's timeline once, follows only what is
appended after that (its own records, and a racing command's), works out the job's state from
it in memory, and publishes state.json once, when the end is on record.
"""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from zen.adapters import git as g
from zen.adapters.tmux import PaneInfo, Tmux
from zen.coord.runner import release_ended
from zen.core import states
from zen.core.events import Actor
from zen.core.events import EventType as E
from zen.core.model import JobSnapshot, JobStatus, Level
from zen.core.recovery import harvest_pending
from zen.errors import ZenError
from zen.orchestration.context import JobContext
from zen.orchestration.job.harvest import Harvest, disk_trouble, harvest
from zen.orchestration.job.panes import with_exit_status
from zen.orchestration.safety.autonomy import domain_level
from zen.store import events as ev_store
from zen.store.atomic import flocked
from zen.store.follow import Follower
from zen.store.home import Home
from zen.store.jobs import JobStore

log = logging.getLogger(__name__)

Events = list[dict[str, Any]]


# -- recording once -------------------------------------------------------------------------

def _since_last_spawn(events: Events) -> Events:
    for i in range(len(events) - 1, -1, -1):
        if events[i].get("type") == E.AGENT_SPAWNED:
            return events[i:]
    return events


def exit_recorded(events: Events) -> bool:
    """The current spawn's exit is in the timeline (or there is no spawn to record one for)."""
    recent = _since_last_spawn(events)
    spawned = any(e.get("type") == E.AGENT_SPAWNED for e in recent)
    return not spawned or any(e.get("type") == E.AGENT_EXITED for e in recent)


def end_pending(events: Events, snap: JobSnapshot) -> bool:
    """The agent's end is not on record in full: its exit, or the harvest due after it (the
    worktree still there to harvest). A full disk leaves a job so; the supervisor tries again,
    and a second `zen cancel` finishes the first one's work."""
    if not exit_recorded(events):
        return True
    return bool(snap.worktree) and os.path.isdir(str(snap.worktree)) and harvest_pending(events)


def append_exit_once(store: JobStore, job_id: str, info: PaneInfo | None, actor: str = Actor.SUPERVISOR,
                     **extra: Any) -> dict[str, Any] | None:
    """Record agent.exited for the current spawn unless someone already did. The event or None."""
    return _append_exit(store, job_id, info, actor, None, extra)


def _append_exit(store: JobStore, job_id: str, info: PaneInfo | None, actor: str,
                 known: tuple[Events, int] | None, extra: dict[str, Any]) -> dict[str, Any] | None:
    """append_exit_once; `known`: the timeline up to a byte offset, read already (only what
    follows is read again, under the job's lock)."""
    ev = ev_store.append_unless(store.dir(job_id), job_id, E.AGENT_EXITED, exit_recorded, actor, known=known,
                                exit_code=info.exit_code if info else None,
                                signal=info.signal if info else None, **extra)
    # the agent is gone: the files it leased are free the moment its end is on record (DESIGN 10)
    release_ended(store.home, job_id, "job exited")
    return ev


def make_branch(home: Home, domain: str | None) -> bool:
    """At autonomy level observe a harvest is a report only (no review branch)."""
    level = domain_level(home, domain)
    return level is None or level > Level.observe


def harvest_job(home: Home, job_id: str) -> Harvest | None:
    """harvest_after_exit for a job named by id (the Ray executor's callers hold no context)."""
    return harvest_after_exit(JobContext.load(home, job_id))


def harvest_after_exit(ctx: JobContext) -> Harvest | None:
    """Harvest once after the agent's exit (the supervisor and a command may both try)."""
    return Ending.read(ctx).harvest()


def _worktree_gone(ctx: JobContext, snap: JobSnapshot) -> None:
    """The worktree was deleted under the agent: nothing is left to harvest, so the job fails,
    saying what survives (the agent's branch with its commits, the terminal log)."""
    branch = snap.branch or f"zen/{ctx.job_id}"
    try:
        tip = g.rev(ctx.lane.repo, f"refs/heads/{branch}")
    except ZenError:
        tip = None
    kept = f"the branch {branch} at {tip[:12]} (the agent's commits)" if tip else "no branch"
    ctx.append(E.JOB_FAILED, reason=f"its worktree {snap.worktree} was deleted before its work was harvested; "
                                    f"kept: {kept} and the terminal log {ctx.paths.pane_log}")
    ctx.snapshot()


# -- one job's end, read once ------------------------------------------------------------------

@dataclass
class Ending:
    """One job's end: its timeline read once and followed from there, its state worked out in
    memory from it; `publish()` brings state.json up to date once, at the end."""

    ctx: JobContext
    events: Events = field(default_factory=list)
    _timeline: Follower | None = field(default=None, repr=False)

    @classmethod
    def read(cls, ctx: JobContext) -> Ending:
        end = cls(ctx, _timeline=Follower(ctx.paths.events))
        end.catch_up()
        return end

    def catch_up(self) -> None:
        """What was appended since the last read (the whole timeline again only if it was cut)."""
        assert self._timeline is not None
        new = self._timeline.read()
        self.events = new if self._timeline.restarted else self.events + new

    @property
    def offset(self) -> int:
        return self._timeline.offset if self._timeline is not None else 0

    def snapshot(self) -> JobSnapshot:
        """The job's state after every event read so far (in memory; nothing is written)."""
        return states.replay(self.ctx.job_id, self.events)

    def record_exit(self, info: PaneInfo | None, actor: str = Actor.SUPERVISOR, **extra: Any) -> dict[str, Any] | None:
        ev = _append_exit(self.ctx.store, self.ctx.job_id, info, actor, (self.events, self.offset), extra)
        self.catch_up()
        return ev

    def harvest(self) -> Harvest | None:
        """Harvest once after the agent's exit (the supervisor and a command may both try)."""
        ctx = self.ctx
        with flocked(ctx.paths.autoharvest_lock):
            self.catch_up()
            if not harvest_pending(self.events):
                return None
            snap = self.snapshot()
            if not snap.worktree:
                return None
            try:
                return harvest(ctx, make_branch=make_branch(ctx.home, snap.domain), events=self.events,
                               snap=snap)
            except ZenError as exc:  # harvest recorded harvest.failed itself
                log.warning("harvest of %s failed: %s", ctx.job_id, exc)
                if disk_trouble(exc):
                    raise  # not done: the supervisor tries again
                if not Path(snap.worktree).is_dir():
                    _worktree_gone(ctx, snap)
                return None
            finally:
                self.catch_up()

    def settle(self, tmux: Tmux, info: PaneInfo | None, actor: str) -> dict[str, Any] | None:
        """The agent is gone: record its exit (once), harvest (once), close the dead session."""
        ev = self.record_exit(with_exit_status(self.ctx.home, self.ctx.job_id, info), actor)
        self.harvest()
        snap = self.snapshot()
        if snap.tmux_session:
            tmux.kill_session(snap.tmux_session)
        return ev

    def pending(self) -> bool:
        """The agent ended but its exit, or the harvest after it, is not on record yet (a retry
        of a failed start, queued again, is not pending)."""
        snap = self.snapshot()
        return snap.state is not JobStatus.queued and end_pending(self.events, snap)

    def publish(self) -> JobSnapshot:
        """state.json up to date with the timeline (the one refresh of the end)."""
        return self.ctx.snapshot()


def settle_exit(ctx: JobContext, tmux: Tmux, info: PaneInfo | None, actor: str) -> dict[str, Any] | None:
    """The agent is gone: record its exit (once), harvest (once), close the dead session, and
    publish the job's state."""
    end = Ending.read(ctx)
    ev = end.settle(tmux, info, actor)
    end.publish()
    return ev

"""The supervisor's ends of jobs: an agent that ended settled, at run time and after a restart.

    recover()         what the loop knows, rebuilt from the timelines and tmux on start (decided
                      per job by zen.core.recovery): watched again, settled, harvested, resumed
                      or queued
    _settle(w, info)  an agent whose pane died: a failed start retried while retries are left,
                      else its exit recorded once and its work harvested once (job/settle.py's
                      Ending: the timeline read once, state.json published once)
    _finish_end       an end that a full or failing disk kept from being recorded in full, tried
                      again later with a doubling wait

A mixin of Supervisor (supervisor.py), which supplies the home, the store, the tmux server and
the loop's parts.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Callable

from zen.adapters.tmux import PaneInfo, Tmux
from zen.coord.runner import Coordinator
from zen.core import recovery
from zen.core import schedule as core_schedule
from zen.core.clock import Clock
from zen.core.model import JobSnapshot
from zen.errors import ZenError
from zen.observe import snapshot as metrics
from zen.orchestration.context import JobContext
from zen.orchestration.intake.intake import Intake
from zen.orchestration.job import checks, control, settle, spawn
from zen.orchestration.job.panes import with_exit_status
from zen.orchestration.job.spawn import Launched
from zen.orchestration.loop.remote import RemoteTurns
from zen.orchestration.loop.starter import Starter
from zen.orchestration.loop.teams import TeamLoop
from zen.orchestration.loop.watcher import JobWatcher
from zen.store.config import Config
from zen.store.home import Home
from zen.store.jobs import JobStore

log = logging.getLogger("zen.orchestration.loop.supervisor")

SETTLE_WAIT_S = 10.0         # how long settling a job waits for a command's control action on it
RETRY_FIRST_S = 1.0          # an end that could not be recorded in full (a full disk) is tried again
RETRY_CAP_S = 30.0           # ... doubling the wait up to this


class Settling:
    """Jobs' ends (Supervisor supplies the attributes and the tracking)."""

    home: Home
    store: JobStore
    cfg: Config
    clock: Clock
    tmux: Tmux
    coord: Coordinator
    intake: Intake
    remote: RemoteTurns
    starter: Starter
    team: TeamLoop
    stopping: bool
    unsettled: dict[str, tuple[Callable[[], settle.Ending], float, float]]
    # supplied by Supervisor (annotations only: a stub here would win the MRO)
    _ctx: Callable[[str], JobContext]
    _track: Callable[[str, JobSnapshot], JobWatcher]
    _track_started: Callable[[str, Launched], None]

    @property
    def queued(self) -> set[str]:
        """The jobs waiting to start (Supervisor's)."""
        raise NotImplementedError

    # -- restart --------------------------------------------------------------------------------------
    def recover(self) -> None:
        """Rebuild what the loop knows from the timelines and tmux (see the module docstring)."""
        for path in self.intake.unrecorded():
            if (job_id := self.intake.record(path)) is not None:
                self.queued.add(job_id)
        panes = self.tmux.panes()
        for job_id in self.store.ids():
            try:
                self._recover_job(job_id, panes)
            except Exception:
                log.exception("could not recover job %s; leaving it as recorded", job_id)
        self.coord.reconcile()  # leases of jobs that ended while no supervisor watched
        self.store.reindex()    # finished jobs into jobs/.index.json (a home from before it)

    def _recover_job(self, job_id: str, panes: dict[str, PaneInfo]) -> None:
        if self.remote.recover(job_id):
            return  # its turns run on Ray: followed again by id, never submitted twice
        events = self.store.events(job_id)
        snap = self.store.snapshot(job_id)
        running = recovery.running_spawn(events)
        session = str((running or {}).get("session") or spawn.session_name(job_id))
        info = panes.get(session) if running is not None else None
        action = recovery.decide(events, snap.state, pane_alive=info is not None and not info.dead)
        if action is recovery.Recover.WATCH:
            log.info("job %s: agent still running in %s; watching it again", job_id, session)
            self._track(job_id, snap).initial_input = recovery.pending_input(events)
        elif action is recovery.Recover.SETTLE:
            log.info("job %s: agent ended while no supervisor watched (exit %s)", job_id,
                     info.exit_code if info else "unknown")
            self._finish_end(job_id, lambda: self._settled_exit(job_id, info))
        elif action is recovery.Recover.HARVEST:
            self._finish_end(job_id, lambda: self._harvested(job_id))
        elif action is recovery.Recover.RESUME:
            # worktree.created but no agent.spawned: a spawn cut short; finish it in place
            launched = self.starter.start(job_id, resume=True)
            if launched is not None:
                self._track_started(job_id, launched)
        elif action is recovery.Recover.QUEUE:
            self.queued.add(job_id)

    def _metrics(self, job_id: str, end: settle.Ending | None = None) -> None:
        """Publish the job's metrics.json (the observatory's snapshot of its timeline; at the end
        of a job, from the timeline the end read)."""
        try:
            metrics.refresh(self.store.dir(job_id), job_id, (end.events, end.offset) if end is not None else None)
        except OSError as exc:
            log.warning("job %s: cannot write metrics.json: %s", job_id, exc)

    def _settle(self, w: JobWatcher, info: PaneInfo | None) -> settle.Ending:
        """The agent ended: a failed start is retried while retries are left; anything else is
        recorded (once) and harvested (once). After any control action a command is taking on
        the job (a cancel records the same exit and harvest; the supervisor then finds them done)."""
        with self._serialised(w.job_id):
            return self._settle_now(w, info)

    def _serialised(self, job_id: str) -> contextlib.AbstractContextManager[None]:
        """The job's control lock, as the commands take it; a command that holds it for longer
        than SETTLE_WAIT_S does not stall the loop (the exit and harvest are recorded once anyway)."""
        return control.serialised(self.home, job_id, wait_s=SETTLE_WAIT_S, required=False)

    def _settled_exit(self, job_id: str, info: PaneInfo | None) -> settle.Ending:
        with self._serialised(job_id):
            end = settle.Ending.read(self._ctx(job_id))
            end.settle(self.tmux, info, actor="supervisor")
            return end

    def _harvested(self, job_id: str) -> settle.Ending:
        with self._serialised(job_id):
            end = settle.Ending.read(self._ctx(job_id))
            end.harvest()
            return end

    def _finish_end(self, job_id: str, action: Callable[[], settle.Ending], delay: float = RETRY_FIRST_S) -> None:
        """Record an ended agent's exit and harvest (`action`); what a full or failing disk kept
        from being recorded is tried again later (issue 15: the harvest completes once space is
        back), with a doubling wait. The end reads the timeline once and publishes state.json
        once (settle.Ending); after a failure both are read afresh."""
        end: settle.Ending | None = None
        try:
            end = action()
            end.publish()
            self._metrics(job_id, end)
            checks.start_due(end.ctx, end.events)   # the lane's checks on the harvest, off the loop
        except Exception as exc:
            end = None
            log.warning("job %s: its end is not recorded in full (%s); trying again in %.0fs", job_id, exc, delay)
        if self._unfinished(job_id, end):
            self.unsettled[job_id] = (action, self.clock.monotonic() + delay, min(delay * 2, RETRY_CAP_S))
        else:
            self.unsettled.pop(job_id, None)

    def _unfinished(self, job_id: str, end: settle.Ending | None) -> bool:
        """The agent ended but its exit, or the harvest after it, is not on record yet."""
        try:
            return (end if end is not None else settle.Ending.read(self._ctx(job_id))).pending()
        except Exception:
            return True

    def _retry_unsettled(self) -> None:
        now = self.clock.monotonic()
        for job_id, (action, due, delay) in list(self.unsettled.items()):
            if due <= now and not self.stopping:
                self._finish_end(job_id, action, delay)

    def _settle_now(self, w: JobWatcher, info: PaneInfo | None) -> settle.Ending:
        if info is not None and not info.settled:  # the look that ended it saw no status: look again
            info = self.tmux.pane(w.session) or info
        info = with_exit_status(self.home, w.job_id, info)
        end = settle.Ending.read(self._ctx(w.job_id))
        why = None if w.cancelled or info is None else core_schedule.early_failure(end.events, info.exit_code,
                                                                                    info.signal)
        if why is not None and self.starter.retries_left(w.job_id, end.events):
            end.record_exit(info, actor="supervisor")
            self.tmux.kill_session(w.session)
            self.starter.retry(w.job_id, why, end.events)  # the worktree stays: the next attempt starts from it
            end.catch_up()
            return end
        end.settle(self.tmux, info, actor="supervisor")
        if self.team.exited(w.job_id):
            return end  # a goal's agent died: a new session goes on in the worktree (teams.recovery auto)
        if self.cfg.get("supervisor", "auto_cleanup"):
            snap = end.snapshot()
            if snap.exit_code == 0 and snap.review_branch:
                try:
                    control.clean(self.home, w.job_id)
                except ZenError as exc:
                    log.info("auto_cleanup kept %s: %s", w.job_id, exc)
                end.catch_up()
        return end

"""What agent teams ask of the supervisor's loop (DESIGN 13), in one place so the loop's own code
stays small: goal continuation after each turn, queued messages delivered at a turn's end, the
sessions `zen recover` started (adopted), and automatic recovery of a goal whose agent died.

    team = TeamLoop(home, store, tmux)
    team.turn_ended(job)         # a turn ended: deliver its queued messages
    team.waiting(job)            # each look at a waiting job: judge its goal's turn
    team.tick() -> [job]         # held goals whose time came; sessions to watch (adopted)
    team.exited(job)             # its agent ended: recover it when teams.recovery is auto
"""

from __future__ import annotations

import logging
import time
from typing import Any

from zen.adapters.tmux import Tmux
from zen.core import messages
from zen.core.events import EventType as E
from zen.core.model import JobStatus
from zen.errors import ZenError
from zen.orchestration.job import revive
from zen.orchestration.loop.goals import UNTIL_DONE, Clock, GoalKeeper
from zen.orchestration.safety import breaker
from zen.orchestration.teams import ops as team_ops
from zen.store.config import Config
from zen.store.home import Home
from zen.store.jobs import JobStore

log = logging.getLogger(__name__)


class TeamLoop:
    def __init__(self, home: Home, store: JobStore, tmux: Tmux, clock: Any = None) -> None:
        self.home = home
        self.store = store
        self.goals = GoalKeeper(home, store, tmux, clock=clock or Clock(home))

    def turn_ended(self, job_id: str) -> None:
        """Messages still queued when a turn ended are typed in (the Stop hook took the ones it could)."""
        try:
            events = self.store.events(job_id)
            if messages.pending(events) and messages.at_prompt(events, True):
                team_ops.deliver_queued(self.home, job_id)
        except ZenError as exc:
            log.warning("job %s: queued messages not delivered: %s", job_id, exc)

    def waiting(self, job_id: str) -> None:
        self.goals.after_turn(job_id)

    def tick(self) -> list[str]:
        """Continue held goals that are due; the jobs whose recovered sessions to watch now."""
        self.goals.tick()
        adopted = []
        directory = revive.adopt_dir(self.home)
        try:
            marks = list(directory.iterdir())
        except OSError:
            return []
        for mark in marks:
            if mark.name.startswith("."):
                continue  # one being written (atomic_write's temp file)
            mark.unlink(missing_ok=True)
            if self.store.exists(mark.name):
                adopted.append(mark.name)
        return adopted

    def exited(self, job_id: str) -> bool:
        """A goal's agent died before its goal ended: with teams.recovery auto, start a new session
        (counted by the breaker's recovery kind; held while that is open). True when recovered."""
        self.goals.forget(job_id)
        try:
            cfg = Config.load(self.home)
            task = self.store.task(job_id)
            if str(cfg.get("teams", "recovery")) != "auto" or task.goal != UNTIL_DONE:
                return False
            events = self.store.events(job_id)
            if any(e.get("type") in (E.GOAL_DONE, E.GOAL_BLOCKED, E.GOAL_STOPPED, E.JOB_CANCELLED,
                                     E.FINISH_REQUESTED) for e in events):
                return False
            snap = self.store.snapshot(job_id, write=False)
            if snap.state is JobStatus.cancelled or (snap.exit_code == 0 and snap.exit_signal is None):
                return False
            if breaker.try_kind(self.home, cfg, breaker.RECOVERY, time.time()) is not None:
                log.warning("job %s: circuit breaker open for recoveries; not recovered", job_id)
                return False
            revive.recover(self.home, job_id, by="supervisor")
            return True
        except ZenError as exc:
            log.warning("job %s: automatic recovery failed: %s", job_id, exc)
            return False

"""The supervisor's Ray executor (DESIGN section 14): starts the turns of jobs whose lane (or
task) names `executor: ray`, follows them on the cluster, and settles them (zen.orchestration.
remote.turns does each step; this keeps what is live and when to look again).

    remote = RemoteTurns(home, store, requeue=queued.add)
    remote.handles(job_id)      -> whether the job's turns run on Ray
    remote.start(job_id)        -> True (submitted) | False (the cluster is down: the job waits)
    remote.step()               every loop: logs, events, ends, timeouts, the next turn's input
    remote.recover(job_id)      on start: True when the job is Ray's (followed again, never resubmitted)

A job waits in the queue while its cluster does not answer (`preflight.failed` with the reason,
recorded once per outage) and starts when it does; it is never lost.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from zen.adapters import git as g
from zen.adapters.ray import RayJobs
from zen.core.events import EventType as E
from zen.core.ids import parse_iso
from zen.core.model import JobStatus
from zen.core.remote import Executor, TurnSpec, base_ref, turn_ref
from zen.errors import ExecutorError, RayError, RayUnreachable, SpawnError, ZenError
from zen.orchestration.context import JobContext
from zen.orchestration.job import handoff, settle, spawn
from zen.orchestration.remote import follow, turns
from zen.orchestration.remote.endpoint import Endpoint
from zen.orchestration.safety.autonomy import domain_level
from zen.store.atomic import atomic_write
from zen.store.config import Config
from zen.store.home import Home
from zen.store.jobs import JobStore
from zen.store.layout import WORKTREE_PRIVATE, WORKTREE_TMP

log = logging.getLogger(__name__)

POLL_S = 0.5            # how often a live turn's status and log are read
HOLD_S = 5.0            # how often a job whose cluster is down is tried again
PROBE_TIMEOUT_S = 3.0


@dataclass
class Live:
    job_id: str
    address: str
    deadline: float | None = None       # epoch seconds the task's timeout passes
    stopping: bool = False              # a stop was sent (timeout)
    poll_at: float = 0.0
    unreachable: str | None = None      # the last sentence of a cluster that did not answer
    clients: dict[str, RayJobs] = field(default_factory=dict)


class RemoteTurns:
    def __init__(self, home: Home, store: JobStore, *, requeue: Callable[[str], object]) -> None:
        self.home = home
        self.store = store
        self.requeue = requeue
        self.live: dict[str, Live] = {}
        self.held: dict[str, float] = {}           # job -> when to try its cluster again
        self.endpoint: Endpoint | None = None
        self._clients: dict[str, RayJobs] = {}

    # -- plumbing -------------------------------------------------------------------------------
    def client(self, address: str) -> RayJobs:
        if address not in self._clients:
            self._clients[address] = RayJobs(address)
        return self._clients[address]

    def switch(self, cfg: Config) -> tuple[str, str]:
        """The kill switch's address for the workers (the endpoint runs while there is Ray work)."""
        if self.endpoint is None:
            section = cfg.section("remote")
            self.endpoint = Endpoint(self.home, str(section.get("listen") or ""), str(section.get("advertise") or ""))
            self.endpoint.start()
        return self.endpoint.url, self.endpoint.token

    def close(self) -> None:
        for c in self._clients.values():
            c.close()
        self._clients.clear()
        if self.endpoint is not None:
            self.endpoint.stop()
            self.endpoint = None

    def count(self) -> int:
        """Jobs that hold a slot: as a local agent waiting for input does, a job between turns does."""
        return len(self.live)

    def executor(self, cfg: Config, job_id: str) -> Executor:
        task = self.store.task(job_id)
        return turns.executor_of(cfg, task.lane, task.executor)

    def handles(self, job_id: str) -> bool:
        if turns.is_remote(self.store.events(job_id)):
            return True
        try:
            return self.executor(Config.load(self.home), job_id).remote
        except ExecutorError:
            raise  # an executor that cannot be read fails the start: the job never runs here instead
        except ZenError:
            return False

    # -- starting ---------------------------------------------------------------------------------
    def start(self, job_id: str) -> bool:
        """Submit the job's first turn (or the retry of a turn that failed to start). False while
        the cluster does not answer: the caller keeps the job queued. Raises ZenError when the
        start fails (the caller retries or fails the job)."""
        now = time.time()
        if self.held.get(job_id, 0.0) > now:
            return False
        cfg = Config.load(self.home)
        ex = self.executor(cfg, job_id)
        try:
            self.client(str(ex.address)).version()
        except RayUnreachable as exc:
            self._hold(job_id, str(exc), now)
            return False
        self.held.pop(job_id, None)
        snap = self.store.snapshot(job_id)
        if not snap.worktree:
            ctx = JobContext.load(self.home, job_id, config=cfg, store=self.store)
            spawn.run_preflight(ctx)
            prepare(ctx)
        cur = turns.current(self.store.events(job_id))
        if cur is None:
            start, head, turn, prompt = base_ref(job_id), None, 1, self.store.task(job_id).prompt
        else:  # a retry of a turn that failed to start: from where that turn started
            start, head, turn, prompt = cur.start, self._start_head(job_id, cur.turn), cur.turn, self._prompt(job_id)
        turns.submit(self.home, cfg, job_id, ex, turn=turn, start=start, start_head=head, prompt=prompt,
                     switch=self.switch(cfg))
        self._follow(job_id, str(ex.address))
        return True

    def _hold(self, job_id: str, why: str, now: float) -> None:
        self.held[job_id] = now + HOLD_S
        reason = f"waits for its Ray cluster: {why}"
        if self.store.snapshot(job_id).reason != reason:  # once per outage, not once per try
            log.warning("job %s %s", job_id, reason)
            self.store.append(job_id, E.PREFLIGHT_FAILED, report=[{"name": "ray cluster", "status": "FAIL",
                                                                   "message": why}])
            self.store.append(job_id, E.JOB_QUEUED, reason=reason)
            self.store.snapshot(job_id)

    def _start_head(self, job_id: str, turn: int) -> str | None:
        pushed = [e for e in self.store.events(job_id) if e.get("type") == E.REMOTE_PUSHED
                  and e.get("ref") == turn_ref(job_id, turn - 1)]
        return str(pushed[-1].get("head")) if pushed and pushed[-1].get("snapshot") else None

    def _prompt(self, job_id: str) -> str:
        cur = turns.current(self.store.events(job_id))
        if cur is not None and cur.turn > 1:
            spec_file = self.store.dir(job_id) / f"remote-{cur.sid}.spec"
            return TurnSpec.decode(spec_file.read_text().strip()).prompt
        return self.store.task(job_id).prompt

    def _follow(self, job_id: str, address: str) -> None:
        snap = self.store.snapshot(job_id)
        deadline = None
        try:
            if snap.started_at:
                deadline = parse_iso(snap.started_at).timestamp() + self.store.task(job_id).timeout_s + snap.paused_s
        except (ZenError, ValueError):
            pass
        self.live[job_id] = Live(job_id, address, deadline=deadline)

    # -- restart ------------------------------------------------------------------------------------
    def recover(self, job_id: str) -> bool:
        events = self.store.events(job_id)
        cur = turns.current(events)
        if cur is None:
            return False
        snap = self.store.snapshot(job_id)
        if snap.state is JobStatus.queued:
            self.requeue(job_id)      # a retry was scheduled
        elif not cur.settled or (cur.outcome or {}).get("type") == E.TURN_WAITING:
            if snap.state.live or snap.state is JobStatus.cancelled:
                log.info("job %s: following its Ray job %s again", job_id, cur.sid)
                self.switch(Config.load(self.home))
                self._follow(job_id, cur.address)
        elif snap.state is JobStatus.exited:
            settle.harvest_job(self.home, job_id)
        return True

    # -- stepping -------------------------------------------------------------------------------------
    def step(self) -> None:
        now = time.time()
        for job_id in list(self.live):
            live = self.live[job_id]
            if now < live.poll_at:
                continue
            live.poll_at = now + POLL_S
            try:
                self._step(live, now)
            except RayUnreachable as exc:
                if live.unreachable != str(exc):
                    log.warning("job %s: %s", job_id, exc)
                live.unreachable = str(exc)
            except Exception:
                log.exception("job %s: error while following its Ray job", job_id)

    def _step(self, live: Live, now: float) -> None:
        job_id = live.job_id
        cur = turns.current(self.store.events(job_id))
        if cur is None:
            self.live.pop(job_id, None)
            return
        if cur.settled:
            self._between_turns(live, cur)
            return
        cfg = Config.load(self.home)
        jobs = self.client(cur.address)
        turns.ensure_submitted(self.store, job_id, cur, self.executor(cfg, job_id), jobs)
        rj = jobs.status(cur.sid)
        live.unreachable = None
        if rj is not None and not rj.ended:
            with turns._lock(self.store, job_id):
                follow.pump(self.store, job_id, cur.sid, jobs)
            if live.deadline is not None and now >= live.deadline and not live.stopping:
                self.store.append(job_id, E.JOB_TIMEOUT, after_s=round(now - live.deadline, 1))
                log.info("job %s: timeout; stopping its Ray job %s", job_id, cur.sid)
                jobs.stop(cur.sid)
                live.stopping = True
            return
        outcome = turns.settle(self.home, cfg, job_id, jobs, rj, settle.harvest_job)
        log.info("job %s: Ray job %s ended (%s): %s", job_id, cur.sid, rj.status if rj else "gone", outcome or "settled")
        if outcome == "retry":
            self.live.pop(job_id, None)
            self.requeue(job_id)
        elif outcome != "waiting":
            self.live.pop(job_id, None)

    def _between_turns(self, live: Live, cur: turns.Current) -> None:
        """A settled turn: the job either ended (forget it) or waits for the next input."""
        if (cur.outcome or {}).get("type") != E.TURN_WAITING:
            self.live.pop(live.job_id, None)
            return
        snap = self.store.snapshot(live.job_id)
        if not snap.state.live:
            self.live.pop(live.job_id, None)
            return
        if not cur.inputs:
            return
        prompt = "\n\n".join(str(e.get("text") or "") for e in cur.inputs)
        cfg = Config.load(self.home)
        ex = self.executor(cfg, live.job_id)
        pushed = cur.pushed or {}
        head = str(pushed["head"]) if pushed.get("snapshot") and pushed.get("head") else None
        turns.submit(self.home, cfg, live.job_id, ex, turn=cur.turn + 1, start=turn_ref(live.job_id, cur.turn),
                     start_head=head, prompt=prompt, switch=self.switch(cfg))


# -- the supervisor's worktree for a remote job ------------------------------------------------------

def prepare(ctx: JobContext) -> Path:
    """The job's worktree on this machine (where harvest reads the work), its handoff, and its base
    commit on the lane's remote for the worker to start from. Setup runs on the worker."""
    lane = spawn.lane_of(ctx)
    remote = turns.lane_remote(ctx.config, ctx.task.lane)
    worktree = ctx.home.worktree(ctx.job_id)
    branch = spawn.branch_name(ctx.job_id)
    try:
        base_commit = g.add_worktree(lane.repo, worktree, branch, lane.base)
        turns.push_base(lane.repo, remote, ctx.job_id, base_commit)
    except ZenError as exc:
        raise SpawnError(str(exc)) from None
    ctx.append(E.WORKTREE_CREATED, path=str(worktree), branch=branch, base_commit=base_commit, base=lane.base,
               lane=lane.name)
    g.make_private_dir(worktree, WORKTREE_TMP)
    g.make_private_dir(worktree, WORKTREE_PRIVATE)
    level = domain_level(ctx.home, ctx.task.domain)
    text = handoff.render(ctx.task, job_id=ctx.job_id, lane=lane.name, repo=lane.repo, worktree=worktree,
                          branch=branch, base_commit=base_commit, level=level.label if level is not None else None,
                          home=ctx.home)
    atomic_write(ctx.paths.handoff, text)
    return worktree


def check_cluster(address: str, timeout_s: float = PROBE_TIMEOUT_S) -> str:
    """A sentence saying the cluster answers (its Ray version); RayError when it does not."""
    with RayJobs(address, timeout_s=timeout_s) as jobs:
        version = jobs.version()
    return f"{jobs.address} answers (Ray {version.get('ray_version')})"


__all__ = ["RayError", "RemoteTurns", "check_cluster", "prepare"]

"""Starting queued jobs: the scheduler's plan applied, failed starts retried (DESIGN section 3).

The plan is pure (zen.core.schedule: priority, age, dependencies, slots, backoff, the circuit
breaker); this module gathers its facts, spawns what it says may start through an injected
`Spawner` (zen.orchestration.job.spawn by default, a recorder in tests), and turns a failed start
into `retry.scheduled` with exponential backoff while the task has retries left, else
`job.failed` with the reason.

A burst of starts overlaps (issue 21): the spawns of one plan run side by side, at most
`SPAWN_WORKERS` at a time, since each job's worktree and tmux session are its own (git takes
`worktree add` of different paths and branches at once, tmux serialises its server). Everything
else of a start (the job's context, its path leases, the Ray executor, a failure's retry) stays on
the supervisor's thread in the plan's order; each job's events still come from one thread, in
order, and each attempt spawns once.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Protocol

from zen.adapters.tmux import Tmux
from zen.adapters.worktree import PendingWorktree
from zen.coord.service import lock_task_paths
from zen.core import schedule as core_schedule
from zen.core.clock import Clock
from zen.core.events import EventType as E
from zen.core.ids import iso
from zen.core.model import JobStatus, Task
from zen.errors import ZenError
from zen.orchestration.context import JobContext
from zen.orchestration.job import spawn
from zen.orchestration.job.spawn import Launched
from zen.orchestration.read import schedule
from zen.store.config import Config
from zen.store.home import Home
from zen.store.jobs import JobStore

log = logging.getLogger(__name__)

Events = list[dict[str, Any]]

SPAWN_WORKERS = 4   # spawns of one plan at once: git and tmux processes mostly wait; more adds no speed


class Spawner(Protocol):
    """How a job's agent is started: zen.orchestration.job.spawn's `spawn` and `resume`."""

    def spawn(self, ctx: JobContext, tmux: Tmux) -> Launched: ...

    def resume(self, ctx: JobContext, tmux: Tmux) -> Launched: ...


class _ModuleSpawner:
    def spawn(self, ctx: JobContext, tmux: Tmux) -> Launched:
        return spawn.spawn(ctx, tmux)

    def resume(self, ctx: JobContext, tmux: Tmux) -> Launched:
        return spawn.resume(ctx, tmux)


SPAWN: Spawner = _ModuleSpawner()


class RemoteStarter(Protocol):
    """Where jobs whose turns run on a Ray cluster start (zen.orchestration.loop.remote)."""

    def handles(self, job_id: str) -> bool: ...

    def start(self, job_id: str) -> bool: ...


@dataclass(frozen=True)
class Started:
    job_id: str
    launched: Launched


class Starter:
    def __init__(self, home: Home, store: JobStore, tmux: Tmux, clock: Clock, *,
                 config: Callable[[], Config], spawner: Spawner = SPAWN,
                 ended: Callable[[str, str], object] = lambda job_id, why: None,
                 remote: RemoteStarter | None = None, workers: int | None = None) -> None:
        self.home = home
        self.store = store
        self.tmux = tmux
        self.clock = clock
        self.config = config          # zen.yaml as it is now (lanes may be added while running)
        self.spawner = spawner
        self.ended = ended            # a job that will not run: its leases go (the coordinator)
        self.queued: set[str] = set()
        self.remote = remote          # jobs whose turns run on a Ray cluster (DESIGN 14)
        # spawns at once; an injected spawner (a test's script) is called one job after another
        self.workers = workers if workers is not None else SPAWN_WORKERS if spawner is SPAWN else 1
        # worktrees begun at a task's claim, while its record is written (prestart); what this
        # pass's plan does not start is taken back at its end (drop_early)
        self.early: dict[str, PendingWorktree] = {}

    def prestart(self, task: Task, *, running: int) -> None:
        """Begin the worktree of a task just claimed, before its record is written, when it will
        likely start in this pass: a free slot with nothing queued ahead of it, at most
        `workers` at once. The record's writes and the `git worktree add` then overlap."""
        if self.spawner is not SPAWN or task.id in self.early or len(self.early) >= self.workers:
            return
        try:
            free = int(self.config().get("supervisor", "max_concurrent_tasks")) - running - len(self.queued)
        except (ValueError, TypeError, ZenError):
            return
        if free > len(self.early):
            pending = spawn.early_worktree(self.home, self.config(), task)
            if pending is not None:
                self.early[task.id] = pending

    def drop_early(self) -> None:
        """Take back the worktrees begun at claims that this pass did not start (the plan held
        them, their record failed, the supervisor stops): no agent has seen them."""
        early, self.early = self.early, {}
        for job_id, pending in early.items():
            log.debug("job %s: not started this pass; its early worktree is taken back", job_id)
            pending.abandon()

    def start_due(self, *, running: int, stopping: Callable[[], bool]) -> list[Started]:
        """Start what the plan says may start; fail jobs whose dependencies can never be met."""
        if not self.queued:
            return []
        if running >= int(self.config().get("supervisor", "max_concurrent_tasks")) and not self._waits_on_others():
            return []  # no free slot, and no dependency that could fail a queued job: nothing to do
        snaps = []
        for job_id in sorted(self.queued):
            snap = self.store.snapshot(job_id)
            if snap.state is JobStatus.queued:
                snaps.append(snap)
            else:
                self.queued.discard(job_id)  # cancelled (or otherwise moved on) while queued
        if not snaps:
            return []
        cfg = self.config()
        queued, deps, _ = schedule.facts(self.home, snaps)
        automatic = {q.id for q in queued if q.automatic}
        now = self.clock.time()
        plan = core_schedule.plan(queued, deps, running=running,
                                  max_concurrent=int(cfg.get("supervisor", "max_concurrent_tasks")),
                                  breaker_until=schedule.breaker_until(self.home, cfg, now), now=now)
        due: list[str] = []
        for d in plan:
            if stopping():
                break
            if d.action == "fail":
                self.queued.discard(d.job)
                self.store.append(d.job, E.JOB_FAILED, reason=d.why)
                self.store.snapshot(d.job)
            elif d.action == "start":
                if d.job in automatic and not schedule.try_automatic_start(self.home, cfg, self.clock.time()):
                    log.warning("circuit breaker open: holding automatic job %s", d.job)
                    continue
                self.queued.discard(d.job)
                due.append(d.job)
        return self._start_all(due, stopping)

    def _start_all(self, due: list[str], stopping: Callable[[], bool]) -> list[Started]:
        """Start `due` in order: the spawns side by side (at most `workers`), the rest here."""
        started: list[Started] = []
        ready: list[tuple[str, JobContext]] = []
        for i, job_id in enumerate(due):
            if stopping():
                self.queued.update(due[i:])  # not begun: the next supervisor starts them
                break
            ctx = self._begin(job_id)
            if ctx is not None:
                ready.append((job_id, ctx))
        early = {job_id: self.early.pop(job_id) for job_id, _ in ready if job_id in self.early}

        def one(item: tuple[str, JobContext]) -> Launched | Exception | None:
            job_id, ctx = item
            return None if stopping() else self._spawn(ctx, early=early.pop(job_id, None))

        try:
            if self.workers <= 1 or len(ready) <= 1:
                outcomes = [one(item) for item in ready]
            else:
                with ThreadPoolExecutor(min(self.workers, len(ready)), thread_name_prefix="zen-spawn") as pool:
                    outcomes = list(pool.map(one, ready))
        finally:
            self.early.update(early)   # not spawned (the supervisor stops): drop_early takes them back
        for (job_id, _), got in zip(ready, outcomes, strict=True):
            if isinstance(got, Launched):
                started.append(Started(job_id, got))
            elif got is None:
                self.queued.add(job_id)  # the supervisor stops: not spawned, the next one starts it
            else:
                self._failed(job_id, got)
        return started

    def _waits_on_others(self) -> bool:
        """Does some queued job depend on another (whose end may fail it at once)?"""
        for job_id in self.queued:
            try:
                if self.store.task(job_id).depends_on:
                    return True
            except ZenError:
                return True
        return False

    def start(self, job_id: str, *, resume: bool = False) -> Launched | None:
        """Spawn (or resume) one job; a failure is recorded (retry or job.failed) and gives None."""
        ctx = self._begin(job_id)
        if ctx is None:
            return None
        got = self._spawn(ctx, resume=resume)
        if isinstance(got, Launched):
            return got
        self._failed(job_id, got)
        return None

    def _begin(self, job_id: str) -> JobContext | None:
        """What comes before the spawn: the context and the path leases; a job on Ray is started
        there. None when there is nothing to spawn here (a failure is recorded)."""
        try:
            ctx = JobContext.load(self.home, job_id, config=self.config(), store=self.store, clock=self.clock)
            lock_task_paths(self.home, job_id)  # the task's `paths:`, before the agent can write
            if self.remote is not None and self.remote.handles(job_id):
                if not self.remote.start(job_id):
                    self.queued.add(job_id)  # its Ray cluster does not answer: the job waits
                return None  # followed by the Ray executor, not by a watcher of a tmux pane
            return ctx
        except Exception as exc:
            self._failed(job_id, exc)
        return None

    def _spawn(self, ctx: JobContext, *, resume: bool = False, early: PendingWorktree | None = None) -> Launched | Exception:
        """The spawn itself (on a worker thread in a burst): the launch, or what stopped it.
        `early`: the job's worktree begun at its claim (only with zen's own spawner: prestart)."""
        try:
            if early is not None:
                return spawn.spawn(ctx, self.tmux, early=early)
            return self.spawner.resume(ctx, self.tmux) if resume else self.spawner.spawn(ctx, self.tmux)
        except Exception as exc:
            return exc

    def _failed(self, job_id: str, exc: Exception) -> None:
        if isinstance(exc, ZenError):
            log.warning("job %s failed to start: %s", job_id, exc)
            self.fail_start(job_id, str(exc))
        else:
            log.error("job %s: unexpected error while starting", job_id, exc_info=exc)
            self.fail_start(job_id, f"internal error while starting: {exc}")

    def fail_start(self, job_id: str, reason: str) -> None:
        self.tmux.kill_session(spawn.session_name(job_id))
        if not self.retry(job_id, reason):
            self.store.append(job_id, E.JOB_FAILED, reason=reason)
        self.store.snapshot(job_id)
        self.ended(job_id, "start failed")

    def retries_left(self, job_id: str, events: Events) -> bool:
        try:
            return self.store.task(job_id).max_retries > core_schedule.retries_done(events)
        except ZenError:
            return False

    def retry(self, job_id: str, reason: str, events: Events | None = None) -> bool:
        """Schedule another start with exponential backoff if the task has retries left."""
        try:
            task = self.store.task(job_id)
        except ZenError:
            return False
        done = core_schedule.retries_done(self.store.events(job_id) if events is None else events)
        if done >= task.max_retries:
            return False
        cfg = self.config()
        delay = core_schedule.backoff_s(done + 1, base_s=cfg.seconds("retry", "backoff_base"),
                                        factor=float(cfg.get("retry", "backoff_factor")),
                                        cap_s=cfg.seconds("retry", "backoff_cap"))
        at = iso(datetime.fromtimestamp(self.clock.time() + delay, UTC))
        self.store.append(job_id, E.RETRY_SCHEDULED, attempt=done + 1, of=task.max_retries,
                          delay_s=round(delay, 3), at=at, reason=reason)
        self.queued.add(job_id)
        log.info("job %s: retry %d of %d in %.1fs (%s)", job_id, done + 1, task.max_retries, delay, reason)
        return True

"""`zen supervise`: one loop per home (DESIGN section 3).

Wake on a spool hint, a file event of a live job or a due timer; intake (claim spool/new, record
jobs); step the live jobs that need a look (their JobWatcher: turns, timeout, end); start what the
scheduler allows (Starter: plan, spawn, retries).

An idle agent costs nothing (issue 21): the loop learns of output and of timeline appends from
file events on the jobs' pane.log, events.jsonl and exit_code (and of control/pane-died, which
zen's tmux server touches when a pane dies), and a watcher is stepped only when such an event names its job (no more
often than once a tick while its agent prints) or when its own clock says a look is due
(`JobWatcher.next_due`: the idle timer, the timeout, a KILL after a TERM). Every live job is still
looked at every SWEEP_S (a missed event costs that much, never a lost turn), and without file
events at all the loop steps every live job every tick, as it always did. Everything the loop knows is rebuilt from the job timelines and tmux on start
(`recover`, decided per job by zen.core.recovery; settling.py holds it and the settling of
ended agents), so a kill -9 at any moment loses nothing and
runs no task twice:

- an agent whose timeline has `agent.spawned` and no `agent.exited` is watched again if its
  tmux pane lives, or recorded as exited (with tmux's exit code) and harvested if it died;
- a job with `worktree.created` but no `agent.spawned` is a spawn cut short: resumed in place,
  adopting this attempt's agent if tmux already runs it (zen.orchestration.job.spawn.launch);
- an exited job with no harvest after its exit is harvested;
- a task in spool/cur with no job record (crash mid-intake) gets its record.

The clock, the tmux server and the spawner are injected (`Supervisor(home, clock=..., tmux=...,
spawner=...)`), so tests replay recorded histories through `recover` and `loop_once` without real
time passing or real agents.
"""

from __future__ import annotations

import contextlib
import fcntl
import functools
import json
import logging
import os
import signal
import threading
from collections.abc import Callable
from typing import Any

from zen.adapters.tmux import PaneInfo, Tmux, signal_pane
from zen.adapters.watch import FileEvents, SpoolWatch
from zen.agents import get_adapter
from zen.agents.base import AgentAdapter
from zen.coord.runner import Coordinator
from zen.core.clock import SYSTEM, Clock
from zen.core.events import EventType as E
from zen.core.events import timestamp
from zen.core.model import CONTROL_VERSION, JobSnapshot
from zen.core.turns import WAITING
from zen.errors import AlreadyRunning, ZenError
from zen.guard.resident.handle import Resident
from zen.observe import receiver
from zen.observe.limits import Limits
from zen.orchestration.alerts.notify import Notifier
from zen.orchestration.alerts.webhooks import Webhooks
from zen.orchestration.context import JobContext
from zen.orchestration.insight.watch import AnomalyWatch
from zen.orchestration.intake.intake import Intake
from zen.orchestration.job import settle, spawn
from zen.orchestration.job.spawn import Launched
from zen.orchestration.loop.remote import RemoteTurns
from zen.orchestration.loop.settling import Settling
from zen.orchestration.loop.starter import SPAWN, Spawner, Starter
from zen.orchestration.loop.teams import TeamLoop
from zen.orchestration.loop.watcher import JobWatcher, WatchDeps, WatchSettings
from zen.orchestration.read.status import supervisor_pid
from zen.store import events as ev_store
from zen.store.atomic import atomic_write
from zen.store.config import Config
from zen.store.home import Home
from zen.store.jobs import JobStore
from zen.store.layout import EVENTS, EXIT_FILE, PANE_LOG

log = logging.getLogger(__name__)

HEARTBEAT_EVERY_S = 1.0
SWEEP_S = 5.0                # with file events: how often every live job is looked at all the same
# the files of a job directory whose change is worth a look at the job
_WAKING = frozenset({EVENTS, PANE_LOG, EXIT_FILE})


def take_lock(home: Home) -> int:
    """Hold control/supervisor.lock for the life of the process; write our pid into it."""
    home.control.mkdir(parents=True, exist_ok=True)
    fd = os.open(home.supervisor_lock, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        pid = supervisor_pid(home)
        raise AlreadyRunning(f"a supervisor is already running for {home.root} (pid {pid}); "
                             "zen supervise --stop stops it") from None
    os.ftruncate(fd, 0)
    os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
    os.fsync(fd)
    return fd


def _adapter(agent: str | None) -> AgentAdapter | None:
    try:
        return get_adapter(agent or "cmd")
    except ZenError:
        return None


class Supervisor(Settling):
    def __init__(self, home: Home, *, once: bool = False, clock: Clock = SYSTEM, tmux: Tmux | None = None,
                 spawner: Spawner = SPAWN, notify: bool = True,
                 signal_fn: Callable[[PaneInfo, int], object] = signal_pane) -> None:
        self.home = home
        self.once = once
        self.clock = clock
        self.store = JobStore(home)
        self.cfg = Config.load(home, keep=True)
        self.tmux = tmux if tmux is not None else Tmux.for_home(home)
        self.tick_s = max(0.01, self.cfg.seconds("supervisor", "tick"))
        self.settings = WatchSettings(idle_after_s=self.cfg.seconds("supervisor", "idle_after"),
                                      grace_s=self.cfg.seconds("supervisor", "kill_grace"),
                                      follow_s=self.tick_s)
        # leases renewed and released, changes and conflicts across live jobs (DESIGN 10)
        self.coord = Coordinator(home, live_jobs=lambda: list(self.tracked), quiet=self._quiet_since)
        self.webhooks = Webhooks(home)  # coordinator.notification_webhook, from coord/outbox/
        # agent teams (DESIGN 13): goals continued, messages delivered, recovered sessions adopted
        self.team = TeamLoop(home, self.store, self.tmux)
        self.deps = WatchDeps(store=self.store, clock=clock, panes=self.tmux, signal=signal_fn,
                              turn_ended=self._turn_ended, publish=self._metrics,
                              observed=self._limits)
        self.intake = Intake(home, self.store)
        # jobs whose turns run on a Ray cluster (DESIGN 14): started, followed and settled there
        self.remote = RemoteTurns(home, self.store, requeue=self._requeue)
        self.starter = Starter(home, self.store, self.tmux, clock, config=self.config, spawner=spawner,
                               ended=self.coord.job_ended, remote=self.remote)
        self.tracked: dict[str, JobWatcher] = {}
        # ended jobs whose exit or harvest could not be recorded (a full or failing disk): the
        # action to try again, when, and the wait before the try after it
        self.unsettled: dict[str, tuple[Callable[[], settle.Ending], float, float]] = {}
        self.stopping = False
        self.watch = SpoolWatch(home.spool_new)
        # output and timeline appends of the live jobs (run() starts it; loop_once alone, as the
        # replay tests drive it, steps every live job on every call)
        self.files = FileEvents(self._on_path, [(home.jobs, True), (home.control, False)])
        self.watching = False
        self._jobs_dir = str(home.jobs) + os.sep
        self._died = str(home.pane_died)
        self._dirty: set[str] = set()
        self._dirty_lock = threading.Lock()
        self._sweep_at = float("-inf")
        self._drained_at = float("-inf")           # when the jobs named by file events were last taken
        self.notifier = Notifier(home) if notify else None  # tells a human when a job waits for them or ends
        self._last_beat = float("-inf")
        self._lock_fd: int | None = None
        # the resident guardian (zen guard serve): agents' hooks ask it instead of loading the
        # guardian for every call, and decide alone whenever it is not there
        self.guard = Resident(str(home.root))
        self.otlp: receiver.Receiver | None = None
        self.limits = Limits(home)          # policy/guardian.yaml limits, from the observatory's counts
        self.anomalies = AnomalyWatch(home)   # issue 38: each live job's last turn against the fleet's baselines

    def _requeue(self, job_id: str) -> None:
        self.starter.queued.add(job_id)

    @property
    def queued(self) -> set[str]:
        return self.starter.queued

    def config(self) -> Config:
        """zen.yaml as it is now (parsed again only when it changed: lanes may be added live)."""
        self.cfg = Config.load(self.home, keep=True)
        return self.cfg

    # -- life cycle ---------------------------------------------------------------------------
    def run(self) -> int:
        self._lock_fd = take_lock(self.home)
        self._control(E.SUPERVISOR_STARTED, pid=os.getpid())
        log.info("supervisor started for %s (pid %d)", self.home.root, os.getpid())
        old = {s: signal.signal(s, self._on_signal) for s in (signal.SIGTERM, signal.SIGINT)}
        try:
            self.tmux.ensure_conf()
            self.watch.start()
            self.watching = self.files.start()
            # agents' OpenTelemetry (before recovery: a resumed spawn is pointed at it)
            self.otlp = receiver.for_supervisor(self.home, self.cfg.section("observatory"), once=self.once)
            if self.notifier is not None:
                self.notifier.start()
            self.recover()
            self.coord.start()
            self.webhooks.start()
            while not self.stopping:
                self.heartbeat()
                if not self.once:
                    self.guard.ensure()
                try:
                    self.loop_once()
                except ZenError as exc:  # e.g. zen.yaml mid-edit, tmux hiccup: try again next tick
                    log.warning("supervisor pass failed: %s", exc)
                except Exception:
                    log.exception("supervisor pass failed unexpectedly; continuing")
                if self.once:
                    break
                self.watch.wait(self.next_wait())
        finally:
            self._shut_down(old)
        return 0

    def _shut_down(self, handlers: dict[signal.Signals, Any]) -> None:
        if self.otlp is not None:
            self.otlp.stop()
        self.guard.stop()
        self.remote.close()
        self.watch.stop()
        self.files.stop()
        self.watching = False
        if self.notifier is not None:
            self.notifier.stop()
        self.coord.stop()
        self.webhooks.stop()
        for s, h in handlers.items():
            signal.signal(s, h)
        self._control(E.SUPERVISOR_STOPPED, pid=os.getpid(),
                      live_agents=len(self.tracked), why="signal" if self.stopping else "once")
        log.info("supervisor stopped; %d agents keep running", len(self.tracked))
        self.heartbeat(stopped=True)
        if self._lock_fd is not None:
            os.close(self._lock_fd)

    def _on_signal(self, signum: int, frame: Any) -> None:
        # stop claiming; agents keep running in tmux and are picked up by the next supervisor
        self.stopping = True
        self.watch.poke()

    def loop_once(self) -> None:
        try:
            if not self.stopping:
                # a task that will start in this pass has its `git worktree add` begun at its
                # claim, while its record is written and the live jobs are looked at
                running = len(self.tracked) + self.remote.count()
                self.starter.queued.update(self.intake.claim_new(
                    lambda task: self.starter.prestart(task, running=running)))
            for job_id in self.team.tick():  # sessions `zen recover` started
                if job_id not in self.tracked:
                    self._track(job_id, self.store.snapshot(job_id))
            self.step_all()
            self._retry_unsettled()
            if not self.stopping:
                running = len(self.tracked) + self.remote.count()
                for started in self.starter.start_due(running=running, stopping=lambda: self.stopping):
                    self._track_started(started.job_id, started.launched)
        finally:
            self.starter.drop_early()

    def next_wait(self) -> float:
        """How long the loop may sleep before something is due. Without file events: a tick, or
        less when some agent's silence will reach idle_after sooner (a turn end is noticed when it
        happens, not up to a tick later). With them: until the soonest watcher's own due time, the
        next tick while a job has unread events or tasks wait in the queue, the next sweep, and at
        most a heartbeat apart."""
        now = self.clock.monotonic()
        if not self.watching:
            wait = self.tick_s
            for w in self.tracked.values():
                due = w.idle_due_in(now)
                if due is not None:
                    wait = min(wait, due + 0.005)
            return max(0.005, wait)
        wait = HEARTBEAT_EVERY_S
        for _, due, _ in self.unsettled.values():
            wait = min(wait, due - now + 0.005)
        if self.tracked:
            wait = min(wait, self._sweep_at - now)
        if self.queued:
            wait = min(wait, self.tick_s)    # slots, backoffs and dependencies are re-planned each tick
        with self._dirty_lock:
            dirty = bool(self._dirty)
        if dirty:
            wait = min(wait, self._drained_at + self.tick_s - now)
        for w in self.tracked.values():
            due = w.next_due(now)
            if due is not None:
                wait = min(wait, due - now + 0.005)
        return max(0.005, wait)

    def _quiet_since(self, since: float) -> set[str]:
        """Live jobs whose agent waits and that showed nothing new since `since` (monotonic):
        the coordinator's thread keeps what it last read of their worktrees."""
        return {j for j, w in list(self.tracked.items()) if w.detector.state == WAITING and w.changed_at < since}

    # -- file events (watchdog's thread) ------------------------------------------------------------
    def _on_path(self, path: str) -> None:
        """A file of a job directory changed: note the job; wake the loop for the first one noted
        since its last pass (it wakes once, not once per write of a busy agent). A pane died: look
        at every live job now (tmux's hook does not say whose)."""
        if path == self._died:
            self._sweep_at = float("-inf")
            self.watch.poke()
            return
        if not path.startswith(self._jobs_dir):
            return
        job_id, _, name = path[len(self._jobs_dir):].partition(os.sep)
        if name not in _WAKING:
            return
        with self._dirty_lock:
            first = not self._dirty
            self._dirty.add(job_id)
        if first:
            self.watch.poke()

    def _due_jobs(self, now: float) -> list[str]:
        """The live jobs to look at now: all of them without file events (every call) or at a
        sweep; else those a file event named (at most once a tick) and those whose clock is due."""
        if not self.watching or now >= self._sweep_at:
            self._sweep_at = now + SWEEP_S
            with self._dirty_lock:
                self._dirty.clear()
            return list(self.tracked)
        due = {j for j, w in self.tracked.items() if (t := w.next_due(now)) is not None and t <= now}
        if now >= self._drained_at + self.tick_s:
            with self._dirty_lock:
                named, self._dirty = self._dirty, set()
            if named:
                self._drained_at = now
                due.update(j for j in named if j in self.tracked)
        return [j for j in self.tracked if j in due]

    def heartbeat(self, stopped: bool = False) -> None:
        now = self.clock.monotonic()
        if not stopped and now - self._last_beat < HEARTBEAT_EVERY_S:
            return
        self._last_beat = now
        data = {"v": CONTROL_VERSION, "ts": timestamp(self.clock.time()), "pid": os.getpid(),
                "live": len(self.tracked), "queued": len(self.queued), "stopped": stopped}
        with contextlib.suppress(OSError):
            atomic_write(self.home.heartbeat, json.dumps(data) + "\n", cache=True)   # its age is what counts

    def _control(self, etype: str, **fields: Any) -> None:
        """Home-wide supervisor events go to logs/control.jsonl (append-only), not a job timeline."""
        try:
            ev_store.append_control(self.home, etype, **fields)
        except OSError:
            log.exception("cannot write %s", self.home.control_log)

    # -- tracking and settling -------------------------------------------------------------------------
    def _ctx(self, job_id: str) -> JobContext:
        return JobContext.load(self.home, job_id, config=self.cfg, store=self.store, clock=self.clock)

    def _track(self, job_id: str, snap: JobSnapshot) -> JobWatcher:
        try:
            timeout_s: float | None = self.store.task(job_id).timeout_s
        except ZenError:
            timeout_s = None
        watcher = JobWatcher.start(job_id, snap, deps=self.deps, settings=self.settings,
                                   session=spawn.session_name(job_id), timeout_s=timeout_s,
                                   adapter=_adapter(snap.agent))
        self.tracked[job_id] = watcher
        return watcher

    def _track_started(self, job_id: str, launched: Launched) -> None:
        watcher = self._track(job_id, self.store.snapshot(job_id))
        watcher.initial_input = launched.initial_input or None

    def _limits(self, job_id: str, new: list[dict[str, Any]]) -> None:
        """policy/guardian.yaml limits: a job over one is failed (its agent then stopped)."""
        try:
            got = self.limits.observe(job_id, new)
        except (OSError, ValueError) as exc:
            log.warning("job %s: cannot check its limits: %s", job_id, exc)
            return
        if got is not None:
            log.info("job %s: %s; stopping the agent", job_id, got.reason)
        try:
            self.anomalies.observe(job_id, new)
        except Exception as exc:    # a fault in the anomaly watch must never stop the supervisor
            log.warning("job %s: cannot check it for anomalies: %s", job_id, exc)

    def _turn_ended(self, job_id: str) -> None:
        self.coord.poke(job_id)          # compare its changes now
        self.team.turn_ended(job_id)     # messages queued during the turn

    # -- stepping live jobs -----------------------------------------------------------------------------------
    def step_all(self) -> None:
        self.remote.step()
        if not self.tracked:
            return
        now = self.clock.monotonic()
        jobs = self._due_jobs(now)
        if not jobs:
            return
        try:
            panes = self.tmux.panes()
        except ZenError as exc:
            log.warning("cannot list tmux panes this tick: %s", exc)
            return
        for job_id in jobs:
            watcher = self.tracked[job_id]
            try:
                ended = watcher.step(panes.get(watcher.session))
                if ended is None and watcher.detector.state == WAITING:
                    self.team.waiting(job_id)   # a goal's turn ended: continue, hold or stop it
                if ended is not None:
                    self.tracked.pop(job_id, None)
                    self.coord.scanner.forget(job_id)
                    self._finish_end(job_id, functools.partial(self._settle, watcher, ended.info))
            except Exception:
                log.exception("job %s: error while stepping", job_id)


def run_supervisor(home: Home, *, once: bool = False) -> int:
    return Supervisor(home, once=once).run()


__all__ = ["AlreadyRunning", "Supervisor", "run_supervisor", "take_lock"]

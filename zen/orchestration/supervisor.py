"""`zen supervise`: one loop per home (DESIGN section 3).

Wake on a spool hint or a short tick; re-list spool/new and claim; create job records; schedule;
spawn; step every live job (turns, exits, timeouts). Everything it knows is rebuilt from the
job timelines and tmux on start, so a kill -9 at any moment loses nothing and runs no task twice:

- an agent whose timeline has `agent.spawned` and no `agent.exited` is tracked again if its
  tmux pane lives, or recorded as exited (with tmux's exit code) and harvested if it died;
- a job with `worktree.created` but no `agent.spawned` is a spawn cut short: resumed in place;
- an exited job with no harvest after its exit is harvested;
- a task in spool/cur with no job record (crash mid-intake) gets its record.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import logging
import os
import signal
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from zen.adapters import procs
from zen.adapters.tmux import PaneInfo, Tmux, signal_pane
from zen.adapters.watch import SpoolWatch
from zen.agents import get_adapter
from zen.coord.runner import Coordinator
from zen.coord.service import lock_task_paths
from zen.core import schedule as core_schedule
from zen.core.events import EventType as E
from zen.core.events import timestamp
from zen.core.ids import iso, parse_iso
from zen.core.model import CONTROL_VERSION, JobSnapshot, JobStatus
from zen.core.turns import WAITING, WORKING, TurnDetector
from zen.errors import InvalidTask, ZenError
from zen.guard.server import Resident
from zen.observe import snapshot as metrics
from zen.orchestration import control, schedule, spawn
from zen.orchestration.notify import Notifier
from zen.orchestration.status import supervisor_pid
from zen.orchestration.webhooks import Webhooks
from zen.store import events as ev_store
from zen.store import spool
from zen.store.atomic import atomic_write
from zen.store.config import Config
from zen.store.home import Home
from zen.store.jobs import JobStore, load_task_text

log = logging.getLogger(__name__)

SCREEN_EVERY_S = 1.0


class AlreadyRunning(ZenError):
    pass


# -- scheduling: the pure plan in zen.core.schedule, fed by zen.orchestration.schedule ----------

# -- the lock -----------------------------------------------------------------------------------------

def take_lock(home: Home) -> int:
    """Hold control/supervisor.lock for the life of the process; write our pid into it."""
    home.control.mkdir(parents=True, exist_ok=True)
    fd = os.open(home.supervisor_lock, os.O_RDWR | os.O_CREAT, 0o644)
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


def det_size(det: TurnDetector) -> int | None:
    """The pane-log size in the detector's last fingerprint (None before the first look)."""
    fp = det.fingerprint
    return fp[0] if isinstance(fp, tuple) and fp else None


METRICS_EVERY_S = 2.0                      # how often a live job's metrics.json is published

# -- per-job tracking ------------------------------------------------------------------------------------

@dataclass
class Tracked:
    job_id: str
    session: str
    detector: TurnDetector
    offset: int
    log_path: Path
    adapter: Any = None
    deadline: float | None = None          # wall-clock time the task's timeout expires
    kill_at: float | None = None           # after a TERM: when to KILL
    last_screen: float = 0.0
    screen_reason: str | None = None
    cancelled: bool = False
    dead_since: float | None = None
    initial_input: str | None = None       # typed once the agent first waits (LaunchSpec)
    paused: bool = False                   # zen pause: no turns, no timeout until zen resume
    metrics_at: float = 0.0                # when metrics.json was last published


class Supervisor:
    def __init__(self, home: Home, *, once: bool = False) -> None:
        self.home = home
        self.once = once
        self.store = JobStore(home)
        self.cfg = Config.load(home)
        self.tmux = Tmux.for_home(home)
        self.tick_s = max(0.01, self.cfg.seconds("supervisor", "tick"))
        self.idle_after_s = self.cfg.seconds("supervisor", "idle_after")
        self.grace_s = self.cfg.seconds("supervisor", "kill_grace")
        self.max_concurrent = int(self.cfg.get("supervisor", "max_concurrent_tasks"))
        self.tracked: dict[str, Tracked] = {}
        self.queued: set[str] = set()
        self.stopping = False
        self.watch = SpoolWatch(spool.new_dir(home))
        self.notifier = Notifier(home)  # tells a human when a job waits for them or ends
        # leases renewed and released, changes and conflicts across live jobs (DESIGN 10)
        self.coord = Coordinator(home, live_jobs=lambda: list(self.tracked))
        self.webhooks = Webhooks(home)  # coordinator.notification_webhook, from coord/outbox/
        self._last_beat = 0.0
        self._lock_fd: int | None = None
        # the resident guardian (zen guard serve): agents' hooks ask it instead of loading the
        # guardian for every call, and decide alone whenever it is not there
        self.guard = Resident(str(home.root))

    # -- life cycle ---------------------------------------------------------------------------
    def run(self) -> int:
        self._lock_fd = take_lock(self.home)
        self._control(E.SUPERVISOR_STARTED, pid=os.getpid())
        log.info("supervisor started for %s (pid %d)", self.home.root, os.getpid())
        old = {s: signal.signal(s, self._on_signal) for s in (signal.SIGTERM, signal.SIGINT)}
        try:
            self.tmux.ensure_conf()
            self.watch.start()
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
            self.guard.stop()
            self.watch.stop()
            self.notifier.stop()
            self.coord.stop()
            self.webhooks.stop()
            for s, h in old.items():
                signal.signal(s, h)
            self._control(E.SUPERVISOR_STOPPED, pid=os.getpid(),
                          live_agents=len(self.tracked), why="signal" if self.stopping else "once")
            log.info("supervisor stopped; %d agents keep running", len(self.tracked))
            self.heartbeat(stopped=True)
            if self._lock_fd is not None:
                os.close(self._lock_fd)
        return 0

    def _on_signal(self, signum: int, frame: Any) -> None:
        # stop claiming; agents keep running in tmux and are picked up by the next supervisor
        self.stopping = True
        self.watch.poke()

    def loop_once(self) -> None:
        if not self.stopping:
            self.intake()
        self.step_all()
        if not self.stopping:
            self.start_jobs()

    def next_wait(self) -> float:
        """Sleep a tick, or less when some agent's silence will reach idle_after sooner: a turn
        end is noticed when it happens, not up to a tick later."""
        now = time.monotonic()
        wait = self.tick_s
        for t in self.tracked.values():
            due = t.detector.idle_due_in(now)
            if due is not None:
                wait = min(wait, due + 0.005)
        return max(0.005, wait)

    def heartbeat(self, stopped: bool = False) -> None:
        now = time.monotonic()
        if not stopped and now - self._last_beat < 1.0:
            return
        self._last_beat = now
        data = {"v": CONTROL_VERSION, "ts": timestamp(), "pid": os.getpid(), "live": len(self.tracked),
                "queued": len(self.queued), "stopped": stopped}
        with contextlib.suppress(OSError):
            atomic_write(self.home.heartbeat, json.dumps(data) + "\n", durable=False)

    def _control(self, etype: str, **fields: Any) -> None:
        """Home-wide supervisor events go to logs/control.jsonl (append-only), not a job timeline."""
        try:
            ev_store.append_control(self.home, etype, **fields)
        except OSError:
            log.exception("cannot write %s", self.home.control_log)

    # -- intake -----------------------------------------------------------------------------------
    def intake(self) -> None:
        for path in spool.pending(self.home):
            claimed = spool.claim(self.home, path)
            if claimed is not None:
                self._record(claimed)

    def _record(self, path: Path) -> None:
        try:
            task = load_task_text(path.read_text(), str(path))
        except (InvalidTask, OSError) as exc:
            log.error("spooled task %s is unusable and was set aside: %s", path.name, exc)
            with contextlib.suppress(OSError):
                os.replace(path, path.with_suffix(".invalid"))
            return
        if self.store.create(task):
            log.info("job %s queued", task.id)
        snap = self.store.snapshot(task.id)
        if snap.state is JobStatus.queued:
            self.queued.add(task.id)

    # -- restart --------------------------------------------------------------------------------------
    def recover(self) -> None:
        """Rebuild what the loop knows from the timelines and tmux (see the module docstring)."""
        for path in spool.claimed(self.home):
            if not self.store.exists(path.stem) or not self.store.events(path.stem):
                self._record(path)
        panes = self.tmux.panes()
        for job_id in self.store.ids():
            try:
                self._recover_job(job_id, panes)
            except Exception:
                log.exception("could not recover job %s; leaving it as recorded", job_id)
        self.coord.reconcile()  # leases of jobs that ended while no supervisor watched

    def _recover_job(self, job_id: str, panes: dict[str, PaneInfo]) -> None:
        events = self.store.events(job_id)
        snap = self.store.snapshot(job_id)
        last_spawn = max((i for i, e in enumerate(events) if e.get("type") == E.AGENT_SPAWNED), default=-1)
        if last_spawn >= 0 and not any(e.get("type") == E.AGENT_EXITED for e in events[last_spawn:]):
            session = str(events[last_spawn].get("session") or spawn.session_name(job_id))
            info = panes.get(session)
            if info is None or info.dead:
                log.info("job %s: agent ended while no supervisor watched (exit %s)", job_id,
                         info.exit_code if info else "unknown")
                control.settle_exit(self.home, self.tmux, job_id, info, actor="supervisor")
            else:
                log.info("job %s: agent still running in %s; watching it again", job_id, session)
                self._track(job_id, snap)
            return
        if snap.state is JobStatus.exited:
            control.harvest_after_exit(self.home, job_id)
            return
        if snap.state is JobStatus.starting:
            # worktree.created but no agent.spawned: a spawn cut short; finish it in place
            self._start(job_id, resume=True)
            return
        if snap.state is JobStatus.queued:
            self.queued.add(job_id)

    # -- scheduling and spawning -------------------------------------------------------------------------
    def start_jobs(self) -> None:
        """Start what the plan says may start; fail jobs whose dependencies can never be met."""
        if not self.queued:
            return
        snaps = []
        for job_id in sorted(self.queued):
            snap = self.store.snapshot(job_id)
            if snap.state is JobStatus.queued:
                snaps.append(snap)
            else:
                self.queued.discard(job_id)  # cancelled (or otherwise moved on) while queued
        if not snaps:
            return
        self.cfg = Config.load(self.home)
        self.max_concurrent = int(self.cfg.get("supervisor", "max_concurrent_tasks"))
        queued, deps, _ = schedule.facts(self.home, snaps)
        automatic = {q.id for q in queued if q.automatic}
        now = time.time()
        plan = core_schedule.plan(queued, deps, running=len(self.tracked), max_concurrent=self.max_concurrent,
                                  breaker_until=schedule.breaker_until(self.home, self.cfg, now), now=now)
        for d in plan:
            if self.stopping:
                return
            if d.action == "fail":
                self.queued.discard(d.job)
                self.store.append(d.job, E.JOB_FAILED, reason=d.why)
                self.store.snapshot(d.job)
            elif d.action == "start":
                if d.job in automatic and not schedule.try_automatic_start(self.home, self.cfg, time.time()):
                    log.warning("circuit breaker open: holding automatic job %s", d.job)
                    continue
                self.queued.discard(d.job)
                self._start(d.job)

    def _start(self, job_id: str, resume: bool = False) -> None:
        try:
            self.cfg = Config.load(self.home)  # lanes may have been added since we started
            lock_task_paths(self.home, job_id)  # the task's `paths:`, before the agent can write
            if resume:
                started = spawn.resume(self.home, self.cfg, self.store, self.tmux, job_id)
            else:
                started = spawn.spawn(self.home, self.cfg, self.store, self.tmux, job_id)
        except ZenError as exc:
            log.warning("job %s failed to start: %s", job_id, exc)
            self._fail_start(job_id, str(exc))
            return
        except Exception as exc:
            log.exception("job %s: unexpected error while starting", job_id)
            self._fail_start(job_id, f"internal error while starting: {exc}")
            return
        self._track(job_id, self.store.snapshot(job_id))
        if started.get("initial_input"):
            self.tracked[job_id].initial_input = str(started["initial_input"])

    def _fail_start(self, job_id: str, reason: str) -> None:
        self.tmux.kill_session(spawn.session_name(job_id))
        if not self._retry(job_id, reason):
            self.store.append(job_id, E.JOB_FAILED, reason=reason)
        self.store.snapshot(job_id)
        self.coord.job_ended(job_id, "start failed")

    def _retry(self, job_id: str, reason: str) -> bool:
        """Schedule another start with exponential backoff if the task has retries left."""
        try:
            task = self.store.task(job_id)
        except ZenError:
            return False
        done = sum(1 for e in self.store.events(job_id) if e.get("type") == E.RETRY_SCHEDULED)
        if done >= task.max_retries:
            return False
        delay = core_schedule.backoff_s(done + 1, base_s=self.cfg.seconds("retry", "backoff_base"),
                          factor=float(self.cfg.get("retry", "backoff_factor")),
                          cap_s=self.cfg.seconds("retry", "backoff_cap"))
        at = iso(datetime.fromtimestamp(time.time() + delay, UTC))
        self.store.append(job_id, E.RETRY_SCHEDULED, attempt=done + 1, of=task.max_retries,
                          delay_s=round(delay, 3), at=at, reason=reason)
        self.queued.add(job_id)
        log.info("job %s: retry %d of %d in %.1fs (%s)", job_id, done + 1, task.max_retries, delay, reason)
        return True

    def _early_failure(self, job_id: str, info: PaneInfo | None) -> str | None:
        """A start that failed: the agent died with an error before finishing its first turn."""
        if info is None or (info.exit_code in (0, None) and info.signal is None):
            return None
        events = self.store.events(job_id)
        spawned = max((i for i, e in enumerate(events) if e.get("type") == E.AGENT_SPAWNED), default=-1)
        later = {e.get("type") for e in events[spawned + 1:]}
        if spawned < 0 or later & {E.TURN_WAITING, E.INPUT_SENT, E.JOB_CANCELLED, E.JOB_TIMEOUT, E.AGENT_EXITED}:
            return None
        how = f"code {info.exit_code}" if info.exit_code is not None else f"signal {info.signal}"
        return f"agent exited with {how} before its first turn"

    def _settle(self, t: Tracked, info: PaneInfo | None) -> None:
        info = control.with_exit_file(self.home, t.job_id, info)
        why = None if t.cancelled else self._early_failure(t.job_id, info)
        if why is not None:
            try:
                retries_left = self.store.task(t.job_id).max_retries > sum(
                    1 for e in self.store.events(t.job_id) if e.get("type") == E.RETRY_SCHEDULED)
            except ZenError:
                retries_left = False
            if retries_left:
                control.append_exit_once(self.store, t.job_id, info, actor="supervisor")
                self.tmux.kill_session(t.session)
                self._retry(t.job_id, why)  # the worktree stays: the next attempt starts from it
                return
        control.settle_exit(self.home, self.tmux, t.job_id, info, actor="supervisor")
        if self.cfg.get("supervisor", "auto_cleanup"):
            snap = self.store.snapshot(t.job_id)
            if snap.exit_code == 0 and snap.review_branch:
                try:
                    control.clean(self.home, t.job_id)
                except ZenError as exc:
                    log.info("auto_cleanup kept %s: %s", t.job_id, exc)

    def _track(self, job_id: str, snap: JobSnapshot) -> None:
        adapter = None
        with contextlib.suppress(Exception):
            adapter = get_adapter(snap.agent or "cmd")
        now = time.monotonic()
        state = WAITING if snap.state is JobStatus.waiting else WORKING
        det = TurnDetector(idle_after_s=self.idle_after_s, now=now, state=state,
                           reason=snap.reason if state == WAITING else None)
        _, offset = ev_store.read_from(self.store.events_path(job_id), 0)
        deadline = None
        try:
            timeout_s = self.store.task(job_id).timeout_s
            if snap.started_at:  # time spent paused does not count against the timeout
                deadline = parse_iso(snap.started_at).timestamp() + timeout_s + snap.paused_s
        except Exception:
            pass
        self.tracked[job_id] = Tracked(
            job_id=job_id, session=snap.tmux_session or spawn.session_name(job_id), detector=det,
            offset=offset, log_path=self.store.paths(job_id).pane_log, adapter=adapter,
            deadline=deadline, cancelled=snap.state in (JobStatus.cancelled, JobStatus.failed),
            paused=snap.state is JobStatus.paused)

    def _metrics(self, t: Tracked, now: float) -> None:
        """Publish the job's metrics.json (the observatory's snapshot of its timeline)."""
        t.metrics_at = now
        try:
            metrics.refresh(self.store.dir(t.job_id), t.job_id)
        except OSError as exc:
            log.warning("job %s: cannot write metrics.json: %s", t.job_id, exc)

    # -- stepping live jobs -----------------------------------------------------------------------------------
    def step_all(self) -> None:
        if not self.tracked:
            return
        try:
            panes = self.tmux.panes()
        except ZenError as exc:
            log.warning("cannot list tmux panes this tick: %s", exc)
            return
        for job_id in list(self.tracked):
            try:
                self.step(self.tracked[job_id], panes.get(self.tracked[job_id].session))
            except Exception:
                log.exception("job %s: error while stepping", job_id)

    def _follow(self, t: Tracked, now: float) -> None:
        """What others appended to the job since the last look: hooks, input, pause, the end."""
        new, t.offset = ev_store.read_from(self.store.events_path(t.job_id), t.offset)
        for ev in new:
            etype = ev.get("type")
            if etype in (E.TURN_WAITING, E.TURN_WORKING) and ev.get("actor") == "hook":
                t.detector.hook(now, WAITING if etype == E.TURN_WAITING else WORKING, ev.get("reason"))
            elif etype in (E.GUARD_ALLOWED, E.GUARD_DENIED) and t.detector.state == WAITING:
                # the agent is calling tools: it works, whatever the last hook said (e.g. a
                # permission prompt answered in `zen attach`)
                t.detector.input(now)
            elif etype == E.INPUT_SENT:
                t.detector.input(now)
            elif etype in (E.JOB_PAUSED, E.JOB_RESUMED):
                t.paused = etype == E.JOB_PAUSED
                t.detector.last_activity = now  # silence while stopped is not a turn's end
                if not t.paused and t.deadline is not None:
                    t.deadline += float(ev.get("paused_s") or 0.0)
            elif etype in (E.JOB_CANCELLED, E.JOB_FAILED):
                t.cancelled = True
            elif etype == E.AGENT_EXITED:
                # someone else (zen cancel / finish, the kill switch) recorded the end
                t.cancelled = True
        if new:
            self.store.snapshot(t.job_id)
            if any(ev.get("type") == E.TURN_WAITING for ev in new):
                self.coord.poke(t.job_id)  # a turn ended: compare its changes now
            if now - t.metrics_at >= METRICS_EVERY_S:
                self._metrics(t, now)

    def step(self, t: Tracked, info: PaneInfo | None) -> None:
        now = time.monotonic()
        self._follow(t, now)

        if info is not None and info.dead and not info.settled:
            t.dead_since = t.dead_since or now
            if now - t.dead_since < 2.0 and not control.exit_file(self.home, t.job_id).exists():
                return  # neither tmux nor the wrapper has told the exit status yet
        if info is None or info.dead:
            self.tracked.pop(t.job_id, None)
            self.coord.scanner.forget(t.job_id)
            self._settle(t, info)
            self.store.snapshot(t.job_id)
            self._metrics(t, now)
            return

        if t.paused and not t.cancelled:
            return  # stopped by zen pause: it makes no turns and its timeout clock stands still
        wall = time.time()
        if t.kill_at is None and (t.cancelled or (t.deadline is not None and wall >= t.deadline)):
            if not t.cancelled:
                self.store.append(t.job_id, E.JOB_TIMEOUT, after_s=round(wall - (t.deadline or wall), 1))
                log.info("job %s: timeout; stopping the agent", t.job_id)
            signal_pane(info, signal.SIGTERM)
            if t.paused and info.pid:
                procs.continue_below(info.pid)  # a stopped agent gets its TERM only once continued
            t.kill_at = now + self.grace_s
            return
        if t.kill_at is not None:
            if now >= t.kill_at:
                signal_pane(info, signal.SIGKILL)
                t.kill_at = now + self.grace_s
            return

        try:
            st = t.log_path.stat()
            size, written_at = st.st_size, now - max(0.0, time.time() - st.st_mtime)
        except OSError:
            size, written_at = -1, None
        fingerprint = (size, info.cursor)
        det = t.detector
        quiet = fingerprint == det.fingerprint
        reason = None
        # read the screen only when it can matter: about to call the turn waiting, or already waiting
        due = now - t.last_screen >= min(SCREEN_EVERY_S, self.idle_after_s)
        idle = det.state == WAITING or now - det.last_activity >= self.idle_after_s
        if quiet and t.adapter is not None and due and idle:
            t.last_screen = now
            with contextlib.suppress(Exception):
                t.screen_reason = t.adapter.classify_screen(self.tmux.capture(info.pane_id))
        if quiet:
            reason = t.screen_reason
        else:
            t.screen_reason = None
        tr = det.observe(now, fingerprint, reason, activity_at=written_at if size != det_size(det) else None)
        if t.initial_input is not None and det.state == WAITING:
            # the agent's first prompt goes in as typed input (aider cannot take it otherwise)
            text, t.initial_input = t.initial_input, None
            self.tmux.send_text(info.pane_id, text)
            self.store.append(t.job_id, E.INPUT_SENT, text=text[:2000], chars=len(text), initial=True)
            det.input(now)
            if tr is not None and tr.state == WAITING:
                tr = None  # never recorded: it was waiting for exactly this input
                det.recorded(WORKING)
        if tr is not None:
            fields: dict[str, Any] = {"by": "activity"}
            if tr.state == WAITING:
                fields["reason"] = tr.reason
            # our own events come back through the tail as actor "supervisor" and are skipped there
            self.store.append(t.job_id, E.TURN_WAITING if tr.state == WAITING else E.TURN_WORKING, **fields)
            self.store.snapshot(t.job_id)
            if tr.state == WAITING:
                self.coord.poke(t.job_id)


def run_supervisor(home: Home, *, once: bool = False) -> int:
    return Supervisor(home, once=once).run()


__all__ = ["AlreadyRunning", "Supervisor", "run_supervisor", "take_lock"]

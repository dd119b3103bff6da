"""Watching one live job: its turns, its timeout, its end (DESIGN section 3, Turn detection).

    w = JobWatcher.start(job_id, snap, deps=..., settings=..., session=..., timeout_s=...)
    ended = w.step(pane_info)      # None while the agent lives; Ended(last PaneInfo) once it ended

One `step` is one look: it reads what others appended to the timeline since the last look
(hooks, guard decisions, typed input, a cancel), then the pane (alive? its output and cursor;
the screen only when that can matter) and records what changed: `turn.working` /
`turn.waiting`, `job.timeout` and the TERM / KILL that follow, the first prompt typed into
agents that take it as input. Everything it needs comes in through `WatchDeps` (the job store,
the clock, the pane operations), so a test can drive it through a recorded history with a manual
clock and a scripted pane, and a caller can step it whenever a file event says the timeline or
the pane log moved (issue 21) as well as on a tick.

An idle agent costs nothing: `next_due` says when a look is due by the clock alone (the idle
timer, a follow-up look after a change, the timeout, the KILL after a TERM, a dead pane's
settling), so the supervisor steps a job only then or when a file event names it; and the screen
is read only when the pane changed since it was last read (no output, no new screen).

A silent agent with no hook of its own (cmd, the unguarded ones) whose children use no CPU is
asked, once its silence reaches idle_after, what its processes are blocked on (procs.waits):
reading its terminal is the turn's end; asleep on anything else (a sleep, a child, a socket) is
work, and costs what an idle agent costs: seen again at the sweep or a file event, then a few
reads of the same threads; when they moved, the silence is judged afresh.
"""

from __future__ import annotations

import contextlib
import signal as signals
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Protocol

from zen.adapters import procs
from zen.adapters.tmux import PaneInfo
from zen.agents.base import AgentAdapter, typing_of
from zen.core.clock import Clock
from zen.core.events import EventType as E
from zen.core.ids import parse_iso
from zen.core.model import JobSnapshot, JobStatus
from zen.core.turns import WAITING, WORKING, Transition, TurnDetector
from zen.errors import ZenError
from zen.store import events as ev_store
from zen.store.jobs import JobStore

# how long a dead pane may go without an exit status (from tmux, the wrapper or the kernel) before it is
# settled anyway, with whatever is known
SETTLE_WAIT_S = 2.0
SCREEN_EVERY_S = 1.0
METRICS_EVERY_S = 2.0                      # how often a live job's metrics.json is published
OUTPUT_STATE_WINDOW = 65536                # bytes of new pane output scanned for the agent's state reports
# the longest a silent tool call holds a turn as working without a hook (Claude Code's Bash tool
# stops a command at 10 minutes)
TOOL_HOLD_S = 600.0
# a silent agent whose child processes used this many CPU ticks (1/100 s) since the last sample,
# BUSY_SAMPLE_S ago, is working; the first sample is taken BUSY_SAMPLE_S before the silence would
# end the turn, so an agent that really is idle is called waiting at idle_after, not later
BUSY_TICKS = 2
BUSY_SAMPLE_S = 0.25


class Panes(Protocol):
    """What a watcher does to a pane (zen.adapters.tmux.Tmux does all of it)."""

    def capture(self, pane_id: str, *, history: bool = False) -> str: ...

    def send_text(self, pane_id: str, text: str, *, paste: bool = False, enter_delay_s: float = 0.0,
                  inert: bool = False) -> None: ...


@dataclass(frozen=True)
class WatchSettings:
    idle_after_s: float
    grace_s: float
    screen_every_s: float = SCREEN_EVERY_S
    settle_wait_s: float = SETTLE_WAIT_S
    metrics_every_s: float = METRICS_EVERY_S
    follow_s: float = 0.25                      # after a look that saw a change, look again this soon


@dataclass(frozen=True)
class WatchDeps:
    store: JobStore
    clock: Clock
    panes: Panes
    signal: Callable[[PaneInfo, int], object]     # zen.adapters.tmux.signal_pane
    turn_ended: Callable[[str], object] = lambda job_id: None   # the coordinator compares changes then
    publish: Callable[[str], object] = lambda job_id: None      # the observatory's metrics.json
    # every batch of new events: the observatory enforces the job's limits from them
    observed: Callable[[str, list[dict[str, Any]]], object] = lambda job_id, new: None
    busy: Callable[[int], dict[int, int]] = procs.busy_below    # CPU ticks of the agent's children
    waits: Callable[[int], procs.Waits] = procs.waits            # what the pane's processes wait on


@dataclass(frozen=True)
class Ended:
    """The agent is gone: the last look at its pane (None when the session itself is gone)."""

    info: PaneInfo | None


def det_size(det: TurnDetector) -> int | None:
    """The pane-log size in the detector's last fingerprint (None before the first look)."""
    fp = det.fingerprint
    return fp[0] if isinstance(fp, tuple) and fp else None


class JobWatcher:
    def __init__(self, job_id: str, session: str, *, deps: WatchDeps, settings: WatchSettings,
                 detector: TurnDetector, offset: int, adapter: AgentAdapter | None = None,
                 deadline: float | None = None, cancelled: bool = False, paused: bool = False) -> None:
        self.job_id = job_id
        self.session = session
        self.deps = deps
        self.settings = settings
        self.detector = detector
        self.offset = offset                       # bytes of the timeline already read
        self.adapter = adapter
        self.deadline = deadline                   # wall-clock time the task's timeout expires
        self.cancelled = cancelled                 # someone else ended it: stop the agent
        self.paused = paused                       # zen pause: no turns, no timeout until zen resume
        self.kill_at: float | None = None          # after a TERM: when to KILL
        self.last_screen = float("-inf")
        self.screen_fp: Any = None                 # the fingerprint the last screen reading was of
        self.screen_reason: str | None = None
        self.follow_at: float | None = None        # the last look saw a change: look again then
        self.changed_at = float("-inf")            # when a look last saw output or new events
        self.dead_since: float | None = None
        self.initial_input: str | None = None      # typed once the agent first waits (LaunchSpec)
        self.metrics_at = float("-inf")            # when metrics.json was last published
        self.out_at = 0                            # pane.log offset read for the agent's own state reports
        self.busy_ticks: dict[int, int] | None = None   # CPU of the agent's child processes, last sample
        self.busy_at = float("-inf")               # when that sample was taken
        self.agent_pid = 0                         # the pane's process, as the last look saw it
        # silent, idle by CPU, but blocked elsewhere than on its terminal: working while this holds
        # (seen again at the supervisor's sweep or a file event, like an idle agent: no timer)
        self.asleep: procs.Waits | None = None
        # only an agent with no hook of its own is judged by its processes' waits (the others'
        # hooks tell when a turn ends; their TUIs wait in poll loops /proc cannot see into)
        self.by_waits = adapter is not None and not getattr(adapter, "guarded", False)
        self.log_path: Path = deps.store.paths(job_id).pane_log

    @classmethod
    def start(cls, job_id: str, snap: JobSnapshot, *, deps: WatchDeps, settings: WatchSettings,
              session: str, timeout_s: float | None, adapter: AgentAdapter | None = None) -> JobWatcher:
        """A watcher for a job as its timeline stands (a fresh spawn, or one found on restart)."""
        now = deps.clock.monotonic()
        state = WAITING if snap.state is JobStatus.waiting else WORKING
        det = TurnDetector(idle_after_s=settings.idle_after_s, now=now, state=state,
                           reason=snap.reason if state == WAITING else None)
        _, offset = ev_store.read_from(deps.store.events_path(job_id), 0)
        deadline = None
        if timeout_s is not None and snap.started_at:  # time spent paused does not count against it
            with contextlib.suppress(ValueError):
                deadline = parse_iso(snap.started_at).timestamp() + timeout_s + snap.paused_s
        return cls(job_id, snap.tmux_session or session, deps=deps, settings=settings, detector=det,
                   offset=offset, adapter=adapter, deadline=deadline,
                   cancelled=snap.state in (JobStatus.cancelled, JobStatus.failed),
                   paused=snap.state is JobStatus.paused)

    # -- one look -----------------------------------------------------------------------------------
    def step(self, info: PaneInfo | None) -> Ended | None:
        """Look once. None while the agent lives (or its end is not told yet); Ended once it
        ended, for the caller to settle."""
        now = self.deps.clock.monotonic()
        fp = self.detector.fingerprint
        changed = self.read_timeline(now)
        if info is not None and info.dead and not info.settled:
            self.dead_since = self.dead_since or now
            zombie = procs.exit_status(info.pid) if info.pid is not None else None
            if zombie is not None:
                # the kernel's word, kept now: tmux may reap the process the next moment and
                # still show a blank status, and then no one could tell how it ended
                info = replace(info, exit_code=zombie[0], signal=zombie[1])
            elif (now - self.dead_since < self.settings.settle_wait_s
                  and not self.deps.store.paths(self.job_id).exit_file.exists()):
                return None  # neither tmux, the wrapper nor the kernel has told the exit status yet
        if info is None or info.dead:
            return Ended(info)
        if self.paused and not self.cancelled:
            return None  # stopped by zen pause: it makes no turns and its timeout clock stands still
        if not self.stop_if_due(info, now):
            self.watch_turn(info, now)
        changed = changed or (fp is not None and self.detector.fingerprint != fp)
        if changed:
            self.changed_at = now
        self.follow_at = now + self.settings.follow_s if changed else None
        return None

    def next_due(self, now: float) -> float | None:
        """When (monotonic) this job must be looked at again though no file event comes: None
        while nothing but an event can change what it shows (an idle agent)."""
        due = [t for t in (self.follow_at, self.kill_at) if t is not None]
        if self.dead_since is not None:
            due.append(self.dead_since + self.settings.settle_wait_s)
        if self.detector.fingerprint is None:
            due.append(now)                        # never looked at yet
        if not self.paused:
            idle = self.detector.idle_due_in(now)
            if idle is not None and self.asleep is None:   # an asleep agent waits for the sweep
                due.append(now + idle)
                if self.agent_pid and self.busy_ticks is None and self.kill_at is None:
                    due.append(now + max(0.0, idle - BUSY_SAMPLE_S))   # the CPU sample before the verdict
            if self.deadline is not None and self.kill_at is None:
                due.append(now + max(0.0, self.deadline - self.deps.clock.time()))
        return min(due) if due else None

    def read_timeline(self, now: float) -> bool:
        """What hooks, the guardian and commands appended since the last look (True when some)."""
        store = self.deps.store
        new, self.offset = ev_store.read_from(store.events_path(self.job_id), self.offset)
        det = self.detector
        for ev in new:
            etype = ev.get("type")
            if etype in (E.TURN_WAITING, E.TURN_WORKING) and ev.get("actor") == "hook":
                det.hook(now, WAITING if etype == E.TURN_WAITING else WORKING, ev.get("reason"))
            elif etype == E.GUARD_ALLOWED and ev.get("actor") == "guard":
                # a tool call starts (its PreToolUse hook was answered): the agent works until its
                # next hook, however silent the call (DESIGN 13: a running command is activity)
                det.tool(now, TOOL_HOLD_S)
            elif etype in (E.GUARD_ALLOWED, E.GUARD_DENIED) and det.state == WAITING:
                # the agent is calling tools: it works, whatever the last hook said (e.g. a
                # permission prompt answered in `zen attach`)
                det.input(now)
            elif etype == E.INPUT_SENT:
                det.input(now)
            elif etype in (E.JOB_PAUSED, E.JOB_RESUMED):
                self.paused = etype == E.JOB_PAUSED
                det.last_activity = now  # silence while stopped is not a turn's end
                if not self.paused and self.deadline is not None:
                    self.deadline += float(ev.get("paused_s") or 0.0)
            elif etype in (E.JOB_CANCELLED, E.JOB_FAILED, E.AGENT_EXITED):
                # someone else (zen cancel / finish, the kill switch) ended it or recorded the end
                self.cancelled = True
        if new:
            self.asleep = None        # typed input, a hook, a pause: the silence is judged afresh
            self.deps.observed(self.job_id, new)
            store.snapshot(self.job_id)
            if any(ev.get("type") == E.TURN_WAITING for ev in new):
                self.deps.turn_ended(self.job_id)
            if now - self.metrics_at >= self.settings.metrics_every_s:
                self.metrics_at = now
                self.deps.publish(self.job_id)
        return bool(new)

    def stop_if_due(self, info: PaneInfo, now: float) -> bool:
        """TERM on a cancel or the timeout, KILL a grace period later. True while stopping."""
        wall = self.deps.clock.time()
        if self.kill_at is None and (self.cancelled or (self.deadline is not None and wall >= self.deadline)):
            if not self.cancelled:
                self.deps.store.append(self.job_id, E.JOB_TIMEOUT,
                                       after_s=round(wall - (self.deadline or wall), 1))
            self.deps.signal(info, signals.SIGTERM)
            if self.paused and info.pid:
                procs.continue_below(info.pid)  # a stopped agent gets its TERM only once continued
            self.kill_at = now + self.settings.grace_s
            return True
        if self.kill_at is not None:
            if now >= self.kill_at:
                self.deps.signal(info, signals.SIGKILL)
                self.kill_at = now + self.settings.grace_s
            return True
        return False

    def _pane_log(self, now: float) -> tuple[int, float | None]:
        """pane.log's size and when it was last written (-1, None if unreadable); the agent's own
        state reports in what is new are read first."""
        try:
            st = self.log_path.stat()
        except OSError:
            return -1, None
        if st.st_size > self.out_at and hasattr(self.adapter, "output_state"):
            self._agent_state(st.st_size, now)
        return st.st_size, now - max(0.0, self.deps.clock.time() - st.st_mtime)

    def watch_turn(self, info: PaneInfo, now: float) -> None:
        """Output activity (the pane log, the cursor) and the screen: working or waiting."""
        size, written_at = self._pane_log(now)
        self.agent_pid = info.pid or 0
        fingerprint = (size, info.cursor)
        det = self.detector
        quiet = fingerprint == det.fingerprint
        # read the screen only when it can matter (about to call the turn waiting, or already
        # waiting) and only when the pane changed since it was last read: the same output is the
        # same screen, so a silent agent's screen is read once per silence, not on every look
        due = now - self.last_screen >= min(self.settings.screen_every_s, self.settings.idle_after_s)
        idle = det.state == WAITING or now - det.last_activity >= self.settings.idle_after_s
        if quiet and self.adapter is not None and due and idle and fingerprint != self.screen_fp:
            self.last_screen = now
            with contextlib.suppress(Exception):
                self.screen_reason = self.adapter.classify_screen(self.deps.panes.capture(info.pane_id))
                self.screen_fp = fingerprint
        if not quiet:
            self.screen_reason = None
            self.busy_ticks = None                 # output: the silence starts again, so do its samples
            self.asleep = None
        elif det.state == WORKING:
            self.silent(info, now)
        tr = det.observe(now, fingerprint, self.screen_reason if quiet else None,
                         activity_at=written_at if size != det_size(det) else None)
        if self.initial_input is not None:
            tr = self._first_input(info, tr, now)
        if tr is not None:
            self._record_turn(tr, "activity")

    def _record_turn(self, tr: Transition, by: str) -> None:
        """Record a transition the watcher saw itself (by output activity, or the agent's own
        state report); our events come back through the timeline as actor supervisor, skipped there."""
        fields: dict[str, Any] = {"by": by}
        if tr.state == WAITING:
            fields["reason"] = tr.reason
        self.deps.store.append(self.job_id, E.TURN_WAITING if tr.state == WAITING else E.TURN_WORKING, **fields)
        self.deps.store.snapshot(self.job_id)
        if tr.state == WAITING:
            self.deps.turn_ended(self.job_id)

    def _first_input(self, info: PaneInfo, tr: Transition | None, now: float) -> Transition | None:
        """Type the agent's first prompt (LaunchSpec.initial_input: aider cannot take it otherwise)
        once it waits at its input box. Until then it is starting: a quiet spell is not a wait
        worth recording (unless a dialog is up), and neither is the wait the prompt answers."""
        det = self.detector
        if det.state != WAITING:
            return tr
        if self._input_ready(info):
            text, self.initial_input = self.initial_input or "", None
            # a worker's prompt is its parent agent's words: typed as text, never keys (H6)
            self.deps.panes.send_text(info.pane_id, text, inert=True, **typing_of(self.adapter))
            self.deps.store.append(self.job_id, E.INPUT_SENT, text=text[:2000], chars=len(text), initial=True)
        elif det.reason == "dialog":
            return tr
        det.input(now)
        if tr is not None and tr.state == WAITING:
            det.recorded(WORKING)
            return None
        return tr

    def _input_ready(self, info: PaneInfo) -> bool:
        """Whether the agent waits at its input box for the first prompt: never into a dialog,
        and, for an adapter that can tell (`input_ready(screen)`), only once the box is drawn."""
        if self.detector.reason == "dialog":
            return False
        ready = getattr(self.adapter, "input_ready", None)
        if ready is None:
            return True
        try:
            return bool(ready(self.deps.panes.capture(info.pane_id)))
        except ZenError:
            return False

    def _agent_state(self, size: int, now: float) -> None:
        """Read what the agent wrote since the last look for its own state reports (adapter
        `output_state`), and record the turn transition they make, if any."""
        read = getattr(self.adapter, "output_state", None)
        if read is None:
            return
        start = max(self.out_at, size - OUTPUT_STATE_WINDOW, 0)
        try:
            with self.log_path.open("rb") as f:
                f.seek(start)
                chunk = f.read(size - start)
        except OSError:
            return
        # an escape sequence cut by the end of what is written so far is read whole next time
        cut = chunk.rfind(b"\x1b]")
        done = start + len(chunk)
        if cut >= 0 and b"\x07" not in chunk[cut:] and b"\x1b\\" not in chunk[cut + 2:]:
            done = start + cut
        self.out_at = done
        try:
            found = read(chunk[:done - start])
        except Exception:
            return
        tr = self.detector.agent_state(now, *found) if found else None
        if tr is not None:
            self._record_turn(tr, "agent")

    def silent(self, info: PaneInfo, now: float) -> None:
        """A silent working turn: sample the CPU of the agent's children BUSY_SAMPLE_S before the
        silence would end it, judge it at idle_after (busy_check); an agent found asleep stays
        working while its processes wait as they did."""
        det = self.detector
        if self.asleep is not None:
            if self.asleep.unchanged():
                det.last_activity = now            # still blocked where it was, silently: working
                return
            # it moved (its sleep ended, it now reads its terminal...): judge afresh, a sample from now
            self.asleep = None
            det.last_activity = now - self.settings.idle_after_s + BUSY_SAMPLE_S
        if now - det.last_activity >= self.settings.idle_after_s:
            self.busy_check(info, now)
        elif self.busy_ticks is None and (det.idle_due_in(now) or 0.0) <= BUSY_SAMPLE_S and info.pid:
            self.busy_ticks, self.busy_at = self.deps.busy(info.pid), now

    def busy_check(self, info: PaneInfo, now: float) -> None:
        """Silent for idle_after: before that counts as the turn's end, see whether a process the
        agent started is using CPU (a silent test run is no idle agent: DESIGN 13), against the sample
        taken BUSY_SAMPLE_S before; with none (or one too recent), take one and look again then."""
        if not info.pid:
            return
        ticks = self.deps.busy(info.pid)
        before, self.busy_ticks = self.busy_ticks, ticks
        if now - self.busy_at < BUSY_SAMPLE_S / 2:
            before = None                          # a sample too recent to tell anything (a late look)
        self.busy_at = now
        if before is None or set(ticks) != set(before) or any(t - before[p] >= BUSY_TICKS for p, t in ticks.items()):
            # no sample yet, a process started or ended, or one used CPU since the last sample:
            # activity; look again in BUSY_SAMPLE_S
            self.detector.last_activity = now - self.settings.idle_after_s + BUSY_SAMPLE_S
        else:
            self.busy_ticks = None   # idle now: the next silence starts with a fresh sample
            if self.by_waits:
                self.asleep_check(info.pid, now)

    def asleep_check(self, pid: int, now: float) -> None:
        """Silent and idle by CPU: an agent whose processes are blocked on something else than its
        terminal (a sleep, a child, a socket) has not ended its turn, only one that reads its
        terminal (or whose waits /proc cannot tell) has. A user expects `waiting` when it waits for input."""
        try:
            found = self.deps.waits(pid)
        except Exception:
            return  # /proc cannot tell: silence decides, as for any agent
        if found.reading is False:
            self.asleep = found
            self.detector.last_activity = now

    def idle_due_in(self, now: float) -> float | None:
        return self.detector.idle_due_in(now)

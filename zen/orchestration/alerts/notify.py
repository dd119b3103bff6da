"""Telling a human at once when a job needs them or ends (DESIGN section 12).

The supervisor runs a `Notifier`: a thread woken by file events on the timelines (watchdog), so a
`turn.waiting` appended by an agent's hook is announced within milliseconds, whether or not
`zen watch` runs. What is due is decided from the job's timeline alone (`due`, pure), and every
notice is recorded in that timeline as `notify.sent` *before* it goes out, under the job's lock:

- at most once per wait: a wait is the stretch from the event that made the job wait to the next
  input or turn; a notice names the seq that opened it (`for_seq`), and a wait whose notice is
  recorded is never announced again, after a supervisor restart included;
- a job that ends is announced once (not when a human finished or cancelled it: they know);
- an `idle` wait counts only when the agent itself said its turn ended (a hook): silence alone
  is a guess, and a guess that pings a phone is noise.

Channels (zen.yaml `notify:`): `notify-send` where installed, and `notify.command`, a shell
command run with the notice as JSON on stdin and ZEN_NOTIFY_* in its environment. The webhook
comes with the coordinator. The terminal bell is `zen watch`'s own (zen/tui).
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import subprocess
import time
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from zen.adapters.watch import FileEvents
from zen.adapters.worker import Worker
from zen.core import states
from zen.core.events import EventType as E
from zen.core.ids import parse_iso, utcnow
from zen.core.model import JobSnapshot, JobStatus
from zen.errors import ZenError
from zen.orchestration.job.peek import last_line
from zen.store import events as ev_store
from zen.store.config import Config
from zen.store.follow import Followers
from zen.store.home import Home
from zen.store.jobs import JobStore

log = logging.getLogger(__name__)

SENT = E.NOTIFY_SENT
FAILED = E.NOTIFY_FAILED
NEEDS_HUMAN = ("question", "approval", "dialog", "limit")
END_MAX_AGE_S = 3600.0       # an end older than this (e.g. before notifications were set up) is old news
SWEEP_S = 30.0               # without file events, how often live jobs are looked at
COMMAND_TIMEOUT_S = 10.0
IDLE_SETTLE_S = 1.5          # an idle wait is announced once it has lasted this long
# the events after which a notice can be due (the others never make one)
TRIGGERS = frozenset({E.TURN_WAITING, E.AGENT_EXITED, E.HARVEST_DONE, E.HARVEST_FAILED, E.JOB_FAILED,
                      E.JOB_CANCELLED})


@dataclass(frozen=True)
class Notice:
    job: str
    name: str
    kind: str        # "waiting" | "ended"
    for_seq: int     # the seq that opened the wait, or that ended the job
    reason: str      # question | approval | dialog | limit | idle, or the end state
    ts: str

    @property
    def title(self) -> str:
        if self.kind == "waiting":
            return f"zen: {self.name} needs you"
        return f"zen: {self.name} {self.reason}"

    def body(self, line: str) -> str:
        what = {"question": "asks a question", "approval": "waits for an approval",
                "dialog": "shows a dialog", "limit": "reached a limit", "idle": "finished its turn"}
        head = what.get(self.reason, self.reason) if self.kind == "waiting" else f"job {self.job}"
        return f"{head}: {line}" if line else head


def _notifiable_wait(ev: dict[str, Any], reasons: Iterable[str]) -> bool:
    reason = str(ev.get("reason") or "idle")
    if reason not in reasons:
        return False
    return reason != "idle" or ev.get("actor") == "hook"


def due(events: list[dict[str, Any]], *, reasons: Iterable[str] = (*NEEDS_HUMAN, "idle"),
        ended: bool = True, now_s: float | None = None) -> Notice | None:
    """The notice the timeline calls for now and has not recorded yet, or None. Pure."""
    reasons = tuple(reasons)
    if not events:
        return None
    job = str(events[0].get("job") or "")
    snap = JobSnapshot(job=job)
    sent = {(e.get("kind"), e.get("for_seq")) for e in events if e.get("type") == SENT}
    wait_start: int | None = None
    wait: Notice | None = None
    end: Notice | None = None
    by_human = False
    for ev in events:
        before = snap.state
        states.apply(snap, ev)
        etype, seq = ev.get("type"), int(ev.get("seq") or 0)
        if snap.state is JobStatus.waiting:
            if before is not JobStatus.waiting or wait_start is None:
                wait_start, wait = seq, None
            if etype == E.TURN_WAITING and wait is None and _notifiable_wait(ev, reasons):
                wait = Notice(job, snap.name or job, "waiting", wait_start, str(ev.get("reason") or "idle"),
                              str(ev.get("ts") or ""))
            if etype == E.INPUT_SENT:  # answered: whatever comes next is a new wait
                wait_start, wait = None, None
        else:
            wait_start, wait = None, None
        if etype in (E.JOB_CANCELLED, E.AGENT_EXITED, E.FINISH_REQUESTED) and ev.get("actor") == "human":
            by_human = True
        elif etype == E.AGENT_SPAWNED:
            by_human, end = False, None
        ended_now = snap.state.final or (snap.state is JobStatus.exited and etype == E.HARVEST_FAILED)
        if ended_now and end is None:
            state = "harvest failed" if etype == E.HARVEST_FAILED else snap.state.value
            end = Notice(job, snap.name or job, "ended", seq, state, str(ev.get("ts") or ""))
    if snap.state.live:
        return wait if wait is not None and ("waiting", wait.for_seq) not in sent else None
    if end is None or not ended or by_human or ("ended", end.for_seq) in sent:
        return None
    if now_s is not None:
        try:
            if now_s - parse_iso(end.ts).timestamp() > END_MAX_AGE_S:
                return None
        except ValueError:
            return None
    return end


# -- channels ----------------------------------------------------------------------------------

def settings(home: Home) -> dict[str, Any]:
    try:
        return Config.load(home).section("notify")
    except ZenError:
        return {}


def channels(cfg: dict[str, Any]) -> list[str]:
    out = []
    if cfg.get("desktop", True) and shutil.which("notify-send"):
        out.append("desktop")
    if str(cfg.get("command") or "").strip():
        out.append("command")
    return out


def _run(argv: list[str], **kw: Any) -> str | None:
    """None on success, else one line saying what went wrong."""
    try:
        r = subprocess.run(argv, capture_output=True, text=True, timeout=COMMAND_TIMEOUT_S, **kw)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    if r.returncode != 0:
        detail = (r.stderr.strip() or r.stdout.strip() or "").splitlines()
        return f"exit {r.returncode}" + (f": {detail[0][:200]}" if detail else "")
    return None


def deliver(home: Home, notice: Notice, cfg: dict[str, Any], via: list[str], line: str) -> dict[str, str]:
    """Send through every channel in `via`; {channel: error} for those that failed."""
    body = notice.body(line)
    failed: dict[str, str] = {}
    if "desktop" in via:
        urgency = "critical" if notice.kind == "waiting" else "normal"
        err = _run(["notify-send", "--app-name=zen", f"--urgency={urgency}", notice.title, body])
        if err:
            failed["desktop"] = err
    if "command" in via:
        payload = {"v": 1, "kind": notice.kind, "job": notice.job, "name": notice.name,
                   "reason": notice.reason, "for_seq": notice.for_seq, "ts": notice.ts,
                   "title": notice.title, "text": body, "home": str(home.root)}
        env = {**os.environ, "ZEN_HOME": str(home.root), "ZEN_NOTIFY_KIND": notice.kind,
               "ZEN_NOTIFY_JOB": notice.job, "ZEN_NOTIFY_NAME": notice.name,
               "ZEN_NOTIFY_REASON": notice.reason, "ZEN_NOTIFY_TITLE": notice.title,
               "ZEN_NOTIFY_TEXT": body}
        err = _run(["sh", "-c", str(cfg["command"])], input=json.dumps(payload) + "\n", env=env,
                   cwd=str(home.root))
        if err:
            failed["command"] = err
    return failed


def settle_left(notice: Notice, now_s: float) -> float:
    """Seconds an idle notice still waits: an agent that ends its turn and then exits (a script's
    last step, `claude -p`) should be announced once, as ended, not as idle and then ended."""
    if notice.kind != "waiting" or notice.reason != "idle":
        return 0.0
    try:
        return max(0.0, parse_iso(notice.ts).timestamp() + IDLE_SETTLE_S - now_s)
    except ValueError:
        return 0.0


def check(home: Home, job_id: str, *, now_s: float | None = None) -> tuple[Notice | None, float]:
    """Announce what the job's timeline calls for, once: (the notice sent or None, seconds after
    which to look again because a notice is settling, else 0)."""
    store = JobStore(home)
    cfg = settings(home)
    via = channels(cfg)
    if not via:
        return None, 0.0
    reasons = tuple(cfg.get("reasons") or (*NEEDS_HUMAN, "idle"))
    ended = bool(cfg.get("ended", True))
    now_s = utcnow().timestamp() if now_s is None else now_s
    notice = due(store.events(job_id), reasons=reasons, ended=ended, now_s=now_s)
    if notice is None:
        return None, 0.0
    wait_s = settle_left(notice, now_s)
    if wait_s > 0:
        return None, wait_s

    def recorded(events: list[dict[str, Any]]) -> bool:
        return any(e.get("type") == SENT and e.get("kind") == notice.kind and e.get("for_seq") == notice.for_seq
                   for e in events)

    # claimed in the timeline first: a crash after this loses one notice, never sends two
    claimed = ev_store.append_unless(store.dir(job_id), job_id, SENT, recorded, "supervisor",
                                     kind=notice.kind, for_seq=notice.for_seq, reason=notice.reason,
                                     channels=via)
    if claimed is None:
        return None, 0.0
    failed = deliver(home, notice, cfg, via, last_line(store.dir(job_id)))
    for channel, err in failed.items():
        log.warning("notice for %s through %s failed: %s", job_id, channel, err)
        store.append(job_id, FAILED, channel=channel, for_seq=notice.for_seq, error=err)
    return notice, 0.0


# -- the thread the supervisor runs -------------------------------------------------------------

class Notifier:
    """Checks a job whenever its timeline changes (file events), and every job once at start."""

    def __init__(self, home: Home) -> None:
        self.home = home
        self._dirty: set[str] = set()
        self._all = True
        self._worker = Worker("zen-notify", self._pass, log, finish=True)
        self._events = FileEvents(self._on_path, [(home.jobs, True)])
        self._watching = False
        self._timelines = Followers(lambda job: home.job_dir(job) / ev_store.EVENTS)
        self._later: dict[str, float] = {}   # job -> monotonic time a settling notice is ripe

    def _on_path(self, path: str) -> None:
        if not path.endswith("/" + ev_store.EVENTS):
            return
        job_id = os.path.basename(os.path.dirname(path))
        with self._worker.cond:
            self._dirty.add(job_id)
        self._worker.poke()

    def start(self) -> None:
        self._watching = self._events.start()
        self._worker.start()

    def stop(self, timeout_s: float = COMMAND_TIMEOUT_S + 2) -> None:
        self._events.stop()
        self._worker.stop(timeout_s)

    def _pass(self) -> float | None:
        """Look at the jobs whose timelines moved (every candidate on a sweep), and at those whose
        settling notice is ripe; the wait until the next pass (None: until a timeline moves)."""
        with self._worker.cond:
            todo, self._dirty = self._dirty, set()
            sweep, self._all = self._all or not self._watching, False
        ripe = self._ripe()
        for job_id in ripe:
            self._later.pop(job_id, None)
        if sweep:
            todo |= set(self._candidates())
        for job_id in sorted(todo | set(ripe)):
            try:
                self._look(job_id, force=job_id in ripe)
            except Exception:
                log.exception("could not check %s for notices", job_id)
        timeout = None if self._watching else SWEEP_S
        if self._later:
            soonest = max(0.0, min(self._later.values()) - time.monotonic())
            timeout = soonest if timeout is None else min(timeout, soonest)
        return timeout

    def _ripe(self) -> list[str]:
        now = time.monotonic()
        return [j for j, at in self._later.items() if at <= now]

    def _look(self, job_id: str, force: bool = False) -> None:
        """Check the job when its new events can make a notice due (the first look always)."""
        first = job_id not in self._timelines
        new = self._timelines.read(job_id)
        if force or first or any(e.get("type") in TRIGGERS for e in new):
            _, again_s = check(self.home, job_id)
            if again_s > 0:
                self._later[job_id] = time.monotonic() + again_s

    def _candidates(self) -> list[str]:
        """Jobs a notice may be due for: not final, or final only recently."""
        store = JobStore(self.home)
        out = []
        now = utcnow().timestamp()
        for job_id in store.ids():
            try:
                snap = store.snapshot(job_id, write=False)
                if snap.state.final and snap.ended_at and now - parse_iso(snap.ended_at).timestamp() > END_MAX_AGE_S:
                    continue
            except Exception:
                pass
            out.append(job_id)
        return out

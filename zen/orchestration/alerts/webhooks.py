"""What goes to the webhook (DESIGN section 10): the timelines read into the durable outbox.

The supervisor runs `Webhooks(home)`: a feeder thread that reads every job's timeline (and
logs/control.jsonl) from where it last stopped, woken by file events, and enqueues a
notification for

    waiting      a job needs a human (the notifier's own rule, zen.orchestration.alerts.notify.due: once
                 per wait; an `idle` wait only when the agent's hook said so, and only if the job
                 still waits IDLE_SETTLE_S later, so a script that ends its turn and exits is
                 announced once, as finished)
    finished     a job ended on its own and was harvested (exit code 0)
    failed       a job failed, its harvest failed, or its agent exited with an error
    denied       the guardian denied an agent a command or a file edit
    conflict     git merge-tree predicts two jobs' work (or a job and its moved base) conflict
    kill-switch  engaged or released

filtered by `coordinator.notification_events` and `notification_lanes`; and the delivery thread
(zen.coord.webhook) that posts them. How far each file has been read is kept in
coord/outbox/.cursor.json, written after the notifications it covers are on disk: a crash
re-reads a little and enqueues nothing twice (the outbox dedupes by id), and loses nothing.
"""

from __future__ import annotations

import json
import logging
import os
from typing import Any

from zen.adapters.watch import FileEvents
from zen.adapters.worker import Worker
from zen.coord.outbox import Item, Outbox
from zen.coord.settings import Settings
from zen.coord.webhook import Deliverer
from zen.core.events import EventType as E
from zen.core.events import timestamp
from zen.errors import ZenError
from zen.orchestration.alerts.notify import IDLE_SETTLE_S, NEEDS_HUMAN, TRIGGERS, Notice, due
from zen.orchestration.job.peek import last_line
from zen.store import events as ev_store
from zen.store import layout
from zen.store.atomic import atomic_write
from zen.store.follow import Follower, json_record
from zen.store.home import Home
from zen.store.jobs import JobStore

log = logging.getLogger(__name__)

SWEEP_S = 1.0
CURSOR_VERSION = 1


def _events_for_due(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    # the notifier's own claims (notify.sent) must not hide a notice from this separate channel
    return [e for e in events if e.get("type") != E.NOTIFY_SENT]


def notice_at(events: list[dict[str, Any]], upto: int) -> Notice | None:
    """The notice (a wait or an end) the timeline called for right after its event `upto`."""
    return due(_events_for_due(events[: upto + 1]), reasons=(*NEEDS_HUMAN, "idle"), ended=True)


class Feeder:
    def __init__(self, home: Home, outbox: Outbox) -> None:
        self.home = home
        self.outbox = outbox
        self.store = JobStore(home)
        self.cursor_path = home.outbox / layout.OUTBOX_CURSOR
        self.cursor: dict[str, Any] = self._load()

    # -- the cursor ---------------------------------------------------------------------------
    def _load(self) -> dict[str, Any]:
        try:
            data = json.loads(self.cursor_path.read_text())
            if isinstance(data, dict) and isinstance(data.get("jobs"), dict):
                return data
        except (OSError, ValueError):
            pass
        # the first start: everything written so far is old news, nothing is announced twice
        jobs = {}
        for job_id in self.store.ids():
            timeline = Follower(self.store.events_path(job_id))
            timeline.read()
            jobs[job_id] = timeline.offset
        control_log = Follower(self.home.control_log, parse=json_record)
        control_log.read()
        control = control_log.offset
        data = {"v": CURSOR_VERSION, "jobs": jobs, "control": control}
        self._save(data)
        return data

    def _save(self, data: dict[str, Any]) -> None:
        self.cursor_path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(self.cursor_path, json.dumps(data, separators=(",", ":")) + "\n")

    # -- one pass -------------------------------------------------------------------------------
    def feed(self, settings: Settings) -> int:
        """Enqueue what the new lines call for; the number enqueued."""
        n = 0
        moved = False
        jobs: dict[str, int] = self.cursor["jobs"]
        for job_id in self.store.ids():
            offset = int(jobs.get(job_id, 0))
            timeline = Follower(self.store.events_path(job_id), offset)
            new = timeline.read()
            if new:
                n += self._job(job_id, new, settings)
            if timeline.offset != offset:
                jobs[job_id], moved = timeline.offset, True
        control_log = Follower(self.home.control_log, int(self.cursor.get("control") or 0), parse=json_record)
        new, end = control_log.read(), control_log.offset
        for ev in new:
            if ev.get("type") in (E.KILLSWITCH_ENGAGED, E.KILLSWITCH_RELEASED):
                n += self._put(settings, f"control:{ev.get('type')}:{ev.get('ts')}", "kill-switch",
                               _kill_switch(ev), None)
        if end != self.cursor.get("control"):
            self.cursor["control"], moved = end, True
        if moved:
            self._save(self.cursor)
        return n

    def _job(self, job_id: str, new: list[dict[str, Any]], settings: Settings) -> int:
        snap = self.store.snapshot(job_id, write=False)
        if settings.lanes and snap.lane not in settings.lanes:
            return 0
        base = {"job": job_id, "name": snap.name or job_id, "lane": snap.lane}
        n = 0
        history: list[dict[str, Any]] | None = None
        for ev in new:
            etype, seq = ev.get("type"), ev.get("seq")
            if etype == E.GUARD_DENIED:
                n += self._put(settings, f"{job_id}:{seq}", "denied", _denied(base, ev), snap.lane)
            elif etype == E.COORD_CONFLICT and ev.get("paths") and not ev.get("resolved"):
                n += self._put(settings, _conflict_id(job_id, ev), "conflict", self._conflict(base, ev), snap.lane)
            elif etype in TRIGGERS:
                if history is None:
                    history = self.store.events(job_id)
                at = next((i for i, e in enumerate(history) if e.get("seq") == seq), None)
                notice = notice_at(history, at) if at is not None else None
                if notice is not None:
                    n += self._notice(settings, notice, base)
        return n

    def _notice(self, settings: Settings, notice: Notice, base: dict[str, Any]) -> int:
        line = last_line(self.home.job_dir(notice.job))
        item_id = f"{notice.job}:{notice.kind}:{notice.for_seq}"
        if notice.kind == "waiting":
            payload = {**base, "reason": notice.reason, "for_seq": notice.for_seq,
                       "text": f"{notice.title}: {notice.body(line)}"}
            not_before = IDLE_SETTLE_S if notice.reason == "idle" else 0.0
            return self._put(settings, item_id, "waiting", payload, base["lane"], not_before)
        snap = self.store.snapshot(notice.job, write=False)
        ok = notice.reason == "harvested" and snap.exit_code in (0, None) and snap.exit_signal is None
        kind = "finished" if ok else "failed"
        exit_text = f"exit {snap.exit_code}" if snap.exit_code is not None else (
            f"signal {snap.exit_signal}" if snap.exit_signal else "no exit code")
        tail = f"; review: git log {snap.review_branch}" if snap.review_branch else ""
        payload = {**base, "state": notice.reason, "exit_code": snap.exit_code, "signal": snap.exit_signal,
                   "review_branch": snap.review_branch, "for_seq": notice.for_seq,
                   "text": f"zen: {base['name']} {'finished' if ok else 'failed'} ({notice.reason}, {exit_text})"
                           f"{tail}" + (f": {line}" if line and not ok else "")}
        return self._put(settings, item_id, kind, payload, base["lane"])

    def _conflict(self, base: dict[str, Any], ev: dict[str, Any]) -> dict[str, Any]:
        other = str(ev.get("other"))
        files = ", ".join(ev.get("paths") or [])
        if other == "base":
            what = f"no longer merges onto {ev.get('against') or 'its base'}"
        else:
            other_name = self.store.snapshot(other, write=False).name if self.store.exists(other) else other
            what = f"and {other_name} ({other}) will conflict"
        return {**base, "other": other, "paths": list(ev.get("paths") or []), "against": ev.get("against"),
                "text": f"zen: {base['name']} {what} in {files} (predicted by git merge-tree)"}

    def _put(self, settings: Settings, item_id: str, kind: str, payload: dict[str, Any], lane: str | None,
             not_before_s: float = 0.0) -> int:
        if not settings.webhook or kind not in settings.events:
            return 0
        if lane is not None and settings.lanes and lane not in settings.lanes:
            return 0
        body = {"v": 1, "id": item_id, "event": kind, "ts": timestamp(), "home": str(self.home.root), **payload}
        return int(self.outbox.enqueue(item_id, kind, body, not_before_s))

    # -- at delivery ----------------------------------------------------------------------------
    def still_due(self, item: Item) -> bool:
        """An idle wait is sent only if the job still waits in it (it may have ended meanwhile)."""
        p = item.get("payload") or {}
        if item.get("event") != "waiting" or p.get("reason") != "idle":
            return True
        events = self.store.events(str(p.get("job")))
        notice = due(_events_for_due(events), reasons=(*NEEDS_HUMAN, "idle"), ended=False)
        return notice is not None and notice.kind == "waiting" and notice.for_seq == p.get("for_seq")





def _conflict_id(job_id: str, ev: dict[str, Any]) -> str:
    # both jobs of a pair record the conflict: one notification for the pair and these paths
    other = str(ev.get("other"))
    pair = sorted([job_id, other]) if other != "base" else [job_id, "base"]
    return "conflict:" + ":".join(pair) + ":" + ",".join(sorted(ev.get("paths") or []))[:500]


def _denied(base: dict[str, Any], ev: dict[str, Any]) -> dict[str, Any]:
    what = ev.get("command") or ev.get("file_path") or ev.get("tool")
    return {**base, "rule": ev.get("rule"), "reason": ev.get("reason"), "tool": ev.get("tool"), "command": what,
            "text": f"zen: the guardian denied {base['name']} `{str(what)[:300]}` ({ev.get('rule')}): {ev.get('reason')}"}


def _kill_switch(ev: dict[str, Any]) -> dict[str, Any]:
    engaged = ev.get("type") == E.KILLSWITCH_ENGAGED
    who = f" by {ev['by']}" if ev.get("by") else ""
    why = f": {ev['reason']}" if ev.get("reason") else ""
    text = (f"zen: kill switch engaged{who}{why}; every agent is observe-only until a human releases it"
            if engaged else f"zen: kill switch released{who}")
    return {"engaged": engaged, "by": ev.get("by"), "reason": ev.get("reason"), "text": text}


class Webhooks:
    """The feeder and the delivery thread, started and stopped with the supervisor."""

    def __init__(self, home: Home) -> None:
        self.home = home
        self.outbox = Outbox(home)
        self.deliverer = Deliverer(home)
        self._worker = Worker("zen-webhook-feed", self._pass, log)
        self._events = FileEvents(self._on_path, [(home.jobs, True), (home.logs, False)])
        self.feeder: Feeder | None = None

    def _on_path(self, path: str) -> None:
        if path.endswith(os.sep + ev_store.EVENTS) or path.endswith(os.sep + layout.CONTROL_LOG):
            self._worker.poke()

    def start(self) -> None:
        self.feeder = Feeder(self.home, self.outbox)
        self.deliverer.still_due = self.feeder.still_due
        self._events.start()
        self._worker.start()
        self.deliverer.start()

    def stop(self) -> None:
        self._events.stop()
        self._worker.stop(timeout_s=10)
        self.deliverer.stop()

    def _pass(self) -> float:
        assert self.feeder is not None
        try:
            if self.feeder.feed(Settings.load(self.home)):
                self.deliverer.poke()
        except ZenError as exc:
            log.warning("webhook feed skipped (%s); trying again", exc)
        return SWEEP_S

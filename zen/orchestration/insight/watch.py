"""The fleet watched for what no rule names (issue 38): `zen anomalies` and the supervisor's live flags.

    scan(home, since=None) -> [Finding]            every anomaly in the history (zen anomalies)
    AnomalyWatch(home).observe(job_id, new)        the supervisor, on each batch of a live job's events

Baselines come from the fleet's own history (zen.observe.anomalies: median and MAD per agent and
lane), rebuilt every BASELINE_S from the latest BASELINE_JOBS jobs. A live job's last turn (open
or just ended) and hour are judged on each batch of its events, at most every OBSERVE_S unless the
batch ends a turn. Each new finding is recorded once as `anomaly.flagged` in the job's timeline
(what, the value, the typical value and how far from it, the evidence seqs: claimed under the
job's lock, so a restart never flags it twice), announced once through the notice channels
(zen.yaml notify:), and handled by the lane's `on_anomaly`: notify (the default) or pause (the
agent is stopped where it is; zen resume continues it).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from zen.core.events import EventType as E
from zen.core.ids import parse_iso
from zen.errors import ZenError
from zen.observe.anomalies import (
    ENDS,
    Baseline,
    Finding,
    Turn,
    TurnFold,
    baselines,
    detect,
    fold_turns,
)
from zen.orchestration.alerts import notify
from zen.orchestration.job.pause import pause
from zen.store import events as ev_store
from zen.store.config import Config
from zen.store.home import Home
from zen.store.jobs import JobStore

log = logging.getLogger("zen.anomalies")

FLAGGED = E.ANOMALY_FLAGGED
BASELINE_S = 600.0
BASELINE_JOBS = 300
OBSERVE_S = 0.5
ACTIONS = ("notify", "pause")
Bases = Mapping[tuple[str, str], Mapping[str, Baseline]]


def _group(events: list[dict[str, Any]], store: JobStore, job: str) -> tuple[str, str]:
    for ev in events[:5]:
        task = ev.get("task")
        if ev.get("type") == E.TASK_RECEIVED and isinstance(task, Mapping):
            return str(task.get("agent") or ""), str(task.get("lane") or task.get("repo") or "")
    try:
        t = store.task(job)
        return str(t.agent.value if hasattr(t.agent, "value") else t.agent or ""), str(t.lane or "")
    except Exception:      # a task that cannot be read: its own group of one
        return "", ""


def history(home: Home, jobs: Iterable[str] | None = None) -> dict[str, list[Turn]]:
    store = JobStore(home)
    out: dict[str, list[Turn]] = {}
    for job in (store.ids() if jobs is None else jobs):
        events = store.events(job)
        if events:
            out[job] = fold_turns(job, events, _group(events, store, job))
    return out


def scan(home: Home, since: float | None = None) -> list[Finding]:
    """Every finding in the history; `since` (epoch seconds): only turns that started since."""
    turns = history(home)
    found = detect(turns, baselines(turns))
    if since is None:
        return found
    starts = {(t.job, t.n): t.start_ts for ts in turns.values() for t in ts}
    out = []
    for f in found:
        try:
            if parse_iso(starts.get((f.job, f.turn), "")).timestamp() >= since:
                out.append(f)
        except (TypeError, ValueError):
            continue
    return out


def on_anomaly(home: Home, lane: str) -> str:
    try:
        value = str(Config.load(home).lane(lane).get("on_anomaly") or "notify") if lane else "notify"
    except ZenError:
        return "notify"
    if value not in ACTIONS:
        log.warning("lane %s: on_anomaly %r is neither notify nor pause; notifying", lane, value)
        return "notify"
    return value


class AnomalyWatch:
    def __init__(self, home: Home, clock: Callable[[], float] = time.monotonic) -> None:
        self.home = home
        self.store = JobStore(home)
        self.clock = clock
        self._bases: Bases = {}
        self._bases_at = float("-inf")
        self._looked: dict[str, float] = {}
        self._folds: dict[str, TurnFold] = {}
        self._known: dict[str, set[str]] = {}      # keys of the findings already flagged

    def bases(self) -> Bases:
        if self.clock() - self._bases_at >= BASELINE_S:
            recent = sorted(self.store.ids())[-BASELINE_JOBS:]
            self._bases = baselines(history(self.home, recent))
            self._bases_at = self.clock()
        return self._bases

    def observe(self, job_id: str, new: list[dict[str, Any]] | None = None) -> list[dict[str, Any]]:
        """Judge the job's last turn; the anomaly.flagged events written (each finding once). The
        job's turns are folded once from its timeline, then from each batch of new events."""
        fold = self._folds.get(job_id)
        if fold is None:
            events = self.store.events(job_id)
            fold = self._folds[job_id] = TurnFold(job_id, _group(events, self.store, job_id))
            self._known[job_id] = set()
            batch: list[dict[str, Any]] = events
        else:
            batch = [ev for ev in new or () if type(ev.get("seq")) is int and ev["seq"] > fold.seq]
        for ev in batch:
            fold.apply(ev)
            if ev.get("type") == FLAGGED:
                self._known[job_id].add(str(ev.get("key")))
        now = self.clock()
        ends = any(str(ev.get("type")) in ENDS for ev in batch)
        if not ends and now - self._looked.get(job_id, float("-inf")) < OBSERVE_S:
            return []
        self._looked[job_id] = now
        found = detect({job_id: fold.turns}, self.bases(), only_last=True)
        written = []
        for f in found:
            if f.key in self._known[job_id]:
                continue
            self._known[job_id].add(f.key)
            flagged = self.flag(job_id, f, fold.group[1])
            if flagged is not None:
                written.append(flagged)
        if any(str(ev.get("type")) in (E.AGENT_EXITED, E.JOB_CANCELLED, E.JOB_FAILED) for ev in batch):
            self.forget(job_id)
        return written

    def forget(self, job_id: str) -> None:
        """Drop what is kept of an ended job (a later event folds its timeline afresh)."""
        for d in (self._folds, self._known, self._looked):
            d.pop(job_id, None)

    def flag(self, job_id: str, f: Finding, lane: str) -> dict[str, Any] | None:
        action = on_anomaly(self.home, lane)
        d = f.as_dict()

        def recorded(events: list[dict[str, Any]]) -> bool:
            return any(e.get("type") == FLAGGED and e.get("key") == f.key for e in events)

        ev = ev_store.append_unless(self.store.dir(job_id), job_id, FLAGGED, recorded, "supervisor",
                                    what=f.what, key=f.key, message=f.message, kind=f.kind, value=d["value"],
                                    typical=d["typical"], score=d["score"], evidence=f.evidence, turn=f.turn,
                                    action=action)
        if ev is None:
            return None
        log.warning("job %s: anomaly %s: %s", job_id, f.what, f.message)
        self._notify(job_id, ev, f)
        if action == "pause":
            try:
                pause(self.home, job_id, by="supervisor")
            except ZenError as exc:      # it ended or was paused meanwhile: the flag stands
                log.warning("job %s: not paused for its anomaly: %s", job_id, exc)
        return ev

    def _notify(self, job_id: str, ev: dict[str, Any], f: Finding) -> None:
        cfg = notify.settings(self.home)
        via = notify.channels(cfg)
        if not via:
            return
        notice = notify.Notice(job_id, job_id, "anomaly", int(ev["seq"]), f.what, str(ev.get("ts") or ""))

        def sent(events: list[dict[str, Any]]) -> bool:
            return any(e.get("type") == E.NOTIFY_SENT and e.get("kind") == "anomaly"
                       and e.get("for_seq") == notice.for_seq for e in events)

        if ev_store.append_unless(self.store.dir(job_id), job_id, E.NOTIFY_SENT, sent, "supervisor",
                                  kind="anomaly", for_seq=notice.for_seq, reason=f.what, channels=via) is None:
            return
        for channel, err in notify.deliver(self.home, notice, cfg, via, f.message).items():
            self.store.append(job_id, E.NOTIFY_FAILED, channel=channel, for_seq=notice.for_seq, error=err)

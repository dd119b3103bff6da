"""Replay the guardian's recorded inputs under a policy (issue 38: `zen policy simulate`).

    recorded(home, since_s=None, lane=None) -> [Recorded]      every guard decision with its replay
    load(home, policy_file=None, extra_rules=None) -> Policy   the live policy, or a proposed one
    judge(rec, policy, home) -> Decision | None                the decision under `policy` (None: not replayable)
    simulate(home, policy_file=None, ...) -> Simulation        every decision that would change

Each `guard.allowed` / `guard.denied` in a job's timeline (and in logs/guard-audit.jsonl, for
checks outside any job) carries `replay` (zen.guard.audit): the whole call, the worktree, domain,
level (with the kill switch as it was), the variables it could read. Judging it again builds the
same Context and calls the same path as the guardian (Guard.decide: the tools no agent may call,
a broken policy, the decision core). What is compared is the policy's own decision (`core`,
before an approval was used or a lease check turned it), so a replay of the live policy over the
fleet it judged gives back what was recorded. The filesystem is today's: a check that reads a
file (a script run by a command) sees the file as it is now.
"""

from __future__ import annotations

import json
import os
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from zen.core.events import EventType as E
from zen.core.ids import parse_iso
from zen.errors import ZenError
from zen.guard.api import DENY, Context, Decision
from zen.guard.audit import rebuild_call
from zen.guard.context import Guard, read_head
from zen.guard.policy.load import Policy, compile_sources, source_paths
from zen.store.events import read_events, read_events_any
from zen.store.home import Home
from zen.store.jobs import JobStore
from zen.store.layout import EVENTS

GUARD_TYPES = frozenset({E.GUARD_ALLOWED.value, E.GUARD_DENIED.value})


@dataclass(frozen=True)
class Recorded:
    """One recorded decision: where (job, seq or None for the home log), when, on what, and what."""

    job: str | None
    seq: int | None
    ts: str
    lane: str | None
    tool: str
    subject: str
    decision: str           # the policy's own decision (before an approval or a lease)
    rule: str
    cwd: str
    level: str
    replay: dict[str, Any] = field(repr=False)


@dataclass(frozen=True)
class Change:
    job: str | None
    seq: int | None
    ts: str
    lane: str | None
    tool: str
    subject: str
    old_decision: str
    old_rule: str
    new_decision: str
    new_rule: str
    new_reason: str


@dataclass
class Simulation:
    policy: str                     # the file replayed ("live": the home's own)
    replayed: int = 0
    skipped: int = 0                # records with no replay (older zen) or too large to keep
    changes: list[Change] = field(default_factory=list)

    @property
    def by_rule(self) -> dict[str, int]:
        """Changes per rule: the new decision's rule, else (a deny lifted) the old one."""
        out: dict[str, int] = {}
        for c in self.changes:
            key = c.new_rule if c.new_decision != "allow" else c.old_rule
            out[key] = out.get(key, 0) + 1
        return dict(sorted(out.items(), key=lambda kv: (-kv[1], kv[0])))

    def to_json(self) -> dict[str, Any]:
        return {"policy": self.policy, "replayed": self.replayed, "skipped": self.skipped,
                "changed": len(self.changes), "by_rule": self.by_rule,
                "changes": [c.__dict__ for c in self.changes]}


def _subject(ev: dict[str, Any]) -> str:
    call = (ev.get("replay") or {}).get("call")
    if isinstance(call, dict) and isinstance(call.get("tool"), str):
        try:
            c = rebuild_call(call)
            return str(c.command or c.file_path or "")
        except (TypeError, ValueError, KeyError):
            pass
    return str(ev.get("command") or ev.get("file_path") or "")


def _from_event(ev: dict[str, Any], job: str | None, lane: str | None) -> Recorded | None:
    if ev.get("type") not in GUARD_TYPES or not isinstance(ev.get("replay"), dict):
        return None
    core = ev["replay"].get("core") or {}
    return Recorded(job=job, seq=ev.get("seq") if job else None, ts=str(ev.get("ts") or ""), lane=lane,
                    tool=str(ev.get("tool") or ""), subject=_subject(ev),
                    decision=str(core.get("decision") or ev.get("decision") or ""),
                    rule=str(core.get("rule") or ev.get("rule") or ""), cwd=str(ev.get("cwd") or ""),
                    level=str(ev.get("level") or "suggest"), replay=ev["replay"])


def _after(ts: str, since: float | None) -> bool:
    if since is None:
        return True
    try:
        return parse_iso(ts).timestamp() >= since
    except (TypeError, ValueError):
        return False


def recorded(home: Home, since: float | None = None, lane: str | None = None,
             counts: dict[str, int] | None = None) -> list[Recorded]:
    """Every guard decision recorded since `since` (epoch seconds), oldest job first; `lane`: only
    that lane's jobs (the home log, with no lane, is left out then). `counts["skipped"]` counts the
    decisions recorded without a replay."""
    store = JobStore(home)
    out: list[Recorded] = []
    skipped = 0
    for job in _job_ids(home):
        job_lane = _lane(store, job)
        if lane is not None and job_lane != lane:
            continue
        for ev in read_events(store.events_path(job)):
            if ev.get("type") not in GUARD_TYPES or not _after(str(ev.get("ts") or ""), since):
                continue
            rec = _from_event(ev, job, job_lane)
            if rec is None or "call" not in rec.replay or rec.replay.get("partial"):
                skipped += 1
                continue
            out.append(rec)
    if lane is None:
        for ev in read_events_any(home.guard_audit_log):
            if ev.get("type") not in GUARD_TYPES or not _after(str(ev.get("ts") or ""), since):
                continue
            rec = _from_event(ev, ev.get("job") if isinstance(ev.get("job"), str) else None, None)
            if rec is None or "call" not in rec.replay or rec.replay.get("partial"):
                skipped += 1
                continue
            out.append(rec)
    if counts is not None:
        counts["skipped"] = counts.get("skipped", 0) + skipped
    return out


def _job_ids(home: Home) -> list[str]:
    """Every job directory with a timeline (a job whose task.yaml is damaged was still judged)."""
    try:
        return sorted(p.name for p in home.jobs.iterdir() if (p / EVENTS).is_file())
    except (FileNotFoundError, NotADirectoryError):
        return []


def _lane(store: JobStore, job: str) -> str | None:
    try:
        return store.task(job).lane
    except Exception:       # a job whose task cannot be read: still replayed, under no lane
        return None


def load(home: Home, policy_file: str | Path | None = None,
         extra_rules: list[dict[str, Any]] | None = None, *, name: str = "proposed rules") -> Policy:
    """The home's policy with `policy_file` in place of policy/guardian.yaml and `extra_rules`
    (guardian rules, as an incident's controls carry them) added. Raises ZenError when it does not
    compile, naming the problem."""
    root = str(home.root)
    paths = source_paths(root)
    if policy_file is not None:
        p = Path(policy_file).expanduser()
        if not p.is_file():
            raise ZenError(f"{policy_file} is not a file (give the guardian.yaml to simulate)")
        paths[0] = str(p.resolve())
    with tempfile.TemporaryDirectory(prefix="zen-simulate-") as tmp:
        if extra_rules:
            # a JSON document is YAML too: no YAML writer needed for a temporary source
            extra = os.path.join(tmp, "proposed.yaml")
            Path(extra).write_text(json.dumps({"zen": 1, "id": "proposed",
                                               "controls": {"guardian_rules": extra_rules}}))
            paths.append(extra)
        data = compile_sources(root, [[p] for p in paths])
    if data.get("invalid"):
        raise ZenError(f"the {name} do not compile: {data['invalid']}")
    return Policy(data)


def judge(rec: Recorded, policy: Policy, home: Home) -> Decision | None:
    """The decision `policy` makes on the recorded call, by the guardian's own path; None when
    the record cannot be replayed. Never raises: an error is a deny, as in the guardian."""
    r = rec.replay
    c = r.get("call")
    if not isinstance(c, dict) or not isinstance(c.get("tool"), str) or r.get("partial"):
        return None
    env = {str(k): str(v) for k, v in (r.get("env") or {}).items()}
    job = r.get("job") if isinstance(r.get("job"), str) else None
    agent = bool(r.get("agent"))
    try:
        call = rebuild_call(c)
    except (TypeError, ValueError, KeyError):
        return None
    ctx = Context(cwd=rec.cwd or "/", worktree=r.get("worktree"), home=str(home.root), user_home=r.get("user_home"),
                  level=rec.level, domain=r.get("domain"), job_id=job, env=env, realpath=os.path.realpath,
                  agent=agent, read=read_head)
    guard = Guard(home=str(home.root), env=env, job_id=job or "", agent=agent)
    try:
        return guard.decide(call, ctx, policy)
    except Exception as exc:
        return Decision(DENY, "guard.error", f"internal error, denied to be safe ({type(exc).__name__}: {exc})")


def changes(records: list[Recorded], policy: Policy, home: Home, sim: Simulation) -> Iterator[Change]:
    for rec in records:
        d = judge(rec, policy, home)
        if d is None:
            sim.skipped += 1
            continue
        sim.replayed += 1
        if d.decision != rec.decision or d.rule != rec.rule:
            yield Change(job=rec.job, seq=rec.seq, ts=rec.ts, lane=rec.lane, tool=rec.tool, subject=rec.subject,
                         old_decision=rec.decision, old_rule=rec.rule, new_decision=d.decision,
                         new_rule=d.rule, new_reason=d.reason)


def simulate(home: Home, policy_file: str | Path | None = None, *, since: float | None = None,
             lane: str | None = None, extra_rules: list[dict[str, Any]] | None = None,
             records: list[Recorded] | None = None) -> Simulation:
    """Every recorded decision the policy (`policy_file` and `extra_rules`, else the live one)
    would make differently."""
    policy = load(home, policy_file, extra_rules, name=str(policy_file) if policy_file else "proposed rules")
    sim = Simulation(policy=str(policy_file) if policy_file else ("live + proposed rules" if extra_rules else "live"))
    counts: dict[str, int] = {}
    if records is None:
        records = recorded(home, since, lane, counts)
    sim.skipped = counts.get("skipped", 0)
    sim.changes = list(changes(records, policy, home, sim))
    return sim


DRIFT_WINDOW_S = 7 * 86400
DRIFT_RECORDS = 5000


def drift(home: Home, since_s: float = DRIFT_WINDOW_S, limit: int = DRIFT_RECORDS) -> tuple[str, str]:
    """(status, message) for `zen preflight` and `zen doctor`: the live policy (hand-edited rules,
    a new zen) replayed over the last week's decisions (the latest `limit`), before the next start.
    WARN when a decision would change; a policy that does not compile is the policy check's FAIL."""
    try:
        records = recorded(home, time.time() - since_s)[-limit:]
        sim = simulate(home, records=records)
    except ZenError as exc:
        return "WARN", f"not simulated: {exc}"
    if not sim.changes:
        return "PASS", f"the live policy gives the same {sim.replayed} decision(s) recorded in the last 7 days"
    top = ", ".join(f"{rule} {n}" for rule, n in list(sim.by_rule.items())[:3])
    return "WARN", (f"the live policy would change {len(sim.changes)} of {sim.replayed} decision(s) recorded in "
                    f"the last 7 days ({top}): zen policy simulate --since 7d lists them")

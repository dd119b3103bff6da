"""Autonomy levels per domain, the evidence that earns them, and the kill switch.

policy/autonomy.yaml holds each domain's level (comments kept when zen changes a level);
evidence/<domain>.jsonl is append-only; control/KILL is the kill switch, read by the guardian
itself on every decision, so it holds with the supervisor stopped or hung.
"""

from __future__ import annotations

import copy
import getpass
import io
import json
import os
import socket
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedMap

from zen.core import autonomy as rules
from zen.core.events import FORMAT_VERSION, timestamp
from zen.core.events import EventType as E
from zen.core.ids import iso, utcnow
from zen.core.model import JobStatus, Level
from zen.errors import NotFound, ZenError, disk_error
from zen.store import events as ev_store
from zen.store.atomic import append_whole, atomic_write, flocked, fsync_dir
from zen.store.config import Config
from zen.store.home import Home
from zen.store.jobs import JobStore


def _yaml() -> Any:
    y = YAML()
    y.preserve_quotes = True
    y.indent(mapping=2, sequence=4, offset=2)
    return y


_POLICY_CACHE: dict[tuple[object, ...], Any] = {}


def load_policy(home: Home) -> Any:
    """policy/autonomy.yaml as a fresh copy, to change and write back (`set_level`)."""
    return copy.deepcopy(read_policy(home))


def read_policy(home: Home) -> Any:
    """policy/autonomy.yaml, parsed again only when the file changed, and shared: for reading
    only (the supervisor asks per start; a deep copy of the comment-keeping map costs more than
    the whole lookup)."""
    path = home.autonomy_policy
    try:
        st = path.stat()
        key: tuple[object, ...] | None = (str(path), st.st_mtime_ns, st.st_size, st.st_ino)
    except OSError:
        key = None
    if key is not None and key in _POLICY_CACHE:
        return _POLICY_CACHE[key]
    data = _parse_policy(home, path)
    if key is not None:
        _POLICY_CACHE.clear()
        _POLICY_CACHE[key] = data
    return data


def _parse_policy(home: Home, path: Path) -> Any:
    try:
        data = _yaml().load(path.read_text())
    except FileNotFoundError:
        raise ZenError(f"{path} is missing (zen init {home.root} restores the default)") from None
    except Exception as exc:
        raise ZenError(f"{path} is not valid YAML: {str(exc).splitlines()[0]}") from None
    if not hasattr(data, "get"):
        raise ZenError(f"{path} must be a mapping with default_level and domains")
    return data


def level_of(policy: Any, domain: str) -> Level:
    domains = policy.get("domains") or {}
    raw = domains.get(domain, policy.get("default_level", "suggest"))
    try:
        return Level.parse(str(raw))
    except ValueError as exc:
        raise ZenError(f"policy/autonomy.yaml, domain {domain}: {exc}") from None


def domain_level(home: Home, domain: str | None) -> Level | None:
    """A domain's own level (no kill switch), or None when policy/autonomy.yaml cannot be read;
    callers choose their safe default (preflight reports the broken file)."""
    try:
        return level_of(read_policy(home), domain or "code")
    except ZenError:
        return None


def domains(home: Home, policy: Any) -> list[str]:
    names = set((policy.get("domains") or {}).keys())
    names |= {str(spec.get("domain") or "code") for spec in Config.load(home).lanes.values()}
    names |= {p.stem for p in home.evidence.glob("*.jsonl")}
    return sorted(names)


def set_level(home: Home, domain: str, level: Level) -> None:
    path = home.autonomy_policy
    with flocked(home.autonomy_lock):
        data = load_policy(home)
        if data.get("domains") is None:
            data["domains"] = CommentedMap()
        data["domains"][domain] = level.label
        buf = io.StringIO()
        _yaml().dump(data, buf)
        atomic_write(path, buf.getvalue())


# -- evidence ------------------------------------------------------------------


def evidence_path(home: Home, domain: str) -> Path:
    return home.evidence_file(domain)


def read_evidence(home: Home, domain: str) -> list[Mapping[str, Any]]:
    return list(ev_store.read_events_any(evidence_path(home, domain)))


def record_evidence(home: Home, domain: str, kind: str, **fields: Any) -> dict[str, Any]:
    rec = {"v": FORMAT_VERSION, "ts": timestamp(), "domain": domain, "kind": kind, "by": _who(), **fields}
    path = evidence_path(home, domain)
    with flocked(home.evidence_lock(domain)):
        append_whole(path, json.dumps(rec, separators=(",", ":")).encode() + b"\n")
    return rec


def _who() -> str:
    try:
        user = getpass.getuser()
    except Exception:
        user = "unknown"
    return f"{user}@{socket.gethostname()}"


def incidents_since(home: Home, domain: str, since_ts: str | None) -> int:
    """Incidents tagged with `domain` recorded after `since_ts` (all of them when None)."""
    count = 0
    for path in sorted(home.incidents.glob("*.yaml")):
        try:
            data = YAML(typ="safe").load(path.read_text()) or {}
        except Exception:
            continue
        if not isinstance(data, dict) or str(data.get("domain", "")) != domain:
            continue
        if data.get("example"):
            continue  # shipped examples teach; they are not this home's history
        when = str(data.get("recorded_at") or data.get("date") or "")
        if since_ts is None or when > since_ts:
            count += 1
    return count


def progress(home: Home, domain: str) -> rules.Progress:
    policy = read_policy(home)
    level = level_of(policy, domain)
    records = read_evidence(home, domain)
    thresholds = dict(policy.get("thresholds") or {})
    incidents = incidents_since(home, domain, rules.last_demotion_ts(records))
    return rules.progress(domain, level, records, thresholds, incidents)


@dataclass(frozen=True)
class DomainView:
    """One domain in `zen autonomy`: its level, what the kill switch leaves of it, its evidence."""

    progress: rules.Progress
    effective_level: Level

    def to_json(self) -> dict[str, Any]:
        return {**self.progress.as_dict(), "effective_level": self.effective_level.label}


def show(home: Home) -> list[DomainView]:
    policy = read_policy(home)
    killed = home.kill_file.exists()
    out = []
    for domain in domains(home, policy):
        prog = progress(home, domain)
        out.append(DomainView(prog, Level.observe if killed else prog.level))
    return out


def promote(home: Home, domain: str, *, override: bool = False, reason: str | None = None) -> Level:
    prog = progress(home, domain)
    if prog.next_level is None:
        raise ZenError(f"{domain} is already {prog.level.label}, the highest level")
    if override:
        if not reason or not reason.strip():
            raise ZenError("--override needs --reason \"...\" saying why the evidence is not needed")
        record_evidence(home, domain, "override", frm=prog.level.label, to=prog.next_level.label,
                        reason=reason.strip(), missing=prog.missing)
    elif prog.missing is not None:
        raise ZenError(prog.missing + f" (zen autonomy promote {domain} --override --reason ... records a human override)")
    else:
        record_evidence(home, domain, "promoted", frm=prog.level.label, to=prog.next_level.label)
    set_level(home, domain, prog.next_level)
    return prog.next_level


def demote(home: Home, domain: str, reason: str) -> Level:
    policy = read_policy(home)
    level = level_of(policy, domain)
    new = rules.demoted(level)
    record_evidence(home, domain, "demoted", frm=level.label, to=new.label, reason=reason)
    set_level(home, domain, new)
    return new


# -- verdicts --------------------------------------------------------------------


@dataclass(frozen=True)
class Verdict:
    job: str
    domain: str
    verdict: str             # accepted | corrected
    level: Level             # the domain's level when the verdict was given
    demoted_to: Level | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"job": self.job, "domain": self.domain, "verdict": self.verdict,
                               "level": self.level.label}
        if self.demoted_to is not None:
            out["demoted_to"] = self.demoted_to.label
        return out


def verdict(home: Home, job_id: str, *, accepted: bool, correction: str | None = None) -> Verdict:
    store = JobStore(home)
    snap = store.snapshot(job_id)
    if snap.state not in (JobStatus.harvested, JobStatus.cancelled) and not snap.harvest_commit:
        raise ZenError(f"job {job_id} has not been harvested yet (state {snap.state.value}); "
                       f"review it after zen harvest {job_id}")
    if not accepted and not (correction and correction.strip()):
        raise ZenError("zen reject needs --correction \"what was wrong\": the correction is the evidence")
    for ev in store.events(job_id):
        if ev.get("type") in (E.REVIEW_ACCEPTED, E.REVIEW_REJECTED):
            raise ZenError(f"job {job_id} already has a verdict ({ev['type'].split('.')[1]})")
    task = store.task(job_id)
    domain = task.domain or snap.domain or "code"
    level = level_of(read_policy(home), domain)
    kind = "accepted" if accepted else "corrected"
    fields: dict[str, Any] = {"job": job_id, "level": level.label, "branch": snap.review_branch,
                              "commit": snap.harvest_commit}
    if correction:
        fields["correction"] = correction.strip()
    record_evidence(home, domain, kind, **fields)
    store.append(job_id, E.REVIEW_ACCEPTED if accepted else E.REVIEW_REJECTED, actor="human",
                 domain=domain, correction=correction)
    demoted_to = None if accepted else demote(home, domain, reason=f"correction on {job_id}: {correction}")
    return Verdict(job_id, domain, kind, level, demoted_to)


# -- kill switch -------------------------------------------------------------------


def live_jobs(home: Home) -> list[str]:
    store = JobStore(home)
    return [s.job for s in store.snapshots() if s.state.live]


@dataclass(frozen=True)
class KillSwitch:
    """control/KILL as engaged, and what was done about running agents."""

    engaged_at: str
    by: str
    reason: str
    already_engaged: bool
    stopped: tuple[str, ...] = ()
    held: tuple[str, ...] = ()      # paused: agents the guardian does not see (job/killswitch.py)

    def to_json(self) -> dict[str, Any]:
        return {"zen": 1, "engaged_at": self.engaged_at, "by": self.by, "reason": self.reason,
                "already_engaged": self.already_engaged, "stopped": list(self.stopped),
                "held": list(self.held)}


@dataclass(frozen=True)
class Released:
    released_at: str
    by: str


def engage_kill_switch(home: Home, reason: str | None) -> KillSwitch:
    record = {"zen": 1, "engaged_at": iso(utcnow()), "by": _who(), "reason": reason or "no reason given"}
    text = "".join(f"{k}: {json.dumps(v)}\n" for k, v in record.items())
    already = home.kill_file.exists()
    try:
        atomic_write(home.kill_file, text)
    except OSError as exc:
        if disk_error(exc) is None:
            raise
        _engage_bare(home, exc)
    _control_log(home, E.KILLSWITCH_ENGAGED, **record)
    store = JobStore(home)
    for job_id in live_jobs(home):
        store.append(job_id, E.KILLSWITCH_ENGAGED, actor="human", reason=record["reason"], by=record["by"])
    return KillSwitch(str(record["engaged_at"]), str(record["by"]), str(record["reason"]), already)


def _engage_bare(home: Home, exc: OSError) -> None:
    """The kill switch on a disk that cannot take its record: an empty control/KILL (a new
    name needs no data block) engages it all the same, since the guardian only asks whether the
    file exists; then say what could not be written."""
    try:
        os.close(os.open(home.kill_file, os.O_WRONLY | os.O_CREAT, 0o644))
    except OSError:
        raise exc from None
    raise ZenError(f"the kill switch is engaged (every domain is observe-only), but its record could not be "
                   f"written: {disk_error(exc)}") from None


def release_kill_switch(home: Home) -> Released:
    if not home.kill_file.exists():
        raise ZenError("the kill switch is not engaged")
    record = {"released_at": iso(utcnow()), "by": _who()}
    # recorded first: a safety control is never lifted without a trace (a full disk refuses it)
    _control_log(home, E.KILLSWITCH_RELEASED, **record)
    os.replace(home.kill_file, home.control / f"KILL.released-{record['released_at'].replace(':', '')}")
    fsync_dir(home.control)
    store = JobStore(home)
    for job_id in live_jobs(home):
        store.append(job_id, E.KILLSWITCH_RELEASED, actor="human", by=record["by"])
    return Released(record["released_at"], record["by"])


def _control_log(home: Home, etype: str, **fields: Any) -> None:
    """Home-wide control events (kill switch) go to logs/control.jsonl, append-only."""
    ev_store.append_control(home, etype, **fields)


__all__ = ["NotFound", "demote", "engage_kill_switch", "promote", "release_kill_switch", "show", "verdict"]

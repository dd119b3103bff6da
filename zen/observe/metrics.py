"""Metrics of a job, folded from its timeline; figures of any set of jobs over a time window.

`JobFold` reads a job's events once, in order, into per-minute buckets of additive counts and
latency samples (so a window of `--since 24h` sums buckets instead of re-reading timelines), and
keeps what it needs to carry on from the next event (`jobs/<id>/metrics.json` is its JSON).
`figures(folds, since)` adds any set of folds up into the plainly named figures of
`zen metrics --json`.

Usage has two sources per job, counted apart and never added together:
- `otel`: api.request / api.error events (the agent's OpenTelemetry, per call, with latency);
- `files`: usage events read from the agent's transcript or rollout (exact cache-write split).
A job's tokens, cost and calls come from the source that has counted more calls (the files on a
tie: they split 5-minute from 1-hour cache writes), errors from OpenTelemetry when it is on.
When both have counted, `reconciliation` compares them.

Pure: no I/O (zen/observe/snapshot.py reads and writes the files).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from typing import Any

from zen.core.events import EventType as E
from zen.core.events import usable
from zen.core.ids import parse_iso
from zen.observe.fileops import OPS, ops_of
from zen.observe.ledger import CALLS, COST, ERRORS, add_fields
from zen.observe.tokens import FIELDS as TOKEN_FIELDS

VERSION = 1
OLDER = "older"                 # the bucket compacted buckets are merged into (no latency samples)
LISTS = ("api_ms", "tool_ms", "turn_ms")
_STARTS = frozenset({E.AGENT_SPAWNED, E.TURN_WORKING, E.INPUT_SENT})
_USAGE_FIELDS = (*TOKEN_FIELDS, COST, CALLS, ERRORS)


def _ms_between(a: str, b: str) -> float | None:
    """Milliseconds from ISO time `a` to `b` (zen's own format), None if either is unreadable."""
    try:
        return (parse_iso(b) - parse_iso(a)).total_seconds() * 1000.0
    except (TypeError, ValueError):
        return None


def new_bucket() -> dict[str, Any]:
    return {"otel": {}, "files": {}, "tools": 0, "tools_failed": 0, "guard": {"allowed": 0, "denied": 0},
            "file_operations": dict.fromkeys(OPS, 0), "turns": 0,
            **{k: [] for k in LISTS}}


def merge_bucket(into: dict[str, Any], b: Mapping[str, Any], *, samples: bool = True) -> dict[str, Any]:
    add_fields(into["otel"], b.get("otel") or {})
    add_fields(into["files"], b.get("files") or {})
    for key in ("tools", "tools_failed", "turns"):
        into[key] += int(b.get(key) or 0)
    for group in ("guard", "file_operations"):
        for k, v in (b.get(group) or {}).items():
            into[group][k] = into[group].get(k, 0) + int(v or 0)
    if samples:
        for k in LISTS:
            into[k].extend(b.get(k) or ())
    return into


class JobFold:
    """One job's metrics so far. Feed events in timeline order with `apply`."""

    def __init__(self, job: str) -> None:
        self.job = job
        self.seq = 0
        self.offset = 0            # bytes of events.jsonl folded (snapshot.py's cursor)
        self.info: dict[str, Any] = {"name": "", "lane": "", "agent": "", "domain": ""}
        self.started_at: str | None = None
        self.ended_at: str | None = None
        self.last_at: str | None = None
        self.turn_from: str | None = None   # when the current turn started (None: waiting)
        self.models: dict[str, int] = {}
        self.unpriced: list[str] = []
        self.buckets: dict[str, dict[str, Any]] = {}

    def bucket(self, ts: str) -> dict[str, Any]:
        key = ts[:16] if len(ts) >= 16 else OLDER
        b = self.buckets.get(key)
        if b is None:
            b = self.buckets[key] = new_bucket()
        return b

    def apply(self, ev: Mapping[str, Any]) -> None:
        etype = ev.get("type")
        ts = ev.get("ts")
        if not isinstance(ts, str):
            ts = ""
        seq = ev.get("seq")
        self.seq = seq if type(seq) is int else self.seq + 1
        if not usable(ev):
            return  # a wrong-typed field (zen doctor reports the line): never folded
        self.last_at = ts or self.last_at
        fold = _FOLDS.get(etype)  # type: ignore[arg-type]
        if fold is not None:
            fold(self, ev, ts)
        if etype in _TURN_TYPES:
            self._turns(str(etype), ts)

    def _task(self, ev: Mapping[str, Any], ts: str) -> None:
        task: Mapping[str, Any] = ev["task"] if isinstance(ev.get("task"), Mapping) else {}
        for k in ("name", "agent", "domain"):
            self.info[k] = str(task.get(k) or self.info[k])
        self.info["lane"] = str(task.get("lane") or task.get("repo") or "")

    def _usage(self, ev: Mapping[str, Any], ts: str) -> None:
        add_fields(self.bucket(ts)["files"], ev)
        self._model(ev)

    def _api_request(self, ev: Mapping[str, Any], ts: str) -> None:
        b = self.bucket(ts)
        otel = add_fields(b["otel"], ev)
        otel[CALLS] += 1
        ms = ev.get("duration_ms")
        if isinstance(ms, int | float) and not isinstance(ms, bool):
            b["api_ms"].append(round(float(ms), 1))
        self._model(ev)

    def _api_error(self, ev: Mapping[str, Any], ts: str) -> None:
        add_fields(self.bucket(ts)["otel"], {ERRORS: 1})

    def _tool_result(self, ev: Mapping[str, Any], ts: str) -> None:
        b = self.bucket(ts)
        b["tools"] += 1
        b["tools_failed"] += 0 if ev.get("success", True) else 1
        ms = ev.get("duration_ms")
        if isinstance(ms, int | float) and not isinstance(ms, bool):
            b["tool_ms"].append(round(float(ms), 1))

    def _allowed(self, ev: Mapping[str, Any], ts: str) -> None:
        self._guard(ev, ts, True)

    def _denied(self, ev: Mapping[str, Any], ts: str) -> None:
        self._guard(ev, ts, False)

    def _model(self, ev: Mapping[str, Any]) -> None:
        model = ev.get("model")
        if isinstance(model, str) and model:
            self.models[model] = self.models.get(model, 0) + 1
        for m in ev.get("unpriced") or () if isinstance(ev.get("unpriced"), list) else ():
            if str(m) not in self.unpriced:
                self.unpriced.append(str(m))

    def _guard(self, ev: Mapping[str, Any], ts: str, allowed: bool) -> None:
        b = self.bucket(ts)
        b["guard"]["allowed" if allowed else "denied"] += 1
        if allowed:
            for op, n in (ops_of(ev) or {}).items():
                b["file_operations"][op] += n

    def _turns(self, etype: str, ts: str) -> None:
        if etype == E.AGENT_SPAWNED:
            self.started_at = self.started_at or ts
        elif etype in (E.AGENT_EXITED, E.JOB_CANCELLED, E.JOB_FAILED):
            self.ended_at = self.ended_at or ts
        if etype in _STARTS and self.turn_from is None and not self.ended_at:
            self.turn_from = ts
        elif etype == E.TURN_WAITING and self.turn_from is not None:
            b = self.bucket(ts)
            b["turns"] += 1
            took = _ms_between(self.turn_from, ts)
            if took is not None and took >= 0:
                b["turn_ms"].append(round(took, 1))
            self.turn_from = None
        elif etype == E.AGENT_EXITED:
            self.turn_from = None

    def compact(self, before: str) -> int:
        """Merge the buckets of minutes that began by `before` (ISO) into one, latency samples
        dropped (per-job totals kept): `observatory.history_retention`. Returns how many were
        merged. (A minute that straddles `before` goes too: retention is kept to the minute.)"""
        old = [k for k in self.buckets if k != OLDER and k <= before[:16]]
        if not old:
            return 0
        into = self.buckets.get(OLDER) or new_bucket()
        for k in old:
            merge_bucket(into, self.buckets.pop(k), samples=False)
        for k in LISTS:
            into[k] = []
        self.buckets[OLDER] = into
        return len(old)

    # -- metrics.json ---------------------------------------------------------------------------
    def to_json(self) -> dict[str, Any]:
        return {"v": VERSION, "job": self.job, "seq": self.seq, "offset": self.offset, **self.info,
                "started_at": self.started_at, "ended_at": self.ended_at, "last_at": self.last_at,
                "turn_from": self.turn_from, "models": self.models, "unpriced": self.unpriced,
                "buckets": self.buckets}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> JobFold:
        if data.get("v") != VERSION:
            raise ValueError(f"metrics format {data.get('v')!r}")
        out = cls(str(data["job"]))
        out.seq, out.offset = int(data.get("seq") or 0), int(data.get("offset") or 0)
        for k in out.info:
            out.info[k] = str(data.get(k) or out.info[k])
        out.started_at, out.ended_at = data.get("started_at"), data.get("ended_at")
        out.last_at, out.turn_from = data.get("last_at"), data.get("turn_from")
        out.models = {str(k): int(v) for k, v in (data.get("models") or {}).items()}
        out.unpriced = [str(m) for m in data.get("unpriced") or ()]
        out.buckets = {str(k): dict(v) for k, v in (data.get("buckets") or {}).items()}
        return out


# event type -> how it folds (plain strings as keys: a dict lookup per event, the hot path of a
# rebuild); the types that start or end a turn also go through _turns
_FOLDS: dict[str, Any] = {
    str(E.TASK_RECEIVED): JobFold._task, str(E.USAGE): JobFold._usage,
    str(E.API_REQUEST): JobFold._api_request, str(E.API_ERROR): JobFold._api_error,
    str(E.TOOL_RESULT): JobFold._tool_result, str(E.GUARD_ALLOWED): JobFold._allowed,
    str(E.GUARD_DENIED): JobFold._denied,
}
_TURN_TYPES = frozenset(str(t) for t in (*_STARTS, E.TURN_WAITING, E.AGENT_EXITED, E.JOB_CANCELLED,
                                         E.JOB_FAILED))


def percentile(samples: list[float], q: float) -> float | None:
    """Nearest-rank percentile (q in 0..1), None with no samples."""
    if not samples:
        return None
    s = sorted(samples)
    return s[max(0, math.ceil(q * len(s)) - 1)]


def _latency(samples: list[float]) -> dict[str, Any]:
    return {"count": len(samples), "p50": percentile(samples, 0.50), "p95": percentile(samples, 0.95)}


def window(fold: JobFold, since: str | None) -> dict[str, Any]:
    """The fold's buckets from minute `since` on (all of them when None), merged into one."""
    total = new_bucket()
    for key, b in fold.buckets.items():
        if since is None or (key != OLDER and key >= since[:16]):
            merge_bucket(total, b)
    return total


def usage_choice(b: Mapping[str, Any]) -> tuple[str, dict[str, Any]]:
    """(source, its usage fields) for one job's window: see the module docstring."""
    otel, files = b["otel"], b["files"]
    if int(otel.get(CALLS) or 0) > int(files.get(CALLS) or 0):
        return "otel", otel
    if int(files.get(CALLS) or 0) > 0 or any(files.get(k) for k in TOKEN_FIELDS):
        return "files", files
    return "none", otel


def _wall_s(fold: JobFold, since: str | None, now: str) -> float:
    if not fold.started_at:
        return 0.0
    start = max(fold.started_at, since) if since else fold.started_at
    end = fold.ended_at or now
    took = _ms_between(start, end)
    return max(0.0, (took or 0.0) / 1000.0)


def figures(folds: Iterable[JobFold], since: str | None = None, now: str = "") -> dict[str, Any]:
    """The figures of `zen metrics --json` over `folds` (one job or many), from `since` on."""
    usage: dict[str, Any] = dict.fromkeys(_USAGE_FIELDS, 0)
    usage[COST] = 0.0
    total = new_bucket()
    jobs, wall, sources, errors = 0, 0.0, {"otel": 0, "files": 0, "none": 0}, 0
    unpriced: set[str] = set()
    for fold in folds:
        unpriced.update(fold.unpriced)
        b = window(fold, since)
        source, chosen = usage_choice(b)
        sources[source] += 1
        add_fields(usage, {**chosen, ERRORS: 0})
        otel_on = bool(b["otel"].get(CALLS) or b["otel"].get(ERRORS))
        errors += int((b["otel"] if otel_on else b["files"]).get(ERRORS) or 0)
        merge_bucket(total, b)
        wall += _wall_s(fold, since, now) if now else 0.0
        jobs += 1
    calls = int(usage[CALLS])
    out: dict[str, Any] = {"jobs": jobs, "api_calls": calls, "api_errors": errors,
                           "error_rate": round(errors / (calls + errors), 6) if calls + errors else 0.0}
    out.update({k: int(usage[k]) for k in TOKEN_FIELDS})
    out["cost_usd"] = round(float(usage[COST]), 6)
    out["api_latency_ms"] = _latency(total["api_ms"])
    tools_seen = total["tools"]
    # every tool that ran, from OpenTelemetry; without it, the guarded calls zen let through
    out["tool_calls"] = tools_seen if tools_seen else total["guard"]["allowed"]
    out["tool_errors"] = total["tools_failed"]
    out["tool_latency_ms"] = _latency(total["tool_ms"])
    out["file_operations"] = {k: total["file_operations"].get(k, 0) for k in OPS}
    out["guard"] = {k: total["guard"].get(k, 0) for k in ("allowed", "denied")}
    out["turns"] = total["turns"]
    out["turn_latency_ms"] = _latency(total["turn_ms"])
    out["wall_time_s"] = round(wall, 1)
    out["usage_sources"] = {"otel": sources["otel"], "transcript_or_rollout": sources["files"],
                            "none": sources["none"]}
    # models the dated price table does not know: priced from zen.yaml prices.default, if at all
    out["unpriced_models"] = sorted(unpriced)
    return out


def reconciliation(fold: JobFold) -> dict[str, Any] | None:
    """OpenTelemetry against the transcript / rollout for one job, when both have counted."""
    b = window(fold, None)
    otel, files = b["otel"], b["files"]
    if not otel.get(CALLS) or not files.get(CALLS):
        return None
    keys = (CALLS, *TOKEN_FIELDS)        # the 1-hour part of the cache writes too
    sides: dict[str, dict[str, Any]] = {}
    for name, side in (("otel", otel), ("transcript_or_rollout", files)):
        sides[name] = {k: int(side.get(k) or 0) for k in keys}
        sides[name]["cost_usd"] = round(float(side.get(COST) or 0), 6)
    o, f = sides["otel"], sides["transcript_or_rollout"]
    return {**sides, "agree": o == f, "tokens_agree": all(o[k] == f[k] for k in keys)}


def headline(usage: Mapping[str, float]) -> dict[str, Any]:
    """Tokens, cost, API calls and errors from a job's state.json `usage` sums (cheap: `zen
    status` shows it for every job), choosing the source as `figures` does."""
    files_calls = int(usage.get(CALLS) or 0)
    otel_calls = int(usage.get("otel_api_calls") or 0)
    tokens = sum(int(usage.get(k) or 0) for k in TOKEN_FIELDS[:4])
    if otel_calls > files_calls:
        out = {"tokens": int(usage.get("otel_tokens") or 0), "cost_usd": float(usage.get("otel_cost_usd") or 0),
               "api_calls": otel_calls}
    else:
        out = {"tokens": tokens, "cost_usd": float(usage.get(COST) or 0), "api_calls": files_calls}
    otel_on = otel_calls or usage.get("otel_api_errors")
    out["api_errors"] = int((usage.get("otel_api_errors") if otel_on else usage.get(ERRORS)) or 0)
    out["cost_usd"] = round(out["cost_usd"], 6)
    return out


def headline_total(usages: Iterable[Mapping[str, float]]) -> dict[str, Any]:
    """The headlines of many jobs added up (zen status's usage line, from state.json's sums)."""
    total: dict[str, Any] = {"tokens": 0, "cost_usd": 0.0, "api_calls": 0, "api_errors": 0}
    for usage in usages:
        for k, v in headline(usage or {}).items():
            total[k] += v
    total["cost_usd"] = round(total["cost_usd"], 6)
    return total

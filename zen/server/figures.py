"""The Metrics tab's figures, folded from the timelines (DESIGN section 8's list).

`usage` events are the record of tokens, cost and API calls (the observatory writes them);
`api.request` / `api.error` / `tool.result` add latency and errors when the agent reports over
OpenTelemetry; the guardian's decisions give the tool calls and the file operations; turns and
inputs come from the turn events. A missing or null field counts as zero, never as an error.
"""

from __future__ import annotations

import statistics
from collections.abc import Iterable
from typing import Any

from zen.core.events import EventType as E
from zen.core.ids import parse_iso

_READ_TOOLS = {"Read", "Grep", "Glob", "LS", "NotebookRead"}
_WRITE_TOOLS = {"Write", "Edit", "MultiEdit", "NotebookEdit"}
_DELETE_WORDS = ("rm ", "rm\t", "unlink ", "rmdir ", "git rm ")


def _num(v: Any) -> float:
    return float(v) if isinstance(v, int | float) and not isinstance(v, bool) else 0.0


def _secs(a: str | None, b: str | None) -> float | None:
    if not a or not b:
        return None
    try:
        return (parse_iso(b) - parse_iso(a)).total_seconds()
    except ValueError:
        return None


def _pct(xs: list[float], q: float) -> float | None:
    if not xs:
        return None
    if len(xs) == 1:
        return xs[0]
    s = sorted(xs)
    return s[min(len(s) - 1, round(q * (len(s) - 1)))]


def _file_op(m: dict[str, Any], ev: dict[str, Any]) -> None:
    tool = str(ev.get("tool") or "")
    if tool in _READ_TOOLS:
        m["file_reads"] += 1
    elif tool in _WRITE_TOOLS:
        m["file_writes"] += 1
    elif tool == "Bash" and any(w in f"{ev.get('command') or ''} " for w in _DELETE_WORDS):
        m["file_deletes"] += 1


def job_metrics(job: str | None, events: Iterable[dict[str, Any]]) -> dict[str, Any]:
    m: dict[str, Any] = {"job": job, "input_tokens": 0.0, "output_tokens": 0.0, "cache_read_tokens": 0.0,
                         "cache_write_tokens": 0.0, "cost_usd": 0.0, "api_calls": 0, "api_errors": 0,
                         "tool_calls": 0, "guard_allowed": 0, "guard_denied": 0, "file_reads": 0,
                         "file_writes": 0, "file_deletes": 0, "turns": 0, "inputs": 0, "wall_s": 0.0}
    api_ms: list[float] = []
    turn_s: list[float] = []
    first = last = working_since = None
    otel_calls = 0
    for ev in events:
        t = ev.get("type")
        ts = ev.get("ts")
        first = first or ts
        last = ts or last
        if t == E.USAGE:
            m["input_tokens"] += _num(ev.get("input_tokens"))
            m["output_tokens"] += _num(ev.get("output_tokens"))
            m["cache_read_tokens"] += _num(ev.get("cache_read_input_tokens"))
            m["cache_write_tokens"] += _num(ev.get("cache_creation_input_tokens"))
            m["cost_usd"] += _num(ev.get("cost_usd"))
            m["api_calls"] += int(_num(ev.get("api_calls")))
            m["api_errors"] += int(_num(ev.get("api_errors")))
        elif t == E.API_REQUEST:
            otel_calls += 1
            if ev.get("duration_ms") is not None:
                api_ms.append(_num(ev.get("duration_ms")))
        elif t in (E.GUARD_ALLOWED, E.GUARD_DENIED):
            m["tool_calls"] += 1
            m["guard_allowed" if t == E.GUARD_ALLOWED else "guard_denied"] += 1
            if t == E.GUARD_ALLOWED:
                _file_op(m, ev)
        elif t in (E.TURN_WORKING, E.INPUT_SENT, E.AGENT_SPAWNED):
            working_since = working_since or ts
            m["inputs"] += 1 if t == E.INPUT_SENT else 0
        elif t == E.TURN_WAITING:
            m["turns"] += 1
            d = _secs(working_since, ts)
            if d is not None and d >= 0:
                turn_s.append(d)
            working_since = None
    m["api_calls"] = max(m["api_calls"], otel_calls)
    m["wall_s"] = max(0.0, _secs(first, last) or 0.0)
    m["turn_latency_p50_s"] = statistics.median(turn_s) if turn_s else None
    m["turn_latency_p95_s"] = _pct(turn_s, 0.95)
    m["api_latency_p50_ms"] = statistics.median(api_ms) if api_ms else None
    m["api_latency_p95_ms"] = _pct(api_ms, 0.95)
    m["error_rate"] = (m["api_errors"] / m["api_calls"]) if m["api_calls"] else 0.0
    m["cost_usd"] = round(m["cost_usd"], 6)
    return m


_SUMS = ("input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens", "cost_usd", "api_calls",
         "api_errors", "tool_calls", "guard_allowed", "guard_denied", "file_reads", "file_writes",
         "file_deletes", "turns", "inputs", "wall_s")


def total(jobs: list[dict[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {k: 0 for k in _SUMS}
    out["job"] = None
    for m in jobs:
        for k in _SUMS:
            out[k] += m.get(k) or 0
    out["cost_usd"] = round(out["cost_usd"], 6)
    out["error_rate"] = (out["api_errors"] / out["api_calls"]) if out["api_calls"] else 0.0
    p50s = [m["turn_latency_p50_s"] for m in jobs if m.get("turn_latency_p50_s") is not None]
    out["turn_latency_p50_s"] = statistics.median(p50s) if p50s else None
    p95s = [m["turn_latency_p95_s"] for m in jobs if m.get("turn_latency_p95_s") is not None]
    out["turn_latency_p95_s"] = max(p95s) if p95s else None
    return out


__all__ = ["job_metrics", "total"]

"""OpenTelemetry logs (OTLP http/json) from agents, turned into timeline events.

A payload is `{"resourceLogs": [{"resource": {"attributes": [...]}, "scopeLogs": [{"logRecords":
[...]}]}]}` (snake_case keys are accepted too). Every record gets its resource's attributes, so
`zen.job` / `zen.lane` (from the OTEL_RESOURCE_ATTRIBUTES zen sets at spawn) attribute it to a
job. Attribute values are OTLP AnyValues: `intValue` arrives as a string in JSON, and producers
write numbers as strings, so every figure is read leniently (a null or odd one is zero).

Events understood (fleet.md A.2 / A.3), by their name in `event.name` or the body:

    claude_code.api_request  -> api.request  model, tokens by class, cost, duration_ms
    claude_code.api_error    -> api.error    model, status_code, error, duration_ms, attempt
    claude_code.tool_result  -> tool.result  tool, success, duration_ms, error
    codex.sse_event (response.completed, with token counts) -> api.request
    codex.api_request with an error status               -> api.error
    codex.tool_result                                    -> tool.result

Others (prompts, tool decisions, ...) are kept in the raw log only: zen sees those itself.
Each event carries `otel` = a key unique to the record (session id + event sequence), so an
exporter's retry of a batch is recognised and not counted twice.

Stdlib only.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Iterator, Mapping
from typing import Any, NamedTuple

from zen.core.events import EventType
from zen.observe import prices as price_table
from zen.observe.tokens import Tokens, anthropic_usage, count

JOB_ATTR, LANE_ATTR = "zen.job", "zen.lane"


class Record(NamedTuple):
    name: str                   # e.g. "claude_code.api_request"
    ts_ns: int                  # event time, ns since the epoch (0 = unknown)
    attrs: dict[str, Any]       # the record's attributes over its resource's

    @property
    def job(self) -> str:
        return str(self.attrs.get(JOB_ATTR) or "")

    @property
    def lane(self) -> str:
        return str(self.attrs.get(LANE_ATTR) or "")


def _get(obj: Mapping[str, Any], camel: str) -> Any:
    if camel in obj:
        return obj[camel]
    snake = "".join("_" + c.lower() if c.isupper() else c for c in camel)
    return obj.get(snake)


def any_value(value: Any) -> Any:
    """A Python value from an OTLP AnyValue."""
    if not isinstance(value, Mapping):
        return value
    for key in ("stringValue", "string_value", "boolValue", "bool_value", "doubleValue", "double_value",
                "bytesValue", "bytes_value"):
        if key in value:
            return value[key]
    for key in ("intValue", "int_value"):
        if key in value:
            return count(value[key]) if str(value[key]).lstrip("-").isdigit() else value[key]
    arr = value.get("arrayValue") or value.get("array_value")
    if isinstance(arr, Mapping):
        return [any_value(v) for v in arr.get("values") or ()]
    kv = value.get("kvlistValue") or value.get("kvlist_value")
    if isinstance(kv, Mapping):
        return attributes(kv.get("values"))
    return None


def attributes(items: Any) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for item in items if isinstance(items, list) else ():
        if isinstance(item, Mapping) and isinstance(item.get("key"), str):
            out[item["key"]] = any_value(item.get("value"))
    return out


def records(payload: Any) -> Iterator[Record]:
    """Every log record of a decoded OTLP logs payload (what cannot be read is skipped)."""
    if not isinstance(payload, Mapping):
        return
    for rl in _get(payload, "resourceLogs") or ():
        if not isinstance(rl, Mapping):
            continue
        resource = _get(rl, "resource")
        res_attrs = attributes(resource.get("attributes")) if isinstance(resource, Mapping) else {}
        for sl in _get(rl, "scopeLogs") or ():
            if not isinstance(sl, Mapping):
                continue
            for lr in _get(sl, "logRecords") or ():
                if not isinstance(lr, Mapping):
                    continue
                attrs = {**res_attrs, **attributes(lr.get("attributes"))}
                body = any_value(lr.get("body"))
                name = attrs.get("event.name") or (body if isinstance(body, str) else "")
                name = str(name or "")
                if name and "." not in name:
                    service = str(res_attrs.get("service.name") or "")
                    prefix = "codex" if service.startswith("codex") else "claude_code"
                    name = f"{prefix}.{name}"
                ts = count(_get(lr, "timeUnixNano")) or count(_get(lr, "observedTimeUnixNano"))
                yield Record(name, ts, attrs)


def decode(body: bytes) -> Any:
    """The JSON of a request body; ValueError when it is not JSON."""
    return json.loads(body)


def record_key(rec: Record) -> str:
    """Unique per record, the same for an exporter's retry of it."""
    a = rec.attrs
    session = a.get("session.id") or a.get("conversation.id") or ""
    seq = a.get("event.sequence")
    if session and seq is not None:
        return f"{session}:{seq}:{rec.name}"
    raw = json.dumps([rec.name, rec.ts_ns, sorted((k, str(v)) for k, v in a.items())])
    return hashlib.sha1(raw.encode()).hexdigest()[:20]


def _ms(value: Any) -> float | None:
    """A duration or amount; None when it is missing or unreadable (left out of latencies)."""
    if value is None or isinstance(value, bool):
        return None
    try:
        got = float(value)
    except (TypeError, ValueError):
        return None
    return got if math.isfinite(got) and got >= 0 else None


def _timed(fields: dict[str, Any], value: Any) -> dict[str, Any]:
    ms = _ms(value)
    if ms is not None:
        fields["duration_ms"] = ms
    return fields


def _flag(value: Any) -> bool:
    return value is True or str(value).lower() == "true"


def claude_tokens(a: Mapping[str, Any]) -> Tokens:
    """Tokens of a claude_code.api_request. Claude Code 2.1 reports the cache writes' sum
    (`cache_creation_tokens`) and its split (`cache_creation_5m_tokens`, `..._1h_tokens`): read
    by the transcript's rule (tokens.anthropic_usage), so both sources agree exactly."""
    return anthropic_usage({
        "input_tokens": a.get("input_tokens"), "output_tokens": a.get("output_tokens"),
        "cache_read_input_tokens": a.get("cache_read_tokens"),
        "cache_creation_input_tokens": a.get("cache_creation_tokens"),
        "cache_creation": {"ephemeral_5m_input_tokens": a.get("cache_creation_5m_tokens"),
                           "ephemeral_1h_input_tokens": a.get("cache_creation_1h_tokens")}})


def codex_tokens(a: Mapping[str, Any]) -> Tokens:
    inp, cached = count(a.get("input_token_count")), count(a.get("cached_token_count"))
    return Tokens(max(0, inp - cached), count(a.get("output_token_count")), cached)


def to_event(rec: Record, prices: Mapping[str, Any] | None = None) -> tuple[str, dict[str, Any]] | None:
    """(event type, fields) for the timeline, or None for a record zen does not count."""
    a = rec.attrs
    base: dict[str, Any] = {"source": "otel", "otel": record_key(rec)}
    if rec.ts_ns:
        base["at_ns"] = rec.ts_ns
    short = rec.name.rsplit(".", 1)[-1]
    model = str(a.get("model") or "")
    if rec.name in ("claude_code.api_request", "codex.sse_event"):
        if rec.name == "codex.sse_event":
            # Codex 0.171 logs response.completed twice: once bare, once with the token counts
            if str(a.get("event.kind") or "") != "response.completed" or "input_token_count" not in a:
                return None
            tokens = codex_tokens(a)
        else:
            tokens = claude_tokens(a)
        fields = {**base, "model": model, **tokens.fields(),
                  "cost_usd": round(price_table.cost(model, tokens, prices), 10)}
        if not price_table.known(model, prices):
            fields["unpriced"] = [model]
        agent_cost = _ms(a.get("cost_usd"))
        if agent_cost is not None:
            fields["agent_cost_usd"] = agent_cost   # the agent's own estimate, for comparison
        return EventType.API_REQUEST, _timed(fields, a.get("duration_ms"))
    if rec.name == "claude_code.api_error" or (
            rec.name == "codex.api_request" and (count(a.get("http.response.status_code")) >= 400
                                                 or a.get("error.message"))):
        return EventType.API_ERROR, _timed({
            **base, "model": model,
            "status_code": count(a.get("status_code") or a.get("http.response.status_code")),
            "error": str(a.get("error") or a.get("error.message") or "")[:500],
            "attempt": count(a.get("attempt"))}, a.get("duration_ms"))
    if short == "tool_result" and rec.name.startswith(("claude_code.", "codex.")):
        fields = {**base, "tool": str(a.get("tool_name") or ""), "success": _flag(a.get("success"))}
        if a.get("error"):
            fields["error"] = str(a["error"])[:500]
        return EventType.TOOL_RESULT, _timed(fields, a.get("duration_ms"))
    return None


def by_job(payload: Any, prices: Mapping[str, Any] | None = None,
           seen: set[str] | None = None) -> dict[str, list[tuple[str, dict[str, Any]]]]:
    """The timeline events a payload holds, per `zen.job`: records of no job, ones zen does not
    count, and ones whose key is in `seen` (a retried batch) are left out; `seen` gains the rest."""
    out: dict[str, list[tuple[str, dict[str, Any]]]] = {}
    for rec in records(payload):
        job = rec.job
        if not job:
            continue
        found = to_event(rec, prices)
        if found is None:
            continue
        key = found[1]["otel"]
        if seen is not None:
            if key in seen:
                continue
            seen.add(key)
        out.setdefault(job, []).append(found)
    return out

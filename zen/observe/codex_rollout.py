"""API calls in a Codex session rollout (`$CODEX_HOME/sessions/YYYY/MM/DD/rollout-*.jsonl`).

Lines are `{timestamp, type, payload}`. Usage arrives two ways, depending on Codex's version:
- `token_usage_record` lines, one per model response (`payload.response_id`, `payload.usage`):
  when a rollout has any, they are the calls, each response id once;
- `event_msg` lines of `payload.type == "token_count"`, whose `payload.info` holds
  `total_token_usage` (cumulative over the session) and, in most versions, `last_token_usage`
  (the latest call's). A cumulative counter is turned into deltas: adding the totals up is the
  classic overcount, and a repeated event (same total) adds nothing. Without a total, each
  `last_token_usage` is one call. A total that goes down starts a new count (a reset).
  `info: null` (a rate-limit-only event) carries no usage.

The model comes from the latest `turn_context` line. OpenAI's `input_tokens` includes the cached
and cache-written tokens, and `output_tokens` includes `reasoning_output_tokens`; they map to
zen's classes as fresh input = input - cached - written, cache reads = cached, cache writes =
written, output = output (reasoning is not added again).

    session = CodexRollout()
    session.feed(lines)                 # any number of times, as the file grows
    for model, tokens in session.calls(): ...

zen/observe/record.py keeps one per job between reads (from a byte offset) and appends the
change as `usage` events; `usage_of` reads a whole rollout at once. Stdlib only.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

from zen.observe.ledger import total_of
from zen.observe.tokens import Tokens, count

# OpenAI's counters as Codex writes them: input (all of it), cached, cache-written, output (all)
Raw = tuple[int, int, int, int]


def raw_usage(usage: Any) -> Raw | None:
    if not isinstance(usage, Mapping):
        return None
    return (count(usage.get("input_tokens")), count(usage.get("cached_input_tokens")),
            count(usage.get("cache_write_input_tokens")), count(usage.get("output_tokens")))


def to_tokens(raw: Raw) -> Tokens:
    inp, cached, written, out = raw
    return Tokens(input=max(0, inp - cached - written), output=out, cache_read=cached,
                  cache_write_5m=written)


class CodexRollout:
    kind = "codex"

    def __init__(self) -> None:
        self.model = ""
        self.total: Raw | None = None            # the last cumulative counter seen
        self.counted: list[tuple[str, Raw]] = []  # calls from token_count events
        self.records: dict[str, tuple[str, Raw]] = {}  # calls from token_usage_record lines

    def feed(self, lines: Iterable[bytes | str]) -> int:
        seen = 0
        for raw in lines:
            try:
                line = json.loads(raw)
            except (ValueError, TypeError):
                continue
            if not isinstance(line, dict):
                continue
            payload = line.get("payload")
            if not isinstance(payload, dict):
                continue
            kind = line.get("type")
            if kind == "turn_context":
                if isinstance(payload.get("model"), str) and payload["model"]:
                    self.model = payload["model"]
            elif kind == "event_msg" and payload.get("type") == "token_count":
                seen += self._token_count(payload.get("info"))
            elif kind == "token_usage_record":
                seen += self._record(payload, len(self.records))
        return seen

    def _token_count(self, info: Any) -> int:
        if not isinstance(info, dict):
            return 0
        total = raw_usage(info.get("total_token_usage"))
        last = raw_usage(info.get("last_token_usage"))
        delta: Raw | None
        if total is None:
            delta = last
        elif self.total is None:
            delta = total
        elif total == self.total:
            delta = None                                  # the same counter again: no new call
        elif all(a >= b for a, b in zip(total, self.total, strict=True)):
            delta = tuple(a - b for a, b in zip(total, self.total, strict=True))  # type: ignore[assignment]
        else:
            delta = last if last is not None else total   # the counter went down: a new count
        if total is not None:
            self.total = total
        if delta is None or not any(delta):
            return 0
        self.counted.append((self.model, delta))
        return 1

    def _record(self, payload: dict[str, Any], n: int) -> int:
        usage = raw_usage(payload.get("usage"))
        if usage is None:
            return 0
        rid = payload.get("response_id")
        key = rid if isinstance(rid, str) and rid else f"#{n}"
        model = payload.get("model") if isinstance(payload.get("model"), str) else ""
        self.records[key] = (model or self.model, usage)
        return 1

    def calls(self) -> Iterator[tuple[str, Tokens]]:
        """(model, tokens) per API call."""
        source = self.records.values() if self.records else self.counted
        for model, raw in source:
            yield model, to_tokens(raw)

    error_count = 0

    def to_json(self) -> dict[str, Any]:
        return {"model": self.model, "total": list(self.total) if self.total else None,
                "counted": [[m, list(r)] for m, r in self.counted],
                "records": {k: [m, list(r)] for k, (m, r) in self.records.items()}}

    @classmethod
    def from_json(cls, data: Any) -> CodexRollout:
        out = cls()
        if not isinstance(data, dict):
            return out
        out.model = str(data.get("model") or "")
        out.total = _raw(data.get("total"))
        for m, r in data.get("counted") or ():
            if (raw := _raw(r)) is not None:
                out.counted.append((str(m), raw))
        for k, (m, r) in (data.get("records") or {}).items():
            if (raw := _raw(r)) is not None:
                out.records[str(k)] = (str(m), raw)
        return out


def _raw(value: Any) -> Raw | None:
    if isinstance(value, list) and len(value) == 4 and all(isinstance(x, int) for x in value):
        return (value[0], value[1], value[2], value[3])
    return None


def usage_of(path: str | Path, prices: Mapping[str, Any] | None = None) -> dict[str, Any] | None:
    """Totals of a whole rollout (usage-event fields: tokens by class, cost_usd, api_calls,
    model), or None when it cannot be read."""
    session = CodexRollout()
    try:
        with Path(path).expanduser().open("rb") as f:
            session.feed(f)
    except OSError:
        return None
    out = total_of(session.calls(), prices).fields()
    out["model"] = session.model
    return out

"""API calls in Claude Code's transcripts, each counted once (DESIGN section 8).

A session is `~/.claude/projects/<slug>/<session>.jsonl` plus, below `<slug>/<session>/`, the
transcripts of its subagents (`subagents/agent-<id>.jsonl`, and theirs, however deep): a session
read without them misses what its subagents spent, often most of it.

Counting rules, each one a trap peers fall into:
- Claude Code writes one assistant line per content block of a response, each repeating the
  response's `message.id`, `requestId` and `usage`: a response is one call, keyed by the two ids.
  Copies that differ (one written mid-stream) merge class by class to the larger figure.
- A sidechain (`isSidechain: true`) line that replays a message already seen on the main chain,
  under another `requestId` (side questions replay their parent's history), is not a call. The
  check runs over everything read, whatever order the files were read in.
- Lines of model `<synthetic>` are not calls; `isApiErrorMessage` lines are API errors.
- Cache writes split into 5-minute and 1-hour ones (tokens.anthropic_usage).
- Torn, foreign or garbled lines are skipped; a null or missing field counts zero.

Stdlib only: the Stop hook reads transcripts through this.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

from zen.observe.ledger import total_of
from zen.observe.tokens import Tokens, anthropic_usage

SYNTHETIC = "<synthetic>"


def session_files(transcript: str | Path) -> list[Path]:
    """The session's own transcript first, then its subagents' (sorted, at any depth)."""
    main = Path(transcript).expanduser()
    below = main.with_suffix("")
    extra: list[Path] = []
    if below.is_dir():
        extra = sorted(p for p in below.rglob("*.jsonl") if p.is_file())
    return [main, *extra]


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""


class _Response:
    __slots__ = ("model", "msg", "side", "tokens")

    def __init__(self, msg: str, model: str, side: bool, tokens: Tokens) -> None:
        self.msg = msg
        self.model = model
        self.side = side
        self.tokens = tokens


class ClaudeSession:
    """Every distinct API response and API error in the lines fed so far (any files, any order)."""

    kind = "claude"

    def __init__(self) -> None:
        self.responses: dict[str, _Response] = {}
        self.errors: set[str] = set()

    def feed(self, lines: Iterable[bytes | str]) -> int:
        """Take lines of a transcript; returns how many were assistant lines."""
        seen = 0
        for raw in lines:
            if (b'"assistant"' not in raw) if isinstance(raw, bytes) else ('"assistant"' not in raw):
                continue  # user lines carry tool output, often large: skip them unparsed
            try:
                line = json.loads(raw)
            except (ValueError, TypeError):
                continue
            if isinstance(line, dict) and line.get("type") == "assistant":
                seen += 1
                self._take(line)
        return seen

    def _take(self, line: dict[str, Any]) -> None:
        msg = line.get("message")
        if not isinstance(msg, dict):
            msg = {}
        msg_id, req_id = _text(msg.get("id")), _text(line.get("requestId"))
        uuid, model = _text(line.get("uuid")), _text(msg.get("model"))
        if line.get("isApiErrorMessage") is True:
            self.errors.add(msg_id or uuid or json.dumps(line, sort_keys=True)[:200])
            return
        if model == SYNTHETIC or not isinstance(msg.get("usage"), dict):
            return
        key = f"{msg_id}\0{req_id}" if msg_id else f"uuid\0{uuid}"
        if key == "uuid\0":
            return  # no way to tell copies of it apart: not counted rather than counted twice
        tokens = anthropic_usage(msg["usage"])
        side = line.get("isSidechain") is True
        had = self.responses.get(key)
        if had is None:
            self.responses[key] = _Response(msg_id, model, side, tokens)
        else:
            had.tokens = had.tokens.widest(tokens)
            had.side = had.side and side
            had.model = had.model or model

    def calls(self) -> Iterator[tuple[str, Tokens]]:
        """(model, tokens) per API call: sidechain replays of main-chain messages left out."""
        main = {r.msg for r in self.responses.values() if not r.side and r.msg}
        for r in self.responses.values():
            if r.side and r.msg in main:
                continue
            yield r.model, r.tokens

    @property
    def error_count(self) -> int:
        return len(self.errors)

    # -- persistence (the recorder keeps this between hook calls) -----------------------------
    def to_json(self) -> dict[str, Any]:
        return {"responses": {k: [r.msg, r.model, r.side, r.tokens.tolist()]
                              for k, r in self.responses.items()},
                "errors": sorted(self.errors)}

    @classmethod
    def from_json(cls, data: Any) -> ClaudeSession:
        out = cls()
        if not isinstance(data, dict):
            return out
        for key, rec in (data.get("responses") or {}).items():
            if isinstance(rec, list) and len(rec) == 4:
                out.responses[str(key)] = _Response(str(rec[0]), str(rec[1]), bool(rec[2]),
                                                    Tokens.fromlist(rec[3]))
        out.errors = {str(e) for e in data.get("errors") or ()}
        return out


def usage_of(transcript: str | Path, prices: Mapping[str, Any] | None = None) -> dict[str, Any] | None:
    """Totals of a whole session, subagents included (usage-event fields: tokens by class,
    cost_usd, api_calls, api_errors, and the most used `model`), or None when it cannot be read."""
    session = ClaudeSession()
    files = session_files(transcript)
    if not files[0].is_file():
        return None
    for file in files:
        try:
            with file.open("rb") as f:
                session.feed(f)
        except OSError:
            continue
    totals = total_of(session.calls(), prices, errors=session.error_count)
    out = totals.fields()
    out["model"] = max(totals.models.items(), key=lambda kv: kv[1])[0] if totals.models else ""
    return out

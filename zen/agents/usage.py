"""Token usage and an estimated cost from a Claude Code transcript (JSONL).

Claude Code writes one line per content block of an API response, each repeating the response's
`message.id` (and the `requestId`) and its `usage`; a response is counted once, keyed by
`message.id` + `requestId`. When the copies differ (a line written while the response was still
streaming), the largest figures win. Cost is an estimate from per-million-token prices (zen.yaml
`prices`: `input`, `output`, `cache_write`, `cache_read`, keyed by model name or `default`).

It runs from the `zen hook Stop` fast path, so it imports the standard library (and zen's lean
event catalogue) only.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from zen.core.events import EventType

TOKEN_FIELDS = ("input_tokens", "output_tokens", "cache_creation_input_tokens",
                "cache_read_input_tokens")
_PRICE_OF = {"input_tokens": "input", "output_tokens": "output",
             "cache_creation_input_tokens": "cache_write", "cache_read_input_tokens": "cache_read"}


def _int(value: Any) -> int:
    if isinstance(value, bool):
        return 0
    if isinstance(value, int):
        return max(0, value)
    if isinstance(value, float):
        return max(0, int(value))
    return 0


def messages(lines: Iterable[str | bytes]) -> dict[str, dict[str, Any]]:
    """Unique API responses in transcript lines: key -> {"model": str, <token fields>: int}.

    Torn or foreign lines are skipped; so are synthetic lines (model `<synthetic>`) and API-error
    lines, which cost nothing.
    """
    found: dict[str, dict[str, Any]] = {}
    for raw in lines:
        try:
            line = json.loads(raw)
        except (ValueError, TypeError):
            continue
        if not isinstance(line, dict) or line.get("type") != "assistant" or line.get("isApiErrorMessage"):
            continue
        msg = line.get("message")
        if not isinstance(msg, dict):
            continue
        usage = msg.get("usage")
        model = str(msg.get("model") or "")
        if not isinstance(usage, dict) or model == "<synthetic>":
            continue
        msg_id = msg.get("id")
        key = f"{msg_id}:{line.get('requestId') or ''}" if msg_id else f"uuid:{line.get('uuid')}"
        entry = found.setdefault(key, {"model": model, **dict.fromkeys(TOKEN_FIELDS, 0)})
        for f in TOKEN_FIELDS:
            entry[f] = max(entry[f], _int(usage.get(f)))
    return found


def price_for(model: str, prices: Mapping[str, Any]) -> Mapping[str, Any]:
    """Prices for `model`: an exact key, else the longest key that prefixes it, else `default`."""
    exact: Any = prices.get(model)
    if isinstance(exact, Mapping):
        return exact
    best = ""
    for name in prices:
        if name != "default" and model.startswith(str(name)) and len(str(name)) > len(best):
            best = str(name)
    prefixed: Any = prices.get(best) if best else None
    if isinstance(prefixed, Mapping):
        return prefixed
    default: Any = prices.get("default")
    return default if isinstance(default, Mapping) else {}


def cost(tokens: Mapping[str, Any], price: Mapping[str, Any]) -> float:
    total = 0.0
    for f, p in _PRICE_OF.items():
        try:
            total += _int(tokens.get(f)) * float(price.get(p) or 0) / 1_000_000
        except (TypeError, ValueError):
            continue
    return total


def summarize(lines: Iterable[str | bytes], prices: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """Totals over a transcript: token fields, `cost_usd`, `model` (the last seen), `messages`."""
    prices = prices or {}
    totals: dict[str, Any] = {**dict.fromkeys(TOKEN_FIELDS, 0), "cost_usd": 0.0, "model": "",
                              "messages": 0}
    for entry in messages(lines).values():
        for f in TOKEN_FIELDS:
            totals[f] += entry[f]
        totals["cost_usd"] += cost(entry, price_for(entry["model"], prices))
        totals["messages"] += 1
        totals["model"] = entry["model"] or totals["model"]
    totals["cost_usd"] = round(totals["cost_usd"], 6)
    return totals


def read_transcript(path: str | Path, prices: Mapping[str, Any] | None = None) -> dict[str, Any] | None:
    """summarize() of the transcript file at `path`, or None when it cannot be read."""
    try:
        with Path(path).expanduser().open("rb") as f:
            return summarize(f, prices)
    except OSError:
        return None


def delta(now: Mapping[str, Any], before: Mapping[str, Any]) -> dict[str, Any] | None:
    """What `now` adds over `before` (the sums already recorded), or None when nothing is new."""
    out: dict[str, Any] = {}
    for f in TOKEN_FIELDS:
        out[f] = max(0, _int(now.get(f)) - _int(before.get(f)))
    try:
        out["cost_usd"] = round(max(0.0, float(now.get("cost_usd") or 0) - float(before.get("cost_usd") or 0)), 6)
    except (TypeError, ValueError):
        out["cost_usd"] = 0.0
    if not any(out[f] for f in TOKEN_FIELDS):
        return None
    out["model"] = str(now.get("model") or "")
    return out


def _says(lines: Iterable[str | bytes], words: str) -> bool:
    """Whether an assistant line of the transcript carries the text `words`."""
    want = words.strip()
    for raw in lines:
        if b'"assistant"' not in (raw if isinstance(raw, bytes) else raw.encode()):
            continue
        try:
            line = json.loads(raw)
        except (ValueError, TypeError):
            continue
        msg = line.get("message") if isinstance(line, dict) else None
        content = msg.get("content") if isinstance(msg, dict) else None
        for block in content if isinstance(content, list) else []:
            said = str(block.get("text", "")).strip() if isinstance(block, dict) and block.get("type") == "text" else ""
            # Stop's last_assistant_message may join several text blocks: the last one ends it
            if said and want.endswith(said):
                return True
    return False


def wait_for_text(path: str | Path, words: str, timeout_s: float = 3.0) -> bool:
    """Claude Code writes its transcript asynchronously: at Stop the turn's last message may not be
    there yet. Wait (briefly) until an assistant line says `words`."""
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            with Path(path).expanduser().open("rb") as f:
                if _says(f, words):
                    return True
        except OSError:
            pass
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.05)


def _recorded(events_path: Path, transcript: str) -> dict[str, Any]:
    """Sums of the usage events already in a job's timeline for one transcript."""
    sums: dict[str, Any] = {**dict.fromkeys(TOKEN_FIELDS, 0), "cost_usd": 0.0}
    try:
        f = events_path.open("rb")
    except OSError:
        return sums
    with f:
        for raw in f:
            if b'"usage"' not in raw:
                continue
            try:
                ev = json.loads(raw)
            except ValueError:
                continue
            if not isinstance(ev, dict) or ev.get("type") != EventType.USAGE or ev.get("transcript") != transcript:
                continue
            for k in (*TOKEN_FIELDS, "cost_usd"):
                try:
                    sums[k] += float(ev.get(k) or 0)
                except (TypeError, ValueError):
                    pass
    return sums


def _prices(home: Path) -> Mapping[str, Any]:
    try:
        from zen.store.config import Config
        from zen.store.home import Home

        return Config.load(Home(home)).section("prices")
    except Exception:
        return {}


def record(job_dir: Path, job_id: str, transcript_path: str, actor: str = "hook",
           home: Path | None = None, last_message: str | None = None) -> dict[str, Any] | None:
    """Append a `usage` event with what the transcript adds since this job's last usage event for
    it (deltas, so state.json's sums are the totals). Returns the event, or None if nothing new.

    `last_message` (Stop's `last_assistant_message`): wait until the transcript holds it first."""
    if not transcript_path:
        return None
    transcript = str(Path(transcript_path).expanduser())
    if last_message and last_message.strip():
        wait_for_text(transcript, last_message)
    from zen.store.atomic import flocked
    from zen.store.events import EVENTS, append

    # one usage reckoning at a time per job (Stop and SessionEnd may race); a lock of its own, as
    # append() takes the job's event lock
    with flocked(job_dir / ".usage.lock"):
        with_prices = _prices(home if home is not None else job_dir.parent.parent)
        now = read_transcript(transcript, with_prices)
        if now is None:
            return None
        new = delta(now, _recorded(job_dir / EVENTS, transcript))
        if new is None:
            return None
        return append(job_dir, job_id, EventType.USAGE, actor=actor, transcript=transcript, **new)

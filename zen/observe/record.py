"""Usage from an agent's own files into the job's timeline, reading only what is new.

    record(job_dir, job_id, "claude", transcript_path)   # from the Stop / SessionEnd hook
    record(job_dir, job_id, "codex", rollout_path)       # after a Codex turn
    record(job_dir, job_id, "gemini", chat_path)         # after a Gemini CLI turn

Each (job, session file) has a ledger: `jobs/<id>/observe/<kind>-<name>.json` holds the byte
offset reached in every file read, the parser's state (the distinct calls seen) and the totals
already recorded. A call reads the new bytes, recomputes the totals and appends one `usage`
event with the change (tokens by class, cost_usd, api_calls, api_errors), numbered `n` in its
ledger. The timeline stays the record of truth: a ledger file that is lost, or older than the
timeline (a crash between the append and its save), is caught up from the usage events it
numbered, so nothing is counted twice and nothing is lost.

Stdlib only (plus zen.store's stdlib modules): the Stop hook runs this.
"""

from __future__ import annotations

import json
import os
import re
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from zen.core.events import EventType
from zen.observe.aider_log import AiderLog
from zen.observe.claude_transcript import ClaudeSession, session_files
from zen.observe.codex_rollout import CodexRollout
from zen.observe.gemini_chat import GeminiChat
from zen.observe.ledger import MODEL, Totals, add_fields, total_of
from zen.observe.tokens import count
from zen.store.atomic import atomic_write, flocked
from zen.store.events import append, read_from
from zen.store.follow import Cursor, read_new
from zen.store.layout import Home, JobPaths

PARSERS: dict[str, Any] = {"claude": ClaudeSession, "codex": CodexRollout, "gemini": GeminiChat,
                           "aider": AiderLog}
SOURCES = {"claude": "transcript", "codex": "rollout", "gemini": "chat", "aider": "analytics"}


def ledger_id(kind: str, path: str | Path) -> str:
    stem = re.sub(r"[^A-Za-z0-9._-]", "_", Path(path).name.removesuffix(".jsonl"))[:120]
    return f"{kind}-{stem}"


class Ledger:
    """One session file's reading position, parser state and recorded totals."""

    def __init__(self, kind: str, path: str) -> None:
        self.kind = kind
        self.path = path
        self.cursors: dict[str, Cursor] = {}
        self.parser: Any = PARSERS[kind]()
        self.recorded: dict[str, Any] = {}
        self.n = 0
        self.events_offset = 0
        self.bytes_read = 0              # by the last `read` (tests hold it to the new bytes)

    @classmethod
    def load(cls, file: Path, kind: str, path: str) -> Ledger:
        out = cls(kind, path)
        try:
            data = json.loads(file.read_text())
            if data.get("v") != 1 or data.get("kind") != kind or data.get("path") != path:
                return out
            out.cursors = {str(k): Cursor(int(v[0]), int(v[1])) for k, v in data["cursors"].items()}
            out.parser = PARSERS[kind].from_json(data.get("parser"))
            out.recorded = dict(data.get("recorded") or {})
            out.n = int(data.get("n") or 0)
            out.events_offset = int(data.get("events_offset") or 0)
        except (OSError, ValueError, TypeError, KeyError, IndexError, AttributeError):
            return cls(kind, path)   # unreadable: start over; catch_up() restores what was recorded
        return out

    def save(self, file: Path) -> None:
        file.parent.mkdir(parents=True, exist_ok=True)
        data = {"v": 1, "kind": self.kind, "path": self.path, "n": self.n,
                "events_offset": self.events_offset, "recorded": self.recorded,
                "cursors": {k: list(c) for k, c in self.cursors.items()},
                "parser": self.parser.to_json()}
        atomic_write(file, json.dumps(data, separators=(",", ":")) + "\n", durable=False)

    def catch_up(self, events_path: Path, lid: str) -> None:
        """Add the usage events of this ledger that its file does not know of yet."""
        events, end = read_from(events_path, self.events_offset)
        for ev in events:
            if ev.get("type") != EventType.USAGE:
                continue
            mine = ev.get("ledger") == lid and count(ev.get("n")) > self.n
            # usage recorded before ledgers existed: one per transcript, summed (read once, from 0)
            legacy = (self.events_offset == 0 and self.n == 0 and "ledger" not in ev
                      and self.kind == "claude" and ev.get("transcript") == self.path)
            if mine or legacy:
                add_fields(self.recorded, ev)
                if mine:
                    self.n = count(ev["n"])
        self.events_offset = end

    def read(self, files: list[Path]) -> None:
        """Feed the parser what every file gained; a file replaced or shrunk resets it all."""
        self.bytes_read = 0
        for file in files:
            key = str(file)
            cursor = self.cursors.get(key, Cursor())
            while True:
                chunk = read_new(file, cursor)
                self.bytes_read += chunk.bytes_read
                if chunk.restarted:
                    self.cursors.clear()
                    self.parser = PARSERS[self.kind]()
                    return self.read(files)
                self.parser.feed(chunk.lines)
                cursor = chunk.cursor
                if not chunk.more:
                    break
            self.cursors[key] = cursor
        return None

    def totals(self, prices: Mapping[str, Any] | None) -> Totals:
        return total_of(self.parser.calls(), prices, errors=self.parser.error_count)


Prices = Mapping[str, Any] | Callable[[], Mapping[str, Any]] | None


def record(job_dir: Path, job_id: str, kind: str, path: str | Path, *, actor: str = "hook",
           prices: Prices = None) -> dict[str, Any] | None:
    """Append a `usage` event with what `path` (and, for Claude, its subagents' files) adds to
    what this job has recorded from it. Returns the event, or None when nothing is new.

    `prices` (zen.yaml `prices`) may be a function: it is called only when there is news, so a
    hook with nothing to record never loads the configuration."""
    if kind not in PARSERS or not str(path):
        return None
    source = str(Path(path).expanduser())
    files = session_files(source) if kind == "claude" else [Path(source)]
    if not files[0].is_file():
        return None
    lid = ledger_id(kind, source)
    paths = JobPaths(job_dir)
    file = paths.observe / f"{lid}.json"
    with flocked(paths.usage_lock):
        ledger = Ledger.load(file, kind, source)
        ledger.catch_up(paths.events, lid)
        before = dict(ledger.cursors)
        ledger.read(files)
        if ledger.cursors == before and ledger.n > 0:
            return None     # no new line anywhere: nothing to reckon (and nothing to save)
        totals = ledger.totals(prices() if callable(prices) else prices)
        delta = totals.minus(ledger.recorded)
        ev = None
        if delta is not None:
            top = max(totals.models.items(), key=lambda kv: kv[1])[0] if totals.models else ""
            ledger.n += 1
            extra = {"unpriced": sorted(totals.unpriced)} if totals.unpriced else {}
            ev = append(job_dir, job_id, EventType.USAGE, actor=actor, source=SOURCES[kind], ledger=lid,
                        n=ledger.n, **{SOURCES[kind]: source}, **delta, **{MODEL: top}, **extra)
            ledger.recorded = totals.fields()
        ledger.save(file)
    return ev


def wait_for_text(path: str | Path, words: str, timeout_s: float = 3.0) -> bool:
    """Claude Code writes its transcript asynchronously: at Stop the turn's last message may not
    be there yet. Wait (briefly) until the file's tail holds an assistant line saying `words`."""
    want = words.strip()
    deadline = time.monotonic() + timeout_s
    while True:
        if _tail_says(Path(path).expanduser(), want):
            return True
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.05)


def _tail_says(path: Path, want: str, window: int = 1 << 20) -> bool:
    try:
        with path.open("rb") as f:
            f.seek(0, os.SEEK_END)
            f.seek(max(0, f.tell() - window))
            lines = f.read().split(b"\n")
    except OSError:
        return False
    for raw in reversed(lines):
        if b'"assistant"' not in raw:
            continue
        try:
            line = json.loads(raw)
        except ValueError:
            continue
        msg = line.get("message") if isinstance(line, dict) else None
        content = msg.get("content") if isinstance(msg, dict) else None
        for block in content if isinstance(content, list) else []:
            if isinstance(block, dict) and block.get("type") == "text":
                said = str(block.get("text", "")).strip()
                # Stop's last_assistant_message may join several text blocks: the last one ends it
                if said and want.endswith(said):
                    return True
    return False


def home_prices(home: Path) -> Mapping[str, Any]:
    """zen.yaml `prices` of a home ({} when it cannot be read: the table alone then prices)."""
    try:
        # here, not at the top: it pulls in ruamel, which the hook loads only when it must
        from zen.store.config import Config

        return Config.load(Home(home)).section("prices")
    except Exception:
        return {}

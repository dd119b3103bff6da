"""Every Claude Code and Codex session on the machine, zen's or not (`zen sessions`, issue 39).

    find(user_home, since_s=None, project=None, home=None) -> list of Session, oldest first

From the agents' own records: Claude Code's `~/.claude/projects/<slug>/<session>.jsonl` (with its
subagents' transcripts below `<slug>/<session>/`) and Codex's rollouts,
`$CODEX_HOME/sessions/**/rollout-*.jsonl` ($CODEX_HOME defaults to ~/.codex). Each session gives
its project (the working directory it ran in), id, start, last activity, turns (the prompts a
human or zen typed), tokens by class, cost and API calls, folded by the observatory's own readers
(claude_transcript.ClaudeSession, codex_rollout.CodexRollout) and priced by its table.

Counted once across the machine, where ccusage counts twice: a Claude response is one call however
many lines repeat it (its message id and request id); a session resumed or forked into a new file
starts with a copy of its parent's history, and those copies are the parent's calls, not the new
session's (each response is counted in the first session, by start, that holds it). A Codex
rollout's cumulative counters are turned into deltas (codex_rollout).

`zen` says which job of zen's home ran the session: a dispatched Claude job's session id comes
from its job id (zen.agents.common.session_uuid); any job's usage events name the transcript or
rollout they read (an attached `zen run` session's among them).
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from zen.agents.common import session_uuid
from zen.core.events import EventType as E
from zen.core.ids import epoch_of
from zen.observe.claude_transcript import ClaudeSession, session_files
from zen.observe.codex_rollout import CodexRollout
from zen.observe.ledger import total_of
from zen.store import events as ev_store
from zen.store.layout import Home


@dataclass
class Session:
    agent: str                       # claude | codex
    session: str
    path: Path
    project: str = ""                # the directory it ran in
    started: str = ""
    last: str = ""
    turns: int = 0
    usage: dict[str, Any] = field(default_factory=dict)
    model: str = ""
    zen: str | None = None           # the zen job that ran it

    def to_json(self) -> dict[str, Any]:
        return {"agent": self.agent, "session": self.session, "project": self.project,
                "started": self.started, "last_activity": self.last, "turns": self.turns,
                "model": self.model, **self.usage, "zen": self.zen is not None, "job": self.zen,
                "path": str(self.path)}


def _ts(value: Any) -> str:
    return value if isinstance(value, str) else ""




def _mtime_iso(path: Path) -> str:
    try:
        t = path.stat().st_mtime
    except OSError:
        return ""
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(t)) + f".{int(t * 1000) % 1000:03d}Z"


def _lines(path: Path) -> Iterator[tuple[bytes, dict[str, Any]]]:
    """(the line as written, parsed) for each JSON object line; torn or foreign ones skipped."""
    try:
        with path.open("rb") as f:
            for raw in f:
                try:
                    line = json.loads(raw)
                except ValueError:
                    continue
                if isinstance(line, dict):
                    yield raw, line
    except OSError:
        return


def _prompt(line: dict[str, Any]) -> bool:
    """A user line that is a prompt (typed text), not a tool's result nor Claude Code's own note."""
    if line.get("type") != "user" or line.get("isMeta") or line.get("isSidechain"):
        return False
    content = (line.get("message") or {}).get("content") if isinstance(line.get("message"), dict) else None
    if isinstance(content, str):
        return bool(content.strip())
    if isinstance(content, list):
        return any(isinstance(b, dict) and b.get("type") == "text" for b in content) and not any(
            isinstance(b, dict) and b.get("type") == "tool_result" for b in content)
    return False


def _claude(path: Path) -> tuple[Session, ClaudeSession]:
    s = Session("claude", path.stem, path)
    fold = ClaudeSession()
    for file in session_files(path):
        main = file == path
        assistant: list[bytes] = []
        for raw, line in _lines(file):
            ts = _ts(line.get("timestamp"))
            if ts:
                s.started = min(s.started, ts) if s.started else ts
                s.last = max(s.last, ts)
            if main and not s.project and isinstance(line.get("cwd"), str):
                s.project = line["cwd"]
            if main and _prompt(line):
                s.turns += 1
            if line.get("type") == "assistant":
                assistant.append(raw)
        fold.feed(assistant)
    s.last = s.last or _mtime_iso(path)
    return s, fold


def _codex(path: Path) -> Session:
    s = Session("codex", path.stem.removeprefix("rollout-"), path)
    fold = CodexRollout()
    raw_lines = []
    for raw, line in _lines(path):
        raw_lines.append(raw)
        ts = _ts(line.get("timestamp"))
        if ts:
            s.started = min(s.started, ts) if s.started else ts
            s.last = max(s.last, ts)
        payload: dict[str, Any] = line["payload"] if isinstance(line.get("payload"), dict) else {}
        if line.get("type") == "session_meta":
            s.session = str(payload.get("id") or s.session)
            s.project = str(payload.get("cwd") or s.project)
        elif line.get("type") == "event_msg" and payload.get("type") == "user_message":
            s.turns += 1
    fold.feed(raw_lines)
    s.model = fold.model
    s.usage = _usage(fold.calls(), None)
    return s


def _usage(calls: Iterator[tuple[str, Any]], prices: Mapping[str, Any] | None, errors: int = 0) -> dict[str, Any]:
    totals = total_of(calls, prices, errors=errors)
    out = totals.fields()
    out.pop("unpriced", None)
    out["cost_usd"] = round(float(out.get("cost_usd") or 0.0), 6)
    return out


def zen_sessions(home: Home | None) -> dict[str, str]:
    """Session files and ids zen's jobs ran -> the job: each job's Claude session id (from its id)
    and the transcripts and rollouts its usage events name."""
    if home is None:
        return {}
    out: dict[str, str] = {}
    try:
        ids = sorted(p.name for p in home.jobs.iterdir() if p.is_dir() and not p.name.startswith("."))
    except OSError:
        return {}
    for job in ids:
        out[session_uuid(job)] = job
        for ev in ev_store.read_events(home.job(job).events):
            if ev.get("type") != E.USAGE:
                continue
            for key in ("transcript", "rollout"):
                if isinstance(ev.get(key), str) and ev[key]:
                    out[os.path.realpath(ev[key])] = job
    return out


def files(user_home: Path, env: Mapping[str, str]) -> tuple[list[Path], list[Path]]:
    """(Claude transcripts, Codex rollouts) on the machine for this user."""
    claude_dir = Path(env.get("CLAUDE_CONFIG_DIR") or user_home / ".claude") / "projects"
    codex_dir = Path(env.get("CODEX_HOME") or user_home / ".codex") / "sessions"
    claude = sorted(p for p in claude_dir.glob("*/*.jsonl") if p.is_file()) if claude_dir.is_dir() else []
    codex = sorted(p for p in codex_dir.rglob("rollout-*.jsonl") if p.is_file()) if codex_dir.is_dir() else []
    return claude, codex


def find(user_home: Path, *, since_s: float | None = None, project: str | None = None,
         home: Home | None = None, prices: Mapping[str, Any] | None = None,
         env: Mapping[str, str] | None = None, now: float | None = None) -> list[Session]:
    """Every session, oldest first; `since_s`: only those active in the last that many seconds;
    `project`: only those whose directory names it (the whole path, or a part of it)."""
    claude_files, codex_files = files(user_home, os.environ if env is None else env)
    claude = [_claude(p) for p in claude_files]
    claude.sort(key=lambda pair: (pair[0].started, pair[0].session))
    seen: set[str] = set()
    out: list[Session] = []
    for s, fold in claude:
        own = {k: r for k, r in fold.responses.items() if k not in seen}
        seen |= set(own)
        fold.responses = own
        totals = _usage(fold.calls(), prices, errors=fold.error_count)
        s.usage = totals
        s.model = _model(fold)
        out.append(s)
    out += [_codex(p) for p in codex_files]
    known = zen_sessions(home)
    for s in out:
        s.zen = known.get(s.session) or known.get(os.path.realpath(s.path))
    now = time.time() if now is None else now
    if since_s is not None:
        out = [s for s in out if (epoch_of(s.last) or 0.0) >= now - since_s]
    if project:
        out = [s for s in out if project == s.project or project in s.project]
    out.sort(key=lambda s: (s.started, s.session))
    return out


def _model(fold: ClaudeSession) -> str:
    counts: dict[str, int] = {}
    for model, _ in fold.calls():
        counts[model] = counts.get(model, 0) + 1
    return max(counts.items(), key=lambda kv: kv[1])[0] if counts else ""


def totals(sessions: list[Session]) -> dict[str, Any]:
    """The sessions' usage together."""
    out: dict[str, Any] = {}
    for s in sessions:
        for k, v in s.usage.items():
            if isinstance(v, int | float) and not isinstance(v, bool):
                out[k] = out.get(k, 0) + v
    if "cost_usd" in out:
        out["cost_usd"] = round(out["cost_usd"], 6)
    out["sessions"] = len(sessions)
    out["zen"] = sum(1 for s in sessions if s.zen)
    return out

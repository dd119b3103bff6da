"""`zen sessions`: every Claude Code and Codex session of the (temporary) $HOME, counted once, and
marked when a zen job ran it."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from tests.attached.conftest import only_job, zen_run
from tests.helpers import zen, zen_json

U1 = {"input_tokens": 1000, "output_tokens": 200, "cache_creation_input_tokens": 3000,
      "cache_read_input_tokens": 10000}
U2 = {"input_tokens": 7, "output_tokens": 11, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 13,
      "cache_creation": {"ephemeral_5m_input_tokens": 0, "ephemeral_1h_input_tokens": 0}}


def _stamp(days_ago: float, second: int = 0) -> str:
    t = datetime.now(UTC) - timedelta(days=days_ago) + timedelta(seconds=second)
    return t.strftime("%Y-%m-%dT%H:%M:%S.000Z")


def _claude_lines(session: str, cwd: str, responses: list[tuple[str, str, dict[str, int]]], days_ago: float,
                  prompt: str = "hello") -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = [{"type": "user", "sessionId": session, "cwd": cwd, "timestamp": _stamp(days_ago),
                                  "message": {"role": "user", "content": prompt}}]
    for n, (msg, req, usage) in enumerate(responses):
        line = {"type": "assistant", "sessionId": session, "cwd": cwd, "requestId": req,
                "timestamp": _stamp(days_ago, n + 1),
                "message": {"id": msg, "model": "claude-sonnet-4-5", "role": "assistant", "usage": usage,
                            "content": [{"type": "text", "text": "ok"}]}}
        out += [line, line]              # Claude Code writes a line per content block, ids repeated
        out.append({"type": "user", "sessionId": session, "cwd": cwd, "timestamp": _stamp(days_ago, n + 1),
                    "message": {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t",
                                                             "content": "x"}]}})
    return out


def _write(path: Path, lines: list[dict[str, Any]]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))
    return path


def test_every_session_is_listed_with_each_api_call_counted_once(isolated_env: Path, home: Path) -> None:
    projects = isolated_env / ".claude" / "projects" / "-work-shop"
    first = _claude_lines("s-one", "/work/shop", [("msg_a", "req_a", U1), ("msg_b", "req_b", U1)], days_ago=2)
    _write(projects / "s-one.jsonl", first)
    # resumed into a new session: its file starts with a copy of the first one's history
    resumed = [dict(x, sessionId="s-two") for x in first] + _claude_lines(
        "s-two", "/work/shop", [("msg_c", "req_c", U2)], days_ago=1, prompt="go on")[0:3]
    _write(projects / "s-two.jsonl", resumed)
    # Codex: a cumulative counter, repeated once (the repeat adds nothing)
    rollout = isolated_env / ".codex" / "sessions" / "2026" / "12" / "01" / "rollout-2026-12-01T10-00-00-c0d3.jsonl"
    _write(rollout, [
        {"timestamp": _stamp(3), "type": "session_meta", "payload": {"id": "c0d3", "cwd": "/work/cli"}},
        {"timestamp": _stamp(3), "type": "turn_context", "payload": {"model": "gpt-5-codex"}},
        {"timestamp": _stamp(3, 1), "type": "event_msg", "payload": {"type": "user_message", "message": "fix"}},
        {"timestamp": _stamp(3, 2), "type": "event_msg", "payload": {"type": "token_count", "info": {
            "total_token_usage": {"input_tokens": 500, "cached_input_tokens": 100, "output_tokens": 50}}}},
        {"timestamp": _stamp(3, 3), "type": "event_msg", "payload": {"type": "token_count", "info": {
            "total_token_usage": {"input_tokens": 500, "cached_input_tokens": 100, "output_tokens": 50}}}},
        {"timestamp": _stamp(3, 4), "type": "event_msg", "payload": {"type": "token_count", "info": {
            "total_token_usage": {"input_tokens": 800, "cached_input_tokens": 300, "output_tokens": 90}}}},
    ])
    data = zen_json("sessions")
    by_id = {s["session"]: s for s in data["sessions"]}
    assert set(by_id) == {"s-one", "s-two", "c0d3"}
    one, two, codex = by_id["s-one"], by_id["s-two"], by_id["c0d3"]
    assert one["api_calls"] == 2 and one["input_tokens"] == 2000 and one["output_tokens"] == 400
    assert one["cache_creation_input_tokens"] == 6000 and one["cache_read_input_tokens"] == 20000
    assert one["turns"] == 1 and one["project"] == "/work/shop" and one["cost_usd"] > 0
    # the copied history is the first session's: only the new response is the second's
    assert two["api_calls"] == 1 and two["input_tokens"] == 7 and two["output_tokens"] == 11
    assert codex["agent"] == "codex" and codex["project"] == "/work/cli" and codex["turns"] == 1
    assert codex["api_calls"] == 2 and codex["output_tokens"] == 90 and codex["cache_read_input_tokens"] == 300
    assert codex["input_tokens"] == 500
    assert data["total"]["api_calls"] == 5 and data["total"]["sessions"] == 3
    assert not any(s["zen"] for s in data["sessions"])

    assert {s["session"] for s in zen_json("sessions", "--project", "shop")["sessions"]} == {"s-one", "s-two"}
    assert {s["session"] for s in zen_json("sessions", "--since", "36h")["sessions"]} == {"s-two"}
    table = zen("sessions").stdout
    assert "s-one"[:8] in table and "3 sessions (0 run by zen)" in table
    r = zen("sessions", "--since", "soon")
    assert r.returncode == 2 and "Traceback" not in r.stderr


def test_a_session_zen_ran_is_marked_with_its_job(isolated_env: Path, fake_home: Path, git_repo: Path) -> None:
    r = zen_run("claude", "-p", "hello", cwd=git_repo, script=[{"tool": "Read", "file_path": str(git_repo / "a.txt")}])
    assert r.returncode == 0, r.stderr
    job = only_job(fake_home)
    _write(isolated_env / ".claude" / "projects" / "-y" / "mine.jsonl",
           _claude_lines("mine", "/y", [("m2", "r2", U2)], days_ago=0))
    data = zen_json("sessions")
    marks = {s["project"]: (s["zen"], s["job"]) for s in data["sessions"]}
    assert marks == {str(git_repo): (True, job), "/y": (False, None)}
    assert data["total"]["zen"] == 1
    # with no zen home at all, the sessions are still listed (none marked)
    r = zen("sessions", "--json", env={"ZEN_HOME": ""}, cwd=isolated_env)
    assert r.returncode == 0, r.stderr
    assert len(json.loads(r.stdout)["sessions"]) == 2


def test_a_sessions_subagents_count_in_it_and_side_replays_do_not(isolated_env: Path, home: Path) -> None:
    projects = isolated_env / ".claude" / "projects" / "-work-app"
    main = _claude_lines("s-main", "/work/app", [("msg_1", "req_1", U1)], days_ago=0)
    # a side question replays the main chain's message under another request id: not a call
    replay = dict(main[1], isSidechain=True, requestId="req_side")
    _write(projects / "s-main.jsonl", [*main, replay])
    # a subagent's own transcript, below the session's directory: its calls are the session's
    sub = [dict(x, isSidechain=True) for x in _claude_lines("s-main", "/work/app", [("msg_s", "req_s", U2)],
                                                             days_ago=0)]
    _write(projects / "s-main" / "subagents" / "agent-1.jsonl", sub)
    (s,) = zen_json("sessions")["sessions"]
    assert s["session"] == "s-main" and s["api_calls"] == 2
    assert s["input_tokens"] == 1000 + 7 and s["output_tokens"] == 200 + 11
    assert s["turns"] == 1     # the subagent's prompts are not the user's

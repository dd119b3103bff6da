"""The ground floor: the real Claude Code runs offline against the stand-in, fires the hooks of a
--settings file with the payloads zen relies on, and reads zen's own settings file exactly as the
simulated agent does."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.claude.conftest import run_claude_print
from tests.claude.fakeapi import FakeAPI, bash, text, tool
from tests.helpers import make_repo
from zen.agents.settings import hook_settings
from zen.observe.claude_transcript import usage_of

pytestmark = pytest.mark.claude

RECORDER = Path(__file__).with_name("record_hook.py")


def _records(log: Path) -> list[dict[str, Any]]:
    if not log.exists():
        return []
    return [json.loads(line) for line in log.read_text().splitlines() if line.strip()]


def _result(stdout: str) -> dict[str, Any]:
    lines = [json.loads(ln) for ln in stdout.splitlines() if ln.startswith("{")]
    return next(ln for ln in reversed(lines) if ln.get("type") == "result")


def test_print_mode_runs_the_script_and_fires_settings_hooks(
        needs_claude: Path, claude_env: dict[str, str], api: FakeAPI, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    work = make_repo(tmp_path / "work")
    log = tmp_path / "hooks.jsonl"
    monkeypatch.setenv("ZEN_HOOK_LOG", str(log))
    rec = f"{sys.executable} {RECORDER}"
    settings = tmp_path / "settings.json"
    settings.write_text(json.dumps({"hooks": {
        ev: [{"matcher": "*", "hooks": [{"type": "command", "command": f"{rec} {ev}"}]}]
        for ev in ("UserPromptSubmit", "PreToolUse", "Stop", "SessionEnd")}}))
    api.script = [bash("echo hello > out.txt"), text("All done.")]

    r = run_claude_print(needs_claude, "write hello", settings, work, extra=["--allowedTools", "Bash"])

    assert r.returncode == 0, r.stderr + r.stdout[-2000:]
    result = _result(r.stdout)
    assert result["result"] == "All done."
    assert (work / "out.txt").read_text() == "hello\n"
    # the stand-in saw the tool result of step 0 and answered both steps once each
    assert api.answered() == 2
    assert "tool_use_id" in (api.tool_result_for(0) or {})
    by_event: dict[str, list[dict[str, Any]]] = {}
    for rec_line in _records(log):
        by_event.setdefault(rec_line["argv"][0], []).append(rec_line["payload"])
    assert by_event["UserPromptSubmit"][0]["prompt"] == "write hello"
    pre = by_event["PreToolUse"][0]
    assert pre["tool_name"] == "Bash" and pre["tool_input"]["command"] == "echo hello > out.txt"
    stop = by_event["Stop"][0]
    assert stop["last_assistant_message"] == "All done."
    transcript = Path(stop["transcript_path"])
    assert transcript.is_file() and transcript.name == f"{stop['session_id']}.jsonl"
    # the transcript's usage, each response once, matches what the stand-in sent
    model = (usage_of(transcript) or {}).get("model") or ""
    totals = usage_of(transcript, {model: {"input": 3, "output": 15, "cache_write": 3.75, "cache_read": 0.3}})
    assert totals is not None and totals["api_calls"] == 2
    assert totals["input_tokens"] == 240 and totals["output_tokens"] == 60
    assert totals["cache_creation_input_tokens"] == 800 and totals["cache_read_input_tokens"] == 4000
    assert totals["cost_usd"] == pytest.approx((240 * 3 + 60 * 15 + 800 * 3.75 + 4000 * 0.3) / 1e6)
    assert result["usage"]["input_tokens"] == 240


def test_a_blocking_pretooluse_hook_stops_the_call_and_claude_is_told(
        needs_claude: Path, claude_env: dict[str, str], api: FakeAPI, tmp_path: Path) -> None:
    work = make_repo(tmp_path / "work")
    settings = tmp_path / "settings.json"
    settings.write_text(json.dumps({"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{
        "type": "command", "command": "echo 'nope: scripted block' >&2; exit 2"}]}]}}))
    api.script = [bash("touch forbidden.txt"), text("Understood.")]

    r = run_claude_print(needs_claude, "try it", settings, work, extra=["--allowedTools", "Bash"])

    assert r.returncode == 0, r.stderr
    assert not (work / "forbidden.txt").exists()
    res = api.tool_result_for(0)
    assert res is not None and res.get("is_error") is True
    assert "nope: scripted block" in res["text"]


def test_claude_and_the_sim_fire_the_same_hooks_from_zens_settings_file(
        needs_claude: Path, claude_env: dict[str, str], api: FakeAPI, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """zen's settings file, with zen replaced by a recorder, drives both agents: the commands each
    one ran, per hook event, are the same."""
    settings = tmp_path / "claude-settings.json"
    settings.write_text(json.dumps(hook_settings([sys.executable, str(RECORDER)])))
    api.script = [bash("echo one > a.txt"), tool("Write", file_path="b.txt", content="two\n"),
                  text("Finished.")]

    claude_log, sim_log = tmp_path / "claude-hooks.jsonl", tmp_path / "sim-hooks.jsonl"
    work = make_repo(tmp_path / "claude-work")
    monkeypatch.setenv("ZEN_HOOK_LOG", str(claude_log))
    r = run_claude_print(needs_claude, "go", settings, work,
                         extra=["--allowedTools", "Bash", "--permission-mode", "acceptEdits"])
    assert r.returncode == 0, r.stderr
    assert (work / "a.txt").exists() and (work / "b.txt").exists()

    sim_work = make_repo(tmp_path / "sim-work")
    script = tmp_path / "sim-script.json"
    script.write_text(json.dumps([{"bash": "echo one > a.txt"},
                                  {"write": {"path": "b.txt", "content": "two\n"}},
                                  {"say": "Finished."}]))
    monkeypatch.setenv("ZEN_HOOK_LOG", str(sim_log))
    s = subprocess.run([sys.executable, "-m", "zen.agents.simagent", "--settings", str(settings),
                        "--script", str(script), "--prompt", "go"], cwd=sim_work,
                       capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
    assert s.returncode == 0, s.stderr

    def fired(log: Path) -> set[tuple[str, str, str]]:
        return {(" ".join(r["argv"]), r["payload"].get("hook_event_name", ""),
                 r["payload"].get("tool_name", "")) for r in _records(log)}

    claude_fired, sim_fired = fired(claude_log), fired(sim_log)
    assert ("guard hook", "PreToolUse", "Bash") in claude_fired
    assert ("guard hook", "PreToolUse", "Write") in claude_fired
    assert ("hook Stop", "Stop", "") in claude_fired
    assert ("hook UserPromptSubmit", "UserPromptSubmit", "") in claude_fired
    # SessionEnd shares a short budget in Claude Code and may be cut; compare the rest exactly
    assert {f for f in claude_fired if f[1] != "SessionEnd"} == {f for f in sim_fired if f[1] != "SessionEnd"}

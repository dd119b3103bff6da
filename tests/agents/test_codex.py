"""The Codex adapter's parts that need no Codex binary: the hooks it registers (parsed as Codex
parses them, TOML), its state reports read from output bytes as the real binary writes them,
the turn rules they drive, its folder trust, the rollout's usage, and the title side turn."""

from __future__ import annotations

import json
import shlex
import tomllib
from pathlib import Path

import pytest

from tests.agents.test_adapters import JOB, ZEN, ctx
from tests.helpers import zen
from zen.agents import codex_trust, get_adapter
from zen.agents.codex import output_state
from zen.core.turns import replay
from zen.errors import ZenError
from zen.store import events

Q = shlex.quote(ZEN[0])


def overrides(argv: list[str]) -> dict[str, object]:
    """The -c key=value overrides, each parsed as TOML the way Codex parses them."""
    out: dict[str, object] = {}
    for i, a in enumerate(argv):
        if a == "-c":
            key, _, value = argv[i + 1].partition("=")
            out[key] = tomllib.loads(f"v = {value}")["v"]
    return out


def test_guardian_and_turn_hooks_are_registered_as_codex_reads_them(tmp_path: Path) -> None:
    o = overrides(get_adapter("codex").launch(ctx(tmp_path, "codex")).argv)
    [pre] = o["hooks.PreToolUse"]  # type: ignore[misc]
    assert set(pre["matcher"].split("|")) >= {"Bash", "apply_patch"}
    assert pre["hooks"] == [{"type": "command", "command": f"{Q} guard hook --agent codex", "timeout": 10}]
    for event in ("PermissionRequest", "Stop", "UserPromptSubmit"):
        [group] = o[f"hooks.{event}"]  # type: ignore[misc]
        assert group["hooks"][0]["command"] == f"{Q} hook {event} --agent codex"
    assert o["features.hooks"] is True and o["tui.terminal_title"] == []
    assert o["sandbox_workspace_write.exclude_slash_tmp"] is True


def test_zen_yaml_changes_approvals_and_sandbox(tmp_path: Path) -> None:
    argv = get_adapter("codex").launch(ctx(tmp_path, "codex", {"approval": "never",
                                                               "sandbox": "read-only"})).argv
    assert argv[argv.index("--ask-for-approval") + 1] == "never"
    assert argv[argv.index("--sandbox") + 1] == "read-only"


# bytes as Codex 0.171.0 wrote them into a tmux pane (reference/real-codex.md)
START = b"\x1b[?2004h\x1b]7501;state=idle:app=codex\x07\x1b[2J"
WORKING = b"\x1b]7501;state=working:app=codex\x07\xe2\xa0\x8b Working"
BLOCKED = b"Would you like to run\x1b]7501;state=blocked:app=codex:kind=permission\x07"
DONE = b"\xe2\x80\xa2 All done.\x1b]7501;state=done:app=codex\x1b\\"


def test_state_reports_are_read_from_raw_output() -> None:
    assert output_state(START) == ("idle", None)
    assert output_state(START + WORKING) == ("working", None)
    assert output_state(WORKING + BLOCKED) == ("waiting", "approval")
    assert output_state(BLOCKED + WORKING + DONE) == ("waiting", "idle")      # the last one counts
    assert output_state(b"plain output \x1b]0;title\x07") is None
    assert output_state(b"\x1b]7501;state=work") is None                      # cut: read next time


def test_agent_state_drives_turns_and_a_startup_idle_means_nothing() -> None:
    hist = [(0.0, ("agent", "idle")), (0.2, ("agent", "working")), (1.0, ("agent", "waiting", "approval")),
            # the approval screen blinks: output keeps changing, the wait holds
            (2.0, ("output", 1)), (3.0, ("output", 2)), (4.0, ("output", 3)),
            (5.0, ("agent", "working")), (6.0, ("agent", "waiting", "idle")), (9.0, ("output", 4))]
    got = [(t.state, t.reason) for t in replay(hist, idle_after_s=2)]
    assert got == [("waiting", "approval"), ("working", None), ("waiting", "idle")]


def test_an_approval_cancelled_at_the_prompt_ends_as_idle_and_a_question_is_kept() -> None:
    cancelled = [(0.0, ("agent", "working")), (1.0, ("agent", "waiting", "approval")), (2.0, ("agent", "idle"))]
    assert [(t.state, t.reason) for t in replay(cancelled, idle_after_s=2)][-1] == ("waiting", "idle")
    # Stop said "question" (a hook); Codex's own `done` right after keeps that reason
    asked = [(0.0, ("agent", "working")), (1.0, ("hook", "waiting", "question")), (1.1, ("agent", "waiting", "idle"))]
    assert [(t.state, t.reason) for t in replay(asked, idle_after_s=2)] == []


USER_CONFIG = '''# my Codex settings
model = "o9"   # keep this comment

[model_providers.mine]
base_url = "http://127.0.0.1:1/v1"

[projects."/elsewhere"]
trust_level = "untrusted"
'''


def test_trust_adds_one_table_and_keeps_every_other_line(tmp_path: Path) -> None:
    cfg = tmp_path / ".codex" / "config.toml"
    cfg.parent.mkdir()
    cfg.write_text(USER_CONFIG)
    cfg.chmod(0o600)
    repo = tmp_path / "repo"
    repo.mkdir()
    assert not codex_trust.is_trusted(repo, tmp_path)
    assert codex_trust.trust(repo, tmp_path) is True
    text = cfg.read_text()
    assert text.startswith(USER_CONFIG)                       # comments and order untouched
    data = tomllib.loads(text)
    assert data["projects"][str(repo.resolve())] == {"trust_level": "trusted"}
    assert data["projects"]["/elsewhere"] == {"trust_level": "untrusted"}
    assert cfg.stat().st_mode & 0o777 == 0o600
    assert codex_trust.trust(repo, tmp_path) is False and cfg.read_text() == text
    # an entry that says untrusted is changed in place
    assert codex_trust.trust(Path("/elsewhere"), tmp_path) is True
    assert tomllib.loads(cfg.read_text())["projects"]["/elsewhere"] == {"trust_level": "trusted"}
    assert cfg.read_text().count("[projects.\"/elsewhere\"]") == 1


def test_trust_refuses_files_it_cannot_edit_safely(tmp_path: Path) -> None:
    cfg = tmp_path / ".codex" / "config.toml"
    cfg.parent.mkdir()
    repo = tmp_path / "r"
    cfg.write_text("model = [unclosed\n")
    with pytest.raises(ZenError, match="not valid TOML"):
        codex_trust.trust(repo, tmp_path)
    cfg.write_text(f'projects = {{ "{repo.resolve()}" = {{ trust_level = "untrusted" }} }}\n')
    with pytest.raises(ZenError, match="form zen does not edit"):
        codex_trust.trust(repo, tmp_path)
    assert "untrusted" in cfg.read_text()
    # no file yet: one is made with just the trust
    cfg.unlink()
    assert codex_trust.trust(repo, tmp_path) is True
    assert tomllib.loads(cfg.read_text()) == {"projects": {str(repo.resolve()): {"trust_level": "trusted"}}}


def _count(total: int, cached: int, out: int, reasoning: int = 0) -> str:
    usage = {"input_tokens": total, "cached_input_tokens": cached, "cache_write_input_tokens": 0,
             "output_tokens": out, "reasoning_output_tokens": reasoning, "total_tokens": total + out}
    return json.dumps({"timestamp": "t", "type": "event_msg", "payload": {
        "type": "token_count", "info": {"total_token_usage": usage, "last_token_usage": usage}}})


def test_codex_hooks_reach_the_timeline_and_the_title_turn_is_ignored(home: Path, tmp_path: Path) -> None:
    job_dir = home / "jobs" / JOB
    job_dir.mkdir(parents=True)
    events.append(job_dir, JOB, "task.received")
    env = {"ZEN_HOME": str(home), "ZEN_JOB_ID": JOB}
    title = {"type": "agent-turn-complete", "thread-id": "t2", "input-messages": [
        "Generate a concise, single-line task title of at most 36 characters"], "last-assistant-message": "{}"}
    assert zen("hook", "codex-notify", json.dumps(title), env=env).returncode == 0
    rollout = tmp_path / "rollout-x.jsonl"
    rollout.write_text(_count(500, 0, 20) + "\n")
    stop = {"hook_event_name": "Stop", "transcript_path": str(rollout), "last_assistant_message": "All done.",
            "turn_id": "t1", "stop_hook_active": False}
    r = zen("hook", "Stop", "--agent", "codex", input=json.dumps(stop), env=env)
    assert r.returncode == 0 and r.stdout == ""
    perm = {"hook_event_name": "PermissionRequest", "tool_name": "Bash", "tool_input": {"command": "x"}}
    assert zen("hook", "PermissionRequest", "--agent", "codex", input=json.dumps(perm), env=env).returncode == 0
    evs = list(events.read_events(job_dir / "events.jsonl"))
    assert [(e["type"], e.get("reason")) for e in evs[1:]] == [
        ("turn.waiting", "idle"), ("usage", None), ("turn.waiting", "approval")]
    assert evs[2]["input_tokens"] == 500 and evs[3]["tool"] == "Bash"


def test_a_working_report_read_after_the_stop_hook_does_not_reopen_the_turn() -> None:
    # Codex wrote `working`, then its Stop hook ran; the supervisor read the output after the hook
    late = [(0.0, ("hook", "working")), (1.0, ("hook", "waiting", "idle")), (1.1, ("agent", "working")),
            (1.2, ("agent", "waiting", "idle")), (5.0, ("output", 1))]
    assert replay(late, idle_after_s=2) == []
    # typed input starts the next turn, and then its report counts
    nxt = [(0.0, ("hook", "waiting", "idle")), (1.0, ("input",)), (1.1, ("agent", "working"))]
    assert [(t.state, t.reason) for t in replay(nxt, idle_after_s=2)] == [("working", None)]
    # an approval wait is no end of turn: answering it (in zen attach) shows as working again
    appr = [(0.0, ("hook", "waiting", "approval")), (1.0, ("agent", "working"))]
    assert [(t.state, t.reason) for t in replay(appr, idle_after_s=2)] == [("working", None)]

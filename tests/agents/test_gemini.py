"""The Gemini CLI adapter's parts that need no Gemini binary: its own Gemini home (the user's
settings copied with zen's hooks added, everything else linked), the guardian's reading of its
tool calls, its folder trust, and the chat log's usage."""

from __future__ import annotations

import json
from pathlib import Path

from tests.agents.test_adapters import JOB, ctx
from tests.helpers import make_repo, zen
from zen.agents import gemini_trust, get_adapter
from zen.agents.gemini import strip_comments
from zen.agents.trust import trust
from zen.guard.hook import gemini_call
from zen.observe.record import record
from zen.store import events

USER = """// my settings
{
  "security": {"auth": {"selectedType": "gemini-api-key"}},  /* chosen at first run */
  "ui": {"theme": "a // not a comment"},
  "hooks": {"AfterAgent": [{"hooks": [{"type": "command", "command": "notify-send done"}]}]},
  "hooksConfig": {"enabled": false}
}
"""


def test_the_users_settings_gain_zens_hooks_in_a_copy_and_the_rest_is_linked(tmp_path: Path, isolated_env: Path) -> None:
    mine = isolated_env / ".gemini"
    mine.mkdir()
    (mine / "settings.json").write_text(USER)
    (mine / "oauth_creds.json").write_text("{}")
    c = ctx(tmp_path, "gemini")
    spec = get_adapter("gemini").launch(c)
    home = c.job_dir / "gemini-home" / ".gemini"
    settings = json.loads(spec.files[home / "settings.json"])
    assert settings["security"] == {"auth": {"selectedType": "gemini-api-key"}}
    assert settings["ui"]["theme"] == "a // not a comment"
    after = settings["hooks"]["AfterAgent"]
    assert after[0]["hooks"][0]["command"] == "notify-send done"          # theirs kept, first
    assert "hook Stop --agent gemini" in after[1]["hooks"][0]["command"]
    assert settings["hooksConfig"]["enabled"] is True                      # hooks are zen's guardian
    assert (home / "oauth_creds.json").is_symlink() and (home / "oauth_creds.json").resolve() == mine / "oauth_creds.json"
    assert not (home / "settings.json").exists()                           # written by spawn, not linked
    assert (mine / "settings.json").read_text() == USER                    # the user's file untouched
    assert json.loads(strip_comments('{"a": "//x", /* c */ "b": 1} // end')) == {"a": "//x", "b": 1}


def test_a_trusted_lane_starts_with_skip_trust(tmp_path: Path, isolated_env: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    c = ctx(tmp_path, "gemini")
    c = type(c)(**{**c.__dict__, "repo": repo})
    assert "--skip-trust" not in get_adapter("gemini").launch(c).argv
    assert [d["changed"] for d in trust(repo, ["gemini"])] == [True]
    assert "--skip-trust" in get_adapter("gemini").launch(c).argv
    folders = json.loads((isolated_env / ".gemini" / "trustedFolders.json").read_text())
    assert folders == {str(repo.resolve()): "TRUST_FOLDER"}
    assert trust(repo, ["gemini"])[0]["changed"] is False
    # a parent trusted as TRUST_FOLDER covers it; a sibling's TRUST_PARENT covers the parent's children
    (isolated_env / ".gemini" / "trustedFolders.json").write_text(json.dumps({str(tmp_path): "TRUST_FOLDER"}))
    assert gemini_trust.is_trusted(repo)
    (isolated_env / ".gemini" / "trustedFolders.json").write_text(json.dumps({str(repo / "x"): "TRUST_PARENT"}))
    assert gemini_trust.is_trusted(repo) and not gemini_trust.is_trusted(tmp_path)


def test_gemini_tool_calls_are_judged_as_the_guardian_knows_them() -> None:
    assert gemini_call("run_shell_command", {"command": "ls"}) == ("Bash", {"command": "ls"})
    name, inp = gemini_call("run_shell_command", {"command": "rm -rf build", "dir_path": "/w/it's"})
    assert name == "Bash" and inp["command"] == "cd '/w/it'\\''s' && rm -rf build"
    assert gemini_call("write_file", {"file_path": "/a", "content": "x"})[0] == "Write"
    assert gemini_call("replace", {"file_path": "/a", "old_string": "x", "new_string": "y"})[0] == "Edit"
    assert gemini_call("some_new_tool", {})[0] == "some_new_tool"      # unknown: the core denies it


def test_the_guard_hook_speaks_gemini(home: Path, tmp_path: Path) -> None:
    wt = tmp_path / "wt"
    wt.mkdir()
    env = {"ZEN_HOME": str(home), "ZEN_WORKTREE": str(wt)}
    def ask(payload: dict) -> tuple[int, str, str]:
        r = zen("guard", "hook", "--agent", "gemini", input=json.dumps({"hook_event_name": "BeforeTool",
                                                                          "cwd": str(wt), **payload}), env=env)
        return r.returncode, r.stdout, r.stderr
    code, _, err = ask({"tool_name": "run_shell_command", "tool_input": {"command": "rm -rf ~"}})
    assert code == 2 and err.startswith("zen guardian: ")
    assert ask({"tool_name": "write_file", "tool_input": {"file_path": str(wt / "a.txt"), "content": "x"}})[:2] == (0, "{}")
    code, _, err = ask({"tool_name": "write_file", "tool_input": {"file_path": str(tmp_path / "out.txt"), "content": "x"}})
    assert code == 2 and "outside" in err


def _msg(i: int, inp: int, cached: int, out: int, thoughts: int = 0) -> str:
    return json.dumps({"id": f"m{i}", "type": "gemini", "content": "", "model": "gemini-2.5-flash",
                       "tokens": {"input": inp, "output": out, "cached": cached, "thoughts": thoughts,
                                  "tool": 0, "total": inp + out + thoughts}})


def test_chat_usage_counts_each_response_once_and_records_deltas(tmp_path: Path) -> None:
    job_dir = tmp_path / "zh" / "jobs" / JOB
    job_dir.mkdir(parents=True)
    events.append(job_dir, JOB, "task.received")
    chat = tmp_path / "session-x.jsonl"
    chat.write_text("\n".join([json.dumps({"sessionId": "s", "kind": "main"}),
                               json.dumps({"$set": {"messages": [json.loads(_msg(0, 100, 0, 10))]}}),
                               _msg(1, 1000, 400, 50, 5), _msg(1, 1000, 400, 50, 5)]) + "\n")
    first = record(job_dir, JOB, "gemini", str(chat))
    assert first is not None and first["source"] == "chat" and first["api_calls"] == 2
    assert (first["input_tokens"], first["cache_read_input_tokens"], first["output_tokens"]) == (700, 400, 65)
    assert first["model"] == "gemini-2.5-flash"
    assert record(job_dir, JOB, "gemini", str(chat)) is None
    with chat.open("a") as f:
        f.write(_msg(2, 300, 0, 20) + "\n" + '{"id": "m3", "type": "gemini", "tok')    # torn last line
    second = record(job_dir, JOB, "gemini", str(chat))
    assert second is not None and (second["input_tokens"], second["output_tokens"]) == (300, 20)

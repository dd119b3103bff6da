"""The hook's protocol pieces, in-process (zen/guard/hook.py): argument and payload parsing with
their one-line errors, each agent's answer format, and verdict(): every failure blocks (exit 2)
with a reason, never a traceback. (The real hook subprocess is pinned in test_hook.py.)"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.guard.test_corpus import _home
from zen.guard.hook import MAX_STDIN, answer, failure, parse_args, parse_payload, verdict


def payload(tool: str = "Bash", cwd: str | None = None, **tool_input: object) -> bytes:
    body: dict[str, object] = {"session_id": "s", "hook_event_name": "PreToolUse", "tool_name": tool,
                               "tool_input": tool_input}
    if cwd is not None:
        body["cwd"] = cwd
    return json.dumps(body).encode()


# -- parse_args ----------------------------------------------------------------------------------------
def test_parse_args_reads_both_spellings() -> None:
    assert parse_args([]) == {"agent": "claude"}
    assert parse_args(["--agent", "codex", "--home=/h", "--worktree", "/w"]) == {
        "agent": "codex", "home": "/h", "worktree": "/w"}


@pytest.mark.parametrize("argv,message", [
    (["--frob"], "unknown argument '--frob'"),
    (["--home"], "--home needs a value"),
    (["--agent", "aider"], "--agent must be one of claude, codex, gemini, not 'aider'"),
    (["positional"], "unknown argument 'positional'"),
])
def test_parse_args_errors_are_one_line(argv: list[str], message: str) -> None:
    with pytest.raises(ValueError) as e:
        parse_args(argv)
    assert message in str(e.value) and "\n" not in str(e.value)


# -- parse_payload ----------------------------------------------------------------------------------------
def test_parse_payload_takes_an_absolute_cwd_or_the_callers() -> None:
    assert parse_payload(payload(cwd="/w", command="ls"), "/here") == ("Bash", {"command": "ls"}, "/w")
    assert parse_payload(payload(cwd="rel", command="ls"), "/here")[2] == "/here"
    assert parse_payload(payload(command="ls"), "/here")[2] == "/here"


@pytest.mark.parametrize("data,message", [
    (b"{not json", "the hook input is not valid JSON"),
    (b"[1, 2]", "the hook input is not a JSON object"),
    (b"{}", "the hook input names no tool_name"),
    (b'{"tool_name": ""}', "names no tool_name"),
    (b'{"tool_name": "Bash", "tool_input": [1]}', "tool_input is not a JSON object"),
    ("{\"tool_name\": \"Bash\", \"x\": \"\udcff\"}".encode("utf-8", "surrogateescape"), "not valid JSON"),
])
def test_parse_payload_errors_are_one_line(data: bytes, message: str) -> None:
    with pytest.raises(ValueError) as e:
        parse_payload(data, "/here")
    assert message in str(e.value) and "\n" not in str(e.value)


# -- answer and failure ----------------------------------------------------------------------------------------
def test_each_agent_s_answer_format() -> None:
    assert answer("claude", True, "", []) == (0, "", "")
    assert answer("codex", True, "", []) == (0, "{}", "")
    assert answer("gemini", True, "", []) == (0, "{}", "")
    assert answer("claude", False, "no", []) == (2, "", "no")
    assert answer("codex", False, "no", ["n"]) == (2, "", "no")
    code, out, _ = answer("claude", True, "", ["lease held by K", "second"])
    assert code == 0
    assert json.loads(out) == {"hookSpecificOutput": {"hookEventName": "PreToolUse",
                                                      "additionalContext": "lease held by K second"}}


def test_anything_but_true_blocks() -> None:
    assert answer("claude", None, "x", [])[0] == 2      # type: ignore[arg-type]
    assert answer("claude", 1, "x", [])[0] == 2         # type: ignore[arg-type]


def test_a_long_note_is_cut() -> None:
    _, out, _ = answer("claude", True, "", ["x" * 20000])
    assert len(json.loads(out)["hookSpecificOutput"]["additionalContext"]) == 9000


@pytest.mark.parametrize("exc,text", [
    (ValueError("bad input"), "bad input; blocked"),
    (SystemExit(3), "unexpected exit (3) inside the guardian; blocked to be safe"),
    (KeyboardInterrupt(), "interrupted; blocked to be safe"),
    (RuntimeError("boom"), "internal error (RuntimeError: boom); blocked to be safe"),
])
def test_failure_reasons(exc: BaseException, text: str) -> None:
    assert failure(exc) == text


# -- verdict: the whole hook decision in-process --------------------------------------------------------------
@pytest.fixture
def home(tmp_path: Path) -> Path:
    h = Path(_home(tmp_path / "home"))
    (h / "zen.yaml").write_text("lanes: {}\n")
    (h / "worktrees" / "J").mkdir(parents=True)
    return h


def test_verdict_with_a_home_that_is_not_one_blocks_and_says_how_to_fix_it(tmp_path: Path) -> None:
    code, _, reason = verdict(["--home", str(tmp_path)], payload(command="ls"), "/", {})
    assert code == 2 and "is not a zen home" in reason and f"zen init {tmp_path}" in reason
    assert "\n" not in reason


def test_verdict_allows_and_denies_in_the_agent_s_protocol(home: Path) -> None:
    wt = str(home / "worktrees" / "J")
    args = ["--home", str(home), "--worktree", wt]
    env = {"HOME": str(home.parent), "PATH": "/usr/bin:/bin"}
    assert verdict(args, payload(cwd=wt, command="ls"), wt, env)[0] == 0
    code, out, reason = verdict(args, payload(cwd=wt, command="rm -rf /etc"), wt, env)
    assert (code, out) == (2, "") and "/etc" in reason and "\n" not in reason
    assert verdict(["--agent", "codex", *args], payload(cwd=wt, command="ls"), wt, env) == (0, "{}", "")


@pytest.mark.parametrize("argv,data,fragment", [
    (["--frob"], payload(command="ls"), "unknown argument"),
    ([], b"", "no hook input on stdin"),
    ([], b"   \n", "no hook input on stdin"),
    ([], b"{oops", "not valid JSON"),
    ([], payload(command=None), "the Bash call has no command (a string)"),
    ([], payload(command=["rm", "-rf", "/"]), "the Bash call has no command"),
])
def test_verdict_blocks_every_bad_input_with_a_reason(home: Path, argv: list[str], data: bytes, fragment: str) -> None:
    code, out, reason = verdict([*argv, "--home", str(home)] if argv != ["--frob"] else argv, data, "/", {})
    assert code == 2 and out == "" and fragment in reason and reason.endswith("blocked"), reason


def test_verdict_of_an_unknown_tool_blocks(home: Path) -> None:
    code, _, reason = verdict(["--home", str(home)], payload("Frobnicate", x=1), "/", {})
    assert code == 2 and "does not know the tool 'Frobnicate'" in reason


def test_verdict_of_a_huge_command_still_decides(home: Path) -> None:
    wt = str(home / "worktrees" / "J")
    big = payload(cwd=wt, command="echo " + "a" * (MAX_STDIN // 8))
    assert verdict(["--home", str(home), "--worktree", wt], big, wt, {"PATH": "/usr/bin"})[0] == 0

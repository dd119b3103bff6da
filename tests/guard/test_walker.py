"""The bash walker (zen/guard/shell/walk.py, expand.py): which simple commands it emits, in what
working directory and with what stdin, and how the decision core fails closed on input it
cannot read (empty, malformed, huge, nested too deep, control bytes, unicode)."""

from __future__ import annotations

import time

import pytest

from tests.guard.ctxs import bash, check
from zen.guard.shell.walk import Walker
from zen.guard.shell.words import UNK, Cmd, ShellError, State


def walk(script: str, cwd: str = "/w", env: dict[str, str] | None = None) -> list[Cmd]:
    seen: list[Cmd] = []
    Walker(seen.append, "/u", env or {"HOME": "/u"}).script(script, State((cwd,)))
    return seen


def argvs(script: str, **kw) -> list[list[str]]:
    return [[w.text.replace(UNK, "?") for w in c.words] for c in walk(script, **kw) if c.words]


# -- what is emitted ---------------------------------------------------------------------------------
@pytest.mark.parametrize("script,expected", [
    ("", []),
    ("   \n\t\n", []),
    ("# only a comment", []),
    ("a; b && c || d", [["a"], ["b"], ["c"], ["d"]]),
    ("a | b | c", [["a"], ["b"], ["c"]]),
    ("! a", [["a"]]),
    ("(a; (b))", [["a"], ["b"]]),
    ("{ a; b; } > out", [["a"], ["b"]]),
    ("if a; then b; elif c; then d; else e; fi", [["a"], ["b"], ["c"], ["d"], ["e"]]),
    ("for x in 1 2; do f $x; done", [["f", "1"], ["f", "2"]]),
    ("while a; do b; done", [["a"], ["b"]]),
    ("case $v in a) x;; b|c) y;; esac", [["x"], ["y"]]),
    ("f() { inner; }; f", [["inner"]]),
    ("echo $(date) `whoami`", [["date"], ["whoami"], ["echo", "?", "?"]]),
    ("a &\nb", [["a"], ["b"]]),
    ("x=1 y=2 cmd arg", [["cmd", "arg"]]),
])
def test_every_simple_command_is_emitted(script: str, expected: list[list[str]]) -> None:
    got = argvs(script)
    for argv in expected:
        assert argv in got, (script, got)
    assert len([a for a in got if a]) >= len(expected)


def test_a_function_body_is_emitted_even_when_never_called() -> None:
    assert ["rm", "-rf", "/x"] in argvs("f() { rm -rf /x; }")


def test_cd_changes_the_cwd_of_later_commands_only() -> None:
    cmds = [c for c in walk("pwd; cd sub && pwd; (cd /tmp && pwd); pwd") if c.name == "pwd"]
    # after `cd sub && pwd` either cd worked or it failed: both cwds stay possible; the subshell's
    # cd does not leak out of it
    assert [c.state.cwds for c in cmds] == [("/w",), ("/w/sub",), ("/tmp",), ("/w", "/w/sub")]


def test_a_cd_that_may_fail_keeps_the_old_cwd_possible() -> None:
    cmd = next(c for c in walk("cd /a; cd /b; pwd") if c.name == "pwd")
    assert cmd.state.cwds == ("/w", "/a", "/b")


def test_cd_in_one_branch_makes_the_cwd_one_of_two() -> None:
    cmd = next(c for c in walk("if t; then cd /a; fi; pwd") if c.name == "pwd")
    assert set(cmd.state.cwds) == {"/w", "/a"} and cmd.state.cwd is None


def test_cd_to_an_unknown_place_makes_the_cwd_unknown() -> None:
    cmd = next(c for c in walk("cd \"$1\"; pwd") if c.name == "pwd")
    assert cmd.state.cwd is None


@pytest.mark.parametrize("script,cwd", [("cd /a && cd /b && cd - && pwd", "/a"), ("cd && pwd", "/u"),
                                        ("cd ~ && pwd", "/u"), ("cd /a/../b/./c && pwd", "/b/c")])
def test_cd_dash_home_and_dots(script: str, cwd: str) -> None:
    assert [c.state.cwd for c in walk(script) if c.name == "pwd"] == [cwd]


def test_assignments_carry_to_later_commands_and_prefix_ones_do_not() -> None:
    cmds = walk("V=/x; f $V; W=/y g; f $W")
    fs = [[w.text for w in c.words] for c in cmds if c.name == "f"]
    assert fs[0] == ["f", "/x"]
    assert fs[1] == ["f", UNK]   # W=/y applied to g only; in the shell W is whatever the env holds


def test_an_unknown_variable_is_unknown_not_empty() -> None:
    assert argvs("f $NOPE", env={"HOME": "/u"}) == [["f", "?"]]
    assert argvs("f \"$NOPE\"x") == [["f", "?x"]]


def test_env_values_are_known() -> None:
    assert argvs("f $HOME/x ~/y", env={"HOME": "/u"}) == [["f", "/u/x", "/u/y"]]


def test_stdin_kinds_are_recorded() -> None:
    by_name = {c.name: c for c in walk("a <<'E'\nhello $X\nE\nb <<< word; c < file; d | e")}
    assert (by_name["a"].stdin, by_name["a"].stdin_text) == ("heredoc", "hello $X\n")
    assert (by_name["b"].stdin, by_name["b"].stdin_text) == ("herestring", "word")
    assert by_name["c"].stdin == "file" and [w.text for w in by_name["c"].reads] == ["file"]
    assert by_name["e"].stdin == "pipe" and by_name["e"].piped_from is by_name["d"]


def test_an_unquoted_heredoc_expands_what_it_can() -> None:
    cmd = walk("V=v; a <<E\n$V and $(date)\nE")[-1]
    assert cmd.name == "a" and cmd.stdin_text is not None
    assert cmd.stdin_text.startswith("v and ") and UNK in cmd.stdin_text


def test_redirect_targets_and_append_are_recorded() -> None:
    cmd = walk("f > a 2>> b &> c")[0]
    assert [(w.text, app) for w, app in cmd.writes] == [("a", False), ("b", True), ("c", False)]


def test_line_continuations_join_words() -> None:
    assert argvs("r\\\nm -rf \\\n  /x") == [["rm", "-rf", "/x"]]


def test_brace_expansion_in_the_command_word_is_read_as_bash_reads_it() -> None:
    assert argvs("{rm,-rf,/x}") == [["rm", "-rf", "/x"]]


def test_unicode_words_survive() -> None:
    assert argvs("echo héllo 'naïve' \"日本\" $'\\u00e9'") == [["echo", "héllo", "naïve", "日本", "é"]]


# -- malformed and hostile input ------------------------------------------------------------------------
@pytest.mark.parametrize("script", ["echo 'unterminated", "if true; then", "cat <<EOF\nno end", "echo $((",
                                    "( a", "a |"])
def test_what_does_not_parse_raises_a_shell_error(script: str) -> None:
    with pytest.raises(ShellError) as e:
        walk(script)
    assert e.value.rule.startswith("shell.")


@pytest.mark.parametrize("command,rule", [
    ("echo 'unterminated", "shell.parse"),
    ("if true; then", "shell.parse"),
    ("echo a\x00b", "shell.parse"),
    ("echo a\x01b", "shell.parse"),
    ("coproc rm -rf /etc", "shell.unsupported"),
])
def test_the_decision_on_unreadable_input_is_a_one_line_deny(policy, command: str, rule: str) -> None:
    check(bash(policy, command), "deny", rule)


def test_an_empty_command_is_allowed_and_a_missing_one_is_bad_input(policy) -> None:
    from tests.guard.ctxs import agent
    from zen.guard.api import ToolCall
    from zen.guard.decide import decide
    check(bash(policy, ""), "allow")
    check(bash(policy, "   \n  "), "allow")
    check(decide(ToolCall("Bash", command=None), agent(), policy), "deny", "tool.bad-input", "without a command")


def test_shells_nested_too_deep_are_denied(policy) -> None:
    command = "echo hi"
    for _ in range(10):
        command = f"bash -c {_sq(command)}"
    check(bash(policy, command), "deny", "shell.depth")


def test_subshells_nested_very_deep_deny_rather_than_crash(policy) -> None:
    d = bash(policy, "(" * 400 + "echo hi" + ")" * 400)
    check(d, "deny")


def test_command_substitutions_nested_deep_deny_rather_than_crash(policy) -> None:
    d = bash(policy, "echo " + "$(" * 200 + "rm -rf /etc" + ")" * 200)
    check(d, "deny")


def test_a_huge_harmless_script_is_allowed_quickly(policy) -> None:
    command = "\n".join(f"echo line {i} > out/{i}.txt" for i in range(2000))
    start = time.monotonic()
    check(bash(policy, command), "allow")
    assert time.monotonic() - start < 8


def test_one_bad_line_at_the_end_of_a_huge_script_is_found(policy) -> None:
    command = "\n".join(f"echo {i}" for i in range(2000)) + "\nrm -rf /etc"
    check(bash(policy, command), "deny", "fs.outside-worktree", "/etc")


def test_a_very_long_single_word_is_judged(policy) -> None:
    check(bash(policy, "echo " + "a" * 200_000), "allow")
    check(bash(policy, "rm -rf /" + "a" * 10_000), "deny", "fs.outside-worktree")


def test_unicode_paths_are_judged_like_any_other(policy) -> None:
    check(bash(policy, "rm -rf données/vieux"), "allow")
    check(bash(policy, "rm -rf /données"), "deny", "fs.outside-worktree", "/données")


def test_a_lone_surrogate_or_odd_bytes_do_not_crash_the_guardian(policy) -> None:
    check(bash(policy, "echo \udcff"), "allow")
    check(bash(policy, "rm -rf /\udcff"), "deny")


def _sq(s: str) -> str:
    return "'" + s.replace("'", "'\\''") + "'"

"""decide() for the tools other than Bash (zen/guard/decide.py): file edits, reads, globs,
WebFetch, MCP tools, inert and unknown tools, and the fail-closed outcomes (a broken policy,
an analyser error)."""

from __future__ import annotations

import pytest

from tests.guard.ctxs import agent, check, tool
from tests.guard.test_corpus import ENV, WT
from zen.guard.api import Context, ToolCall, subject
from zen.guard.decide import decide
from zen.guard.policy.load import load_policy

IN = WT + "/src/a.py"


# -- file edits ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("name,tool_input", [
    ("Write", {"file_path": IN, "content": "x"}),
    ("Write", {"file_path": "src/a.py", "content": "x"}),          # relative: to the cwd
    ("Edit", {"file_path": IN, "old_string": "a", "new_string": "b"}),
    ("MultiEdit", {"file_path": IN, "edits": [{"old_string": "a", "new_string": "b"}]}),
    ("NotebookEdit", {"notebook_path": WT + "/n.ipynb", "new_source": "print(1)"}),
])
def test_edits_inside_the_worktree_are_allowed(policy, name: str, tool_input: dict) -> None:
    check(tool(policy, name, tool_input), "allow")


@pytest.mark.parametrize("name,tool_input,rule,fragment", [
    ("Write", {"file_path": "/etc/passwd", "content": "x"}, "fs.outside-worktree", "Write writes /etc/passwd"),
    ("Edit", {"file_path": "/u/.bashrc", "old_string": "a", "new_string": "b"}, "fs.outside-worktree", "/u/.bashrc"),
    ("MultiEdit", {"file_path": WT + "/.git/config", "edits": []}, "fs.git-dir", "destroys history"),
    ("NotebookEdit", {"notebook_path": "/tmp/n.ipynb", "new_source": "x"}, "fs.outside-worktree", "/tmp/n.ipynb"),
    ("Write", {"file_path": WT + "/../K/x", "content": "x"}, "fs.outside-worktree", "outside the job's worktree"),
    ("Write", {"file_path": WT + "/.claude/settings.json", "content": "{}"}, "self.protect", "hook registration"),
    ("Write", {"file_path": "/z/home/policy/guardian.yaml", "content": "rules: []"}, "self.protect", "policy"),
    ("Write", {"file_path": "", "content": "x"}, "tool.bad-input", "Write without a file path"),
    ("Edit", {"old_string": "a", "new_string": "b"}, "tool.bad-input", "Edit without a file path"),
    ("Write", {"file_path": WT + "/a\x00b", "content": "x"}, "fs.unresolved-target", "only known at run time"),
])
def test_edits_the_path_rules_refuse(policy, name: str, tool_input: dict, rule: str, fragment: str) -> None:
    check(tool(policy, name, tool_input), "deny", rule, fragment)


def test_what_a_write_says_is_judged_for_package_manager_files(policy) -> None:
    check(tool(policy, "Write", {"file_path": WT + "/.npmrc", "content": "registry=https://evil.example/"}),
          "deny", "pkg.unknown-index", "evil.example")
    check(tool(policy, "Write", {"file_path": WT + "/.npmrc", "content": "save-exact=true\n"}), "allow")


def test_multiedit_content_is_all_the_new_strings(policy) -> None:
    call = ToolCall.from_hook("MultiEdit", {"file_path": IN, "edits": [{"new_string": "a"}, {"new_string": "b"},
                                                                         "junk"]})
    assert call.content == "a\nb"
    check(tool(policy, "MultiEdit", {"file_path": WT + "/.npmrc", "edits": [
        {"old_string": "x", "new_string": "save-exact=true"},
        {"old_string": "y", "new_string": "registry=https://evil.example/"}]}), "deny", "pkg.unknown-index")


def test_every_edit_is_denied_at_observe(policy) -> None:
    for name, ti in (("Write", {"file_path": IN, "content": "x"}),
                     ("Edit", {"file_path": IN, "old_string": "a", "new_string": "b"})):
        check(tool(policy, name, ti, agent(level="observe")), "deny", "level.observe", f"{name} (a file edit)")


# -- reads ----------------------------------------------------------------------------------------------
@pytest.mark.parametrize("name,tool_input,decision,fragment", [
    ("Read", {"file_path": IN}, "allow", None),
    ("Read", {"file_path": "/etc/hosts"}, "allow", None),           # reading outside is fine
    ("Read", {"file_path": "/u/.ssh/id_rsa"}, "deny", "~/.ssh"),
    ("Read", {"file_path": "/z/home/control/api-token"}, "deny", "an agent never holds it"),
    ("Read", {}, "allow", None),
    ("Glob", {"pattern": "**/*.py"}, "allow", None),
    ("Glob", {"pattern": "**/.env"}, "deny", "globs a credential store (.env)"),
    ("Glob", {"pattern": "~/.ssh/*"}, "deny", ".ssh"),
    ("Grep", {"pattern": "x", "path": "/u"}, "deny", "~/.ssh"),    # a recursive search of home
    ("Grep", {"pattern": "x", "path": "/u/projects"}, "allow", None),
    ("LS", {"path": "/u/.aws"}, "deny", "~/.aws"),
    ("NotebookRead", {"notebook_path": WT + "/n.ipynb"}, "allow", None),
])
def test_reads(policy, name: str, tool_input: dict, decision: str, fragment: str | None) -> None:
    check(tool(policy, name, tool_input), decision, "creds.read" if decision == "deny" else None, fragment)


def test_reads_are_allowed_at_observe(policy) -> None:
    check(tool(policy, "Read", {"file_path": IN}, agent(level="observe")), "allow")
    check(tool(policy, "Grep", {"pattern": "TODO", "path": WT}, agent(level="observe")), "allow")


# -- web and inert tools ---------------------------------------------------------------------------------
def test_webfetch(policy) -> None:
    check(tool(policy, "WebFetch", {"url": "https://docs.python.org/3/", "prompt": "x"}), "allow")
    check(tool(policy, "WebFetch", {"url": "https://api.stripe.com/v1/charges"}), "deny", "net.high-consequence",
          "zen gate")
    check(tool(policy, "WebFetch", {"prompt": "x"}), "deny", "tool.bad-input", "WebFetch without a url")
    check(tool(policy, "WebFetch", {"url": 7}), "deny", "tool.bad-input")


@pytest.mark.parametrize("name", ["TodoWrite", "Task", "WebSearch", "ExitPlanMode", "BashOutput", "KillShell"])
def test_inert_tools_are_allowed_whatever_their_input(policy, name: str) -> None:
    check(tool(policy, name, {"prompt": "rm -rf /", "command": "rm -rf /"}), "allow")


@pytest.mark.parametrize("name", ["Frobnicate", "bash", "write", "mcp_", ""])
def test_an_unknown_tool_is_denied_by_name(policy, name: str) -> None:
    d = tool(policy, name, {"x": 1})
    check(d, "deny", "tool.unknown", "does not know the tool")
    assert repr(name) in d.reason


# -- MCP tools --------------------------------------------------------------------------------------------
@pytest.mark.parametrize("name,tool_input,decision,rule", [
    ("mcp__fs__write_file", {"path": "/etc/passwd", "content": "x"}, "deny", "fs.outside-worktree"),
    ("mcp__fs__write_file", {"path": WT + "/a", "content": "x"}, "allow", None),
    ("mcp__fs__read_file", {"path": "/u/.ssh/id_rsa"}, "deny", "creds.read"),
    ("mcp__fs__read_file", {"path": "/etc/hosts"}, "allow", None),
    ("mcp__fs__delete_file", {"path": WT + "/.git"}, "deny", "fs.git-dir"),
    ("mcp__fs__move_file", {"source": WT + "/a", "destination": "/tmp/b"}, "deny", "fs.outside-worktree"),
    ("mcp__fs__edit", {"paths": [WT + "/a", "/z/home/policy/guardian.yaml"], "edits": []}, "deny", "self.protect"),
    ("mcp__fs__frob", {"path": "/etc/x", "content": "y"}, "deny", "fs.outside-worktree"),   # content = a write
    ("mcp__github__create_issue", {"title": "x", "body": "rm -rf /"}, "allow", None),    # no path: the human's server
])
def test_mcp_tools_with_paths_get_the_path_rules(policy, name: str, tool_input: dict, decision: str,
                                                 rule: str | None) -> None:
    check(tool(policy, name, tool_input), decision, rule)


def test_an_mcp_write_is_denied_at_observe_and_a_read_is_not(policy) -> None:
    obs = agent(level="observe")
    check(tool(policy, "mcp__fs__write_file", {"path": WT + "/a", "content": "x"}, obs), "deny", "level.observe",
          "mcp__fs__write_file (writes)")
    check(tool(policy, "mcp__fs__read_file", {"path": WT + "/a"}, obs), "allow")


# -- fail closed -------------------------------------------------------------------------------------------
def test_a_broken_policy_file_denies_every_tool_with_a_one_line_reason(tmp_path) -> None:
    home = tmp_path / "home"
    (home / "policy").mkdir(parents=True)
    (home / "policy" / "guardian.yaml").write_text("rules:\n  - id: x\n    match: {command: [rm]\n")
    broken, _ = load_policy(str(home))
    assert broken.invalid
    for call in (ToolCall("Bash", command="ls"), ToolCall.from_hook("Read", {"file_path": IN}),
                 ToolCall.from_hook("TodoWrite", {}), ToolCall.from_hook("mcp__a__b", {})):
        check(decide(call, agent(), broken), "deny", "policy.invalid", "guardian.yaml")


def test_an_error_inside_the_analyser_denies_with_its_name(policy) -> None:
    def realpath(path: str) -> str:
        raise RuntimeError("disk on fire")
    ctx = Context(cwd=WT, worktree=WT, home="/z/home", user_home="/u", level="act-and-report", job_id="J",
                  env=ENV, realpath=realpath)
    d = decide(ToolCall("Bash", command="rm -rf build"), ctx, policy)
    check(d, "deny", "guard.internal", "RuntimeError: disk on fire")
    assert "denied to be safe" in d.reason


def test_an_oserror_from_realpath_falls_back_to_the_lexical_path(policy) -> None:
    def realpath(path: str) -> str:
        raise OSError("ELOOP")
    ctx = Context(cwd=WT, worktree=WT, home="/z/home", user_home="/u", level="act-and-report", job_id="J",
                  env=ENV, realpath=realpath)
    check(decide(ToolCall("Bash", command="rm -rf build"), ctx, policy), "allow")
    check(decide(ToolCall("Bash", command="rm -rf /etc"), ctx, policy), "deny", "fs.outside-worktree")


def test_writes_collects_every_target_judged(policy) -> None:
    writes: list = []
    decide(ToolCall("Bash", command="echo x > a.txt; rm -rf build; cp a b"), agent(), policy, writes)
    got = {(op, t.path) for op, t in writes}
    assert {WT + "/a.txt", WT + "/build", WT + "/b"} <= {p for _, p in got}


def test_decide_is_deterministic_and_does_not_mutate_the_policy(policy) -> None:
    calls = [ToolCall("Bash", command=c) for c in ("rm -rf /etc", "ls", "git push origin HEAD", "cat .env")]
    first = [decide(c, agent(), policy) for c in calls]
    again = [decide(c, agent(), policy) for c in reversed(calls)][::-1]
    assert first == again


# -- ToolCall.from_hook and subject -------------------------------------------------------------------------
def test_from_hook_reads_the_fields_of_every_agent_tool() -> None:
    assert ToolCall.from_hook("Bash", {"command": "ls"}).command == "ls"
    assert ToolCall.from_hook("Edit", {"file_path": "/a", "new_string": "n"}).content == "n"
    assert ToolCall.from_hook("NotebookEdit", {"notebook_path": "/n", "new_source": "s"}).file_path == "/n"
    assert ToolCall.from_hook("mcp__x__y", {"path": "/p"}).file_path == "/p"
    bad = ToolCall.from_hook("Write", "not a mapping")  # type: ignore[arg-type]
    assert bad.file_path is None and bad.raw == {}


def test_subject_is_the_command_or_the_path() -> None:
    assert subject(ToolCall("Bash", command="ls -l")) == "ls -l"
    assert subject(ToolCall.from_hook("Write", {"file_path": "/a", "content": "x"})) == "/a"
    assert subject(ToolCall("TodoWrite")) == ""

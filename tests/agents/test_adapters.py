"""Each adapter's exact command line, environment and files (the real CLIs are not installed here,
so what they would be started with is the contract), and how each one reads a screen."""

from __future__ import annotations

import dataclasses
import json
import os
import re
import shlex
import sys
from pathlib import Path
from typing import Any

import pytest

from zen.agents import NAMES, get_adapter
from zen.agents.base import LaunchContext
from zen.agents.common import session_uuid
from zen.agents.settings import hook_settings
from zen.core.model import Task
from zen.errors import ZenError

JOB = "20261129T101500Z-fix-login-3fa9"
ZEN = ["/opt/zen venv/bin/zen"]  # a space in the path: hook commands must quote it
Q = shlex.quote(ZEN[0])


def ctx(tmp_path: Path, agent: str = "claude", settings: dict[str, Any] | None = None,
        lane: dict[str, Any] | None = None, **task: Any) -> LaunchContext:
    job_dir = tmp_path / "jobs" / JOB
    t = Task(id=JOB, name="fix-login", prompt="Fix the login form.\nAdd a test.", lane="app",
             agent=agent, created_at="2026-11-29T10:15:00.123Z", **task)
    return LaunchContext(home=tmp_path, job_id=JOB, job_dir=job_dir, worktree=tmp_path / "wt",
                         handoff=job_dir / "handoff.md", task=t, zen_argv=ZEN, settings=settings or {},
                         lane=lane or {})


def prompt_for(c: LaunchContext) -> str:
    return f"Read {c.handoff} first: it is zen's orientation for this job.\n\nFix the login form.\nAdd a test.\n"


def test_every_agent_has_an_adapter_and_unknown_names_are_refused() -> None:
    assert set(NAMES) == {"claude", "codex", "aider", "gemini", "sim", "cmd"}
    for name in NAMES:
        assert get_adapter(name).name == name
    with pytest.raises(ZenError, match="unknown agent 'copilot'"):
        get_adapter("copilot")


def test_hook_settings_register_the_guardian_and_every_turn_event() -> None:
    s = hook_settings(ZEN)
    assert s["disableAllHooks"] is False
    pre = s["hooks"]["PreToolUse"]
    # MCP tools too: zen's team tools and the user's own servers pass the guardian
    assert [g["matcher"] for g in pre] == ["Bash", "Edit|Write|MultiEdit|NotebookEdit",
                                           "Read|Glob|Grep|LS|NotebookRead|WebFetch", "mcp__.*"]
    # Claude Code matches a tool name against each matcher as a regex: every tool that reads a
    # file or reaches the network is sent to the guardian
    for tool in ("Bash", "Write", "Edit", "Read", "Glob", "Grep", "LS", "NotebookRead", "WebFetch", "mcp__zen__agent_spawn"):
        assert any(re.fullmatch(g["matcher"], tool) for g in pre), tool
    assert s["permissions"] == {"allow": ["mcp__zen"]}
    for g in pre:
        assert g["hooks"] == [{"type": "command", "command": f"{Q} guard hook", "timeout": 10}]
    for event in ("Stop", "StopFailure", "Notification", "PermissionRequest", "UserPromptSubmit", "SessionEnd"):
        [group] = s["hooks"][event]
        assert "matcher" not in group
        assert group["hooks"][0]["command"] == f"{Q} hook {event}"
    assert set(s["hooks"]) == {"PreToolUse", "Stop", "StopFailure", "Notification", "PermissionRequest",
                               "UserPromptSubmit", "SessionEnd"}


def test_claude_command_line_and_settings_file(tmp_path: Path) -> None:
    c = ctx(tmp_path)
    spec = get_adapter("claude").launch(c)
    settings = c.job_dir / "claude-settings.json"
    mcp = c.job_dir / "mcp-config.json"
    assert spec.argv == ["claude", "--settings", str(settings), "--mcp-config", str(mcp),
                         "--permission-mode", "acceptEdits", "--session-id", session_uuid(JOB), "--", prompt_for(c)]
    written = json.loads(spec.files[settings])
    # the job's wall in Claude Code's own sandbox (issue 31): on, no unsandboxed fallback, a start
    # that fails closed; writes in the worktree and a short private TMPDIR only; zen's home and the
    # user's credentials unreadable but for the worktree and the handoff; no host reachable
    box = written["sandbox"]
    assert written == hook_settings(ZEN, box)
    assert (box["enabled"], box["failIfUnavailable"], box["allowUnsandboxedCommands"]) == (True, True, False)
    assert box["filesystem"]["allowWrite"] == [str(c.worktree), spec.env["TMPDIR"]]
    assert len(spec.env["TMPDIR"]) < 40 and str(c.worktree / ".git") in box["filesystem"]["denyWrite"]
    assert str(tmp_path) in box["filesystem"]["denyRead"] and str(c.handoff) in box["filesystem"]["allowRead"]
    assert any(p.endswith("/.ssh") for p in box["filesystem"]["denyRead"])
    assert box["network"] == {"allowedDomains": []} and written["permissions"]["deny"] == ["WebFetch(domain:*)"]
    # what the guardian allows, it grants (the agent does not ask) when the level says so
    assert {h["command"] for g in written["hooks"]["PreToolUse"] for h in g["hooks"]} == {f"{Q} guard hook --grant"}
    assert set(spec.files) == {settings, mcp}  # nothing in the worktree, nothing in ~/.claude
    server = json.loads(spec.files[mcp])["mcpServers"]["zen"]
    assert (server["type"], server["command"], server["args"]) == ("stdio", ZEN[0], ["mcp", "serve"])
    assert server["env"]["ZEN_JOB_ID"] == JOB and server["env"]["ZEN_HOME"] == str(tmp_path)
    # the user's own MCP servers stay, unless the lane asks for zen's alone
    strict = get_adapter("claude").launch(ctx(tmp_path, lane={"strict_mcp": True})).argv
    assert strict[strict.index("--mcp-config") + 2] == "--strict-mcp-config"
    assert set(spec.env) == {"TMPDIR"} and spec.initial_input is None
    assert session_uuid(JOB) == session_uuid(JOB) != session_uuid(JOB + "x")
    # a lane without the wall: no sandbox, no grant, the user's TMPDIR
    off = get_adapter("claude").launch(ctx(tmp_path, lane={"sandbox": "off"}))
    assert json.loads(off.files[settings]) == hook_settings(ZEN) and "sandbox" not in hook_settings(ZEN)
    assert off.env == {}


def test_claude_starts_read_only_at_observe(tmp_path: Path) -> None:
    for level, mode in (("observe", "plan"), ("suggest", "acceptEdits"), ("autonomous", "acceptEdits")):
        argv = get_adapter("claude").launch(dataclasses.replace(ctx(tmp_path), level=level)).argv
        assert argv[argv.index("--permission-mode") + 1] == mode, level
    # zen.yaml's own mode never lifts observe
    c = dataclasses.replace(ctx(tmp_path, settings={"permission_mode": "default"}), level="observe")
    argv = get_adapter("claude").launch(c).argv
    assert argv[argv.index("--permission-mode") + 1] == "plan"


def test_claude_honours_zen_yaml_command_and_env(tmp_path: Path) -> None:
    c = ctx(tmp_path, settings={"command": "npx -y claude", "env": {"CLAUDE_CODE_X": 1},
                                "permission_mode": "default"})
    spec = get_adapter("claude").launch(c)
    assert spec.argv[:3] == ["npx", "-y", "claude"]
    assert spec.argv[spec.argv.index("--permission-mode") + 1] == "default"
    assert spec.env == {"CLAUDE_CODE_X": "1", "TMPDIR": spec.env["TMPDIR"]}


def test_codex_command_line(tmp_path: Path) -> None:
    c = ctx(tmp_path, "codex")
    spec = get_adapter("codex").launch(c)
    assert spec.argv[:3] == ["codex", "--no-daemon", "--dangerously-bypass-hook-trust"]
    overrides = [spec.argv[i + 1] for i, a in enumerate(spec.argv) if a == "-c"]
    assert "features.hooks=true" in overrides and "tui.terminal_title=[]" in overrides
    assert not any(o.startswith("notify") for o in overrides)   # it also fires for the title turn
    assert spec.argv[-6:] == ["--ask-for-approval", "on-request", "--sandbox", "workspace-write",
                              "--", prompt_for(c)]
    # zen's team tools: its MCP server with the job's identity (and the private tmux socket dir)
    env = f'{{ ZEN_HOME = "{tmp_path}", ZEN_JOB_ID = "{JOB}", TMUX_TMPDIR = "{os.environ["TMUX_TMPDIR"]}" }}'
    assert f'mcp_servers.zen.command="{ZEN[0]}"' in overrides and 'mcp_servers.zen.args=["mcp", "serve"]' in overrides
    assert f"mcp_servers.zen.env={env}" in overrides
    assert spec.files == {} and get_adapter("codex").exit_keys == ["/quit", "Enter"]
    # zen's own options (its telemetry exporter) go in before the prompt's `--`
    extra = dataclasses.replace(c, extra_args=("-c", "otel.exporter=none"))
    argv = get_adapter("codex").launch(extra).argv
    assert argv[-8:-6] == ["-c", "otel.exporter=none"] and argv[-2] == "--"


def test_codex_permissions_follow_the_level_and_the_lane(tmp_path: Path) -> None:
    def run(level: str, **kw: Any) -> list[str]:
        argv = get_adapter("codex").launch(dataclasses.replace(ctx(tmp_path, "codex", **kw), level=level)).argv
        return [argv[argv.index("--sandbox") + 1], argv[argv.index("--ask-for-approval") + 1],
                *(["net"] if "sandbox_workspace_write.network_access=true" in argv else [])]

    assert run("observe") == ["read-only", "on-request"]
    assert run("suggest") == ["workspace-write", "on-request"]
    # what the guardian allows runs unprompted inside the wall, at the levels that act on their own
    assert run("act-and-report") == run("autonomous") == ["workspace-write", "never"]
    # not without the wall, and never above observe's read-only, whatever zen.yaml says
    assert run("autonomous", lane={"sandbox": "off"}) == ["workspace-write", "on-request"]
    assert run("observe", settings={"sandbox": "danger-full-access"}) == ["read-only", "on-request"]
    # a lane that names hosts lets commands out (Codex's sandbox has no host list of its own)
    assert run("suggest", lane={"network": ["pypi.org"]}) == ["workspace-write", "on-request", "net"]


def test_aider_types_its_prompt_notifies_zen_and_runs_no_shell_commands(tmp_path: Path) -> None:
    c = ctx(tmp_path, "aider")
    spec = get_adapter("aider").launch(c)
    log = str(c.worktree / ".zen-tmp" / "aider-analytics.jsonl")
    assert spec.argv[:4] == ["aider", "--notifications", "--notifications-command",
                             f"{Q} hook aider-notify --agent aider --usage-file {shlex.quote(log)}"]
    assert "--no-suggest-shell-commands" in spec.argv and "--no-auto-commits" in spec.argv
    assert spec.argv[spec.argv.index("--analytics-log") + 1] == log
    assert spec.initial_input == prompt_for(c)
    assert get_adapter("aider").guarded is False
    assert "--no-auto-commits" not in get_adapter("aider").launch(ctx(tmp_path, "aider", {"auto_commits": True})).argv
    # a lane that opts in gets aider's shell commands, and then never with --yes-always
    opted = type(c)(**{**c.__dict__, "lane": {"unguarded_shell": True}})
    assert "--suggest-shell-commands" in get_adapter("aider").launch(opted).argv
    with pytest.raises(ZenError, match="yes_always"):
        get_adapter("aider").launch(type(c)(**{**opted.__dict__, "settings": {"yes_always": True}}))


def test_gemini_command_line_and_its_own_gemini_home(tmp_path: Path, isolated_env: Path) -> None:
    c = ctx(tmp_path, "gemini")
    spec = get_adapter("gemini").launch(c)
    home = c.job_dir / "gemini-home"
    assert spec.argv == ["gemini", "--approval-mode", "default"]    # no trusted lane: no --skip-trust
    assert spec.env == {"GEMINI_CLI_HOME": str(home), "CI": "0"}   # CI=0: it has a terminal, whatever the runner says
    assert spec.initial_input == prompt_for(c)
    hooks = json.loads(spec.files[home / ".gemini" / "settings.json"])["hooks"]
    # any failure of the guard hook is a block: Gemini CLI goes on after a hook that fails otherwise
    assert hooks["BeforeTool"][0]["hooks"][0]["command"] == f"{Q} guard hook --agent gemini || exit 2"
    assert hooks["AfterAgent"][0]["hooks"][0]["command"] == f"{Q} hook Stop --agent gemini"
    assert hooks["BeforeAgent"][0]["hooks"][0]["command"] == f"{Q} hook UserPromptSubmit --agent gemini"


def test_cmd_runs_the_task_command_as_is(tmp_path: Path) -> None:
    c = ctx(tmp_path, "cmd", command="sh -c 'echo \"$ZEN_PROMPT\"; exit 3'")
    spec = get_adapter("cmd").launch(c)
    assert spec.argv == ["sh", "-c", 'echo "$ZEN_PROMPT"; exit 3'] and spec.env == {} and spec.files == {}
    assert get_adapter("cmd").exit_keys is None


def test_sim_reads_the_same_settings_file_claude_would_get(tmp_path: Path) -> None:
    steps = [{"say": "hi"}, {"exit": 2}]
    c = ctx(tmp_path, "sim", script=steps)
    spec = get_adapter("sim").launch(c)
    settings, script = c.job_dir / "claude-settings.json", c.job_dir / "sim-script.json"
    assert spec.argv == [sys.executable, "-P", "-m", "zen.agents.simagent", "--settings", str(settings),
                         "--script", str(script), "--session-id", session_uuid(JOB),
                         "--mcp-config", str(c.job_dir / "mcp-config.json")]
    assert spec.files[settings] == get_adapter("claude").launch(ctx(tmp_path)).files[settings]
    assert json.loads(spec.files[script]) == steps
    assert get_adapter("sim").exit_keys == ["/exit", "Enter"]
    # no script: a default one that notes the prompt, commits and exits 0
    default = json.loads(get_adapter("sim").launch(ctx(tmp_path, "sim")).files[script])
    assert {"write": {"path": "NOTES.md", "content": "# Notes\n\nFix the login form.\nAdd a test.\n"}} in default
    assert default[-1] == {"exit": 0} and any("commit" in s for s in default)


CLAUDE_TRUST = """
 Accessing workspace:
 /home/u/repo
 Quick safety check: Is this a project you created or one you trust?
 ❯ 1. Yes, I trust this folder
   2. No, exit
"""
CLAUDE_KEY = "Detected a custom API key in your environment\nDo you want to use this API key?\n❯ 1. Yes\n  2. No"
CLAUDE_PERMISSION = """
 Bash command
   rm -rf node_modules
 Do you want to proceed?
 ❯ 1. Yes
   2. Yes, and don't ask again for rm commands
   3. No, and tell Claude what to do differently (esc)
"""
CLAUDE_IDLE = "⏺ Done. The tests pass.\n\n✻ Baked for 3s\n────────\n❯ \n────────\n  ? for shortcuts\n"


@pytest.mark.parametrize(("agent", "screen", "expected"), [
    ("claude", CLAUDE_TRUST, "dialog"),
    ("claude", "Do you trust the files in this folder?\n", "dialog"),
    ("claude", CLAUDE_KEY, "dialog"),
    ("claude", CLAUDE_PERMISSION, "approval"),
    ("claude", CLAUDE_IDLE, None),
    ("sim", CLAUDE_PERMISSION, "approval"),
    ("sim", "⏺ Which database should I use?\n", "question"),
    ("codex", "Would you like to run the following command?\n  $ rm -rf x\n› 1. Yes, proceed", "approval"),
    ("codex", "Do you trust the contents of this directory?", "dialog"),
    ("codex", "  Folder access\n  /w/wt\n  Trust this folder? Codex can read, edit, and run files here\n"
              "› 1. Trust and continue\n  2. Back to Agent Command Center\n", "dialog"),
    ("codex", "• All done.\n\n  Worked for <1s • 09:03\n\n› Ask Codex to do anything\n\n  ? for shortcuts", None),
    ("aider", "Add file to the chat? (Y)es/(N)o/(D)on't ask again [Yes]: ", "approval"),
    ("gemini", "│ Allow execution of: 'rm'?\n│ ● 1. Yes, allow once", "approval"),
    ("gemini", "│ Allow execution of [Shell]?\n│ ● 1. Allow once\n│   3. No, suggest changes (esc)", "approval"),
    ("gemini", " │ Do you trust the files in this folder?\n │ ● 1. Trust folder (repo)\n │   3. Don't trust", "dialog"),
    ("cmd", "working...\nContinue? [y/N]\nProceed with the upgrade? ", "question"),
    ("cmd", "Overwrite? [y/n]", "question"),
    ("cmd", "compiled 12 files\nall good\n", None),
])
def test_screens_are_classified(agent: str, screen: str, expected: str | None) -> None:
    assert get_adapter(agent).classify_screen(screen) == expected

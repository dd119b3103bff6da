"""Interactive Claude Code in a tmux pane.

    claude --settings <job>/claude-settings.json --mcp-config <job>/mcp-config.json \\
           --permission-mode acceptEdits --session-id <uuid from the job id> -- "<handoff pointer + prompt>"

The per-job settings file registers zen's guardian (PreToolUse) and turn hooks; it layers above
the user's and the project's settings, so nothing in the worktree or in ~/.claude is edited. The
prompt goes after `--`: options such as --allowedTools take several values and would swallow it
(reference/real-claude-code.md). The session id is derived from the job id, so the transcript
(~/.claude/projects/*/<uuid>.jsonl) can be found without asking Claude.
"""

from __future__ import annotations

import re

from zen.agents.base import LaunchContext, LaunchSpec
from zen.agents.common import (
    agent_command,
    agent_env,
    classify,
    first_prompt,
    job_sandbox,
    model_args,
    sandbox_tmp,
    session_uuid,
)
from zen.agents.settings import settings_text
from zen.agents.teamtools import config_text, strict
from zen.store.layout import JobPaths

# Screen texts of the current and older Claude Code versions (reference/agents.md 1.5).
_DIALOG = re.compile(
    r"quick safety check|do you trust the files|accessing workspace|detected a custom api key"
    r"|do you want to use this api key",
    re.IGNORECASE,
)
_APPROVAL = re.compile(
    r"do you want to proceed\?|would you like to proceed\?|do you want to make this edit to"
    r"|do you want to create \S|(?:no|deny), and tell claude what to do differently",
    re.IGNORECASE,
)


def classify_claude_screen(screen: str) -> str | None:
    """'dialog' for the trust / API-key screens, 'approval' for a tool permission prompt."""
    return classify(screen, _DIALOG, _APPROVAL)


def permission_mode(ctx: LaunchContext) -> str:
    """Claude Code's own permission mode for the job's autonomy level (DESIGN 6): `plan` (read-only)
    at observe, else acceptEdits (edits in the worktree; a command asks unless zen's guardian grants
    it, which it does at act-and-report and autonomous inside the wall). zen.yaml
    agents.claude.permission_mode overrides it, but never above observe's `plan`."""
    if ctx.level == "observe":
        return "plan"
    return str(ctx.settings.get("permission_mode") or "acceptEdits")


class ClaudeAdapter:
    name = "claude"
    guarded = True                  # its PreToolUse hook is zen's guardian (settings.py)
    turn_hooks = True               # each turn's end is reported by its Stop hook

    def __init__(self) -> None:
        # a new list per adapter: callers may not mutate a shared default
        self.exit_keys: list[str] | None = ["/exit", "Enter"]

    def launch(self, ctx: LaunchContext) -> LaunchSpec:
        paths = JobPaths(ctx.job_dir)
        settings, mcp_config = paths.claude_settings, paths.mcp_config
        argv = [
            *agent_command(ctx, "claude"),
            "--settings", str(settings),
            # zen's team tools beside the user's own MCP servers (only those with a strict lane)
            "--mcp-config", str(mcp_config),
            *(["--strict-mcp-config"] if strict(ctx) else []),
            "--permission-mode", permission_mode(ctx),
            "--session-id", session_uuid(ctx.job_id),
            *model_args(ctx),
            "--",
            first_prompt(ctx),
        ]
        env = agent_env(ctx)
        sandbox = job_sandbox(ctx)
        if sandbox is not None:
            env["TMPDIR"] = str(sandbox_tmp(ctx))
        if ctx.task.max_tokens:  # Claude Code's own cap on a response's output tokens
            env["CLAUDE_CODE_MAX_OUTPUT_TOKENS"] = str(ctx.task.max_tokens)
        return LaunchSpec(argv=argv, env=env, files={settings: settings_text(ctx.zen_argv, sandbox),
                                                     mcp_config: config_text(ctx)})

    def classify_screen(self, screen: str) -> str | None:
        return classify_claude_screen(screen)

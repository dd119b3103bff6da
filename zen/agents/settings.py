"""The per-job Claude Code `--settings` file: the one source of truth for zen's hooks.

The claude adapter writes it to jobs/<id>/claude-settings.json and the simulated agent reads that
same file, so the hooks the simulation fires can never drift from the ones Claude Code gets.
Nothing in the worktree or the user's own settings is touched: `--settings` layers above them,
and hook lists merge across layers.
"""

from __future__ import annotations

import json
import shlex
from typing import Any

# zen.guard.hook.AGENT_TIMEOUT_S, which its internal deadline stays under (tests/guard/test_hook.py
# checks they agree; the guardian sits above the agents, so it is not imported from there)
GUARD_TIMEOUT_S = 10
HOOK_TIMEOUT_S = 10

# tools whose calls the guardian vets before they run: MCP tools too (zen's team tools among them)
# every tool that touches a file or the network: Read, Glob and Grep too (a credential read by the
# Read tool is as much a leak as `cat ~/.ssh/id_rsa`), and WebFetch (its host is judged)
GUARDED_MATCHERS = ("Bash", "Edit|Write|MultiEdit|NotebookEdit", "Read|Glob|Grep|LS|NotebookRead|WebFetch", "mcp__.*")
# zen's own MCP tools run without a permission prompt (zen/agents/teamtools.py; the guardian
# still checks every call)
ALLOWED_TOOLS = ("mcp__zen",)
# Claude Code events that tell zen where a turn stands (StopFailure fires instead of Stop when an
# API error ended the turn; without it such a turn looked like work until Notification's idle
# prompt, a minute later)
TURN_EVENTS = ("Stop", "StopFailure", "Notification", "PermissionRequest", "UserPromptSubmit", "SessionEnd")


def hook_settings(zen_argv: list[str]) -> dict[str, Any]:
    """The settings dict for one job. `zen_argv` is how to call zen (absolute console script)."""
    zen = shlex.join(zen_argv)
    guard = {"type": "command", "command": f"{zen} guard hook", "timeout": GUARD_TIMEOUT_S}
    hooks: dict[str, Any] = {
        "PreToolUse": [{"matcher": m, "hooks": [dict(guard)]} for m in GUARDED_MATCHERS],
    }
    for event in TURN_EVENTS:
        hooks[event] = [{"hooks": [{"type": "command", "command": f"{zen} hook {event}",
                                    "timeout": HOOK_TIMEOUT_S}]}]
    # a project's settings could switch hooks off; the command line layer wins over it
    return {"disableAllHooks": False, "hooks": hooks, "permissions": {"allow": list(ALLOWED_TOOLS)}}


def settings_text(zen_argv: list[str]) -> str:
    return json.dumps(hook_settings(zen_argv), indent=2) + "\n"

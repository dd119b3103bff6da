"""The per-job Claude Code `--settings` file: the one source of truth for zen's hooks.

The claude adapter writes it to jobs/<id>/claude-settings.json and the simulated agent reads that
same file, so the hooks the simulation fires can never drift from the ones Claude Code gets.
Nothing in the worktree or the user's own settings is touched: `--settings` layers above them,
and hook lists merge across layers.
"""

from __future__ import annotations

import json
import os
import shlex
from pathlib import Path
from typing import Any

from zen.agents.wall import SECRET_DIRS
from zen.store.layout import JobPaths

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


def hook_settings(zen_argv: list[str], sandbox: dict[str, Any] | None = None) -> dict[str, Any]:
    """The settings dict for one job. `zen_argv` is how to call zen (absolute console script);
    `sandbox`: the job's OS wall in Claude Code's words (sandbox_settings). With one, the guardian's
    hook grants what it allows at act-and-report and autonomous (`--grant`): the agent then runs it
    without its own prompt, inside the wall."""
    zen = shlex.join(zen_argv)
    grant = " --grant" if sandbox and sandbox.get("enabled") else ""
    guard = {"type": "command", "command": f"{zen} guard hook{grant}", "timeout": GUARD_TIMEOUT_S}
    hooks: dict[str, Any] = {
        "PreToolUse": [{"matcher": m, "hooks": [dict(guard)]} for m in GUARDED_MATCHERS],
    }
    for event in TURN_EVENTS:
        hooks[event] = [{"hooks": [{"type": "command", "command": f"{zen} hook {event}",
                                    "timeout": HOOK_TIMEOUT_S}]}]
    # a project's settings could switch hooks off; the command line layer wins over it
    out: dict[str, Any] = {"disableAllHooks": False, "hooks": hooks, "permissions": {"allow": list(ALLOWED_TOOLS)}}
    if sandbox is not None:
        out["sandbox"] = sandbox
        if not sandbox.get("network", {}).get("allowedDomains"):
            # no host is the lane's: a request to any host is refused without asking (Claude Code
            # asks a human about a host its sandbox does not allow, unless a deny rule names it)
            out["permissions"]["deny"] = ["WebFetch(domain:*)"]
    return out


def sandbox_settings(*, worktree: Path, zen_home: Path, handoff: Path, job_dir: Path,
                     hosts: list[str], git_dir: Path | None = None, user_home: Path | None = None) -> dict[str, Any]:
    """Claude Code's native sandbox (bubblewrap + socat on Linux, Seatbelt on macOS) as the job's
    wall (zen/agents/wall.py): every Bash command inside it, none outside (no unsandboxed retry),
    a start that fails when the sandbox cannot run; writes only in the worktree (its `.git`
    pointer and the lane's git directory not even there); reads of zen's home (the worktree and the handoff excepted) and of the
    user's credential stores denied; the network only to the lane's hosts. Claude Code itself talks
    to the model outside it."""
    home = user_home or Path(os.path.expanduser("~"))
    return {
        "enabled": True,
        "failIfUnavailable": True,
        "allowUnsandboxedCommands": False,
        "autoAllowBashIfSandboxed": False,   # zen's guardian decides, through its hook (--grant)
        "filesystem": {
            "allowWrite": [str(worktree)],
            # the worktree's pointer, and the lane's shared git directory (its refs, config and
            # hooks), which Claude Code's sandbox would otherwise leave writable for git's sake:
            # the agent's commits stay in its worktree and zen's harvest commits them
            "denyWrite": [str(worktree / ".git"), *([str(git_dir)] if git_dir else [])],
            "denyRead": [str(zen_home), *(str(home / d) for d in SECRET_DIRS)],
            "allowRead": [str(worktree), str(handoff), str(JobPaths(job_dir).prompt)],
        },
        "network": {"allowedDomains": list(hosts)},
    }


def settings_text(zen_argv: list[str], sandbox: dict[str, Any] | None = None) -> str:
    return json.dumps(hook_settings(zen_argv, sandbox), indent=2) + "\n"

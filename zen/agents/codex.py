"""Interactive Codex CLI in a tmux pane (reference/real-codex.md has every fact this relies on).

    codex --no-daemon --dangerously-bypass-hook-trust -c features.hooks=true \\
          -c 'hooks.PreToolUse=[{matcher="Bash|apply_patch|Edit|Write", hooks=[... zen guard hook --agent codex]}]' \\
          -c 'hooks.PermissionRequest=[...]' -c 'hooks.Stop=[...]' -c 'hooks.UserPromptSubmit=[...]' \\
          -c 'tui.terminal_title=[]' -c check_for_update_on_startup=false \\
          -c sandbox_workspace_write.exclude_slash_tmp=true \\
          --ask-for-approval on-request --sandbox workspace-write -- "<handoff pointer + prompt>"

- The guardian: Codex's PreToolUse hook runs before its own checks and its approval prompt, for
  every shell call (`tool_name` "Bash", the raw command) and patch. Hooks come from `-c` overrides,
  so the user's ~/.codex/config.toml is never edited; Codex reviews new hooks on a screen before it
  runs them, and `--dangerously-bypass-hook-trust` is how an automation that vets its own hooks
  skips that screen (the flag covers this one invocation only).
- Codex's own sandbox is the job's wall (workspace-write, /tmp excluded: zen gives each job a
  TMPDIR inside its worktree; the lane's shared .git is outside it, read-only), with approvals by
  the job's level (permissions() below): what Codex asks about shows as `waiting (approval)`.
- `--no-daemon`: without it the TUI hands commands and hooks to a background server that an
  earlier job started, with that job's environment (its ZEN_JOB_ID).
- Turns: the Stop hook (Codex's `notify` also fires for the session-title side turn, so it is not
  used), PermissionRequest, UserPromptSubmit; and the state sequence Codex writes into its own
  output, `ESC ] 7501 ; state=working|blocked|done|idle : app=codex BEL`, which the supervisor reads
  before output activity (`output_state`). The window title is switched off: while an approval
  waits it blinks once a second, which would read as output forever.
- Typing: Codex takes keys that arrive in a burst as a paste and swallows an Enter inside it, so
  input goes as one bracketed paste and Enter follows after a pause (`/quit` likewise).

zen.yaml agents.codex may set `approval` (on-request | never), `sandbox` and `command`.
"""

from __future__ import annotations

import json
import re

from zen.agents.base import LaunchContext, LaunchSpec
from zen.agents.common import (
    agent_command,
    agent_env,
    classify,
    first_prompt,
    model_args,
    zen_command,
)
from zen.agents.teamtools import codex_settings
from zen.agents.wall import enabled as wall_enabled
from zen.agents.wall import lane_hosts

_DIALOG = re.compile(r"do you trust the contents of this directory|allow codex to work in this folder"
                     r"|trust this folder\?|folder access\s*\n|hooks need review", re.IGNORECASE)
_APPROVAL = re.compile(r"would you like to run the following command|would you like to make the following edits"
                       r"|allow command\?|no, and tell codex what to do differently"
                       r"|press enter to confirm or esc to cancel", re.IGNORECASE)
# Codex's own state report in its output stream: ESC ] 7501 ; state=<s>[:app=codex][:kind=<k>] BEL|ST
_STATE = re.compile(rb"\x1b\]7501;state=([a-z]+)((?::[a-z_]+=[^:\x07\x1b]*)*)(?:\x07|\x1b\\)")

# tools whose calls the guardian vets: shell calls arrive as "Bash"; apply_patch also matches the
# Edit/Write aliases, listed so a Codex that names it either way is still covered
GUARDED_MATCHER = "Bash|apply_patch|Edit|Write"
TURN_HOOKS = ("PermissionRequest", "Stop", "UserPromptSubmit")
HOOK_TIMEOUT_S = 10     # = zen.guard.hook.AGENT_TIMEOUT_S (tests/guard/test_hook.py checks)


def _hook_group(command: str, matcher: str | None = None) -> str:
    """One hook group as a TOML inline table (a JSON string is a valid TOML basic string)."""
    head = f"matcher={json.dumps(matcher)}, " if matcher else ""
    return (f"[{{{head}hooks=[{{type=\"command\", command={json.dumps(command)}, "
            f"timeout={HOOK_TIMEOUT_S}}}]}}]")


def hook_overrides(ctx: LaunchContext) -> list[str]:
    """The `-c key=value` overrides that register zen's guardian and turn hooks for one job."""
    out = ["features.hooks=true",
           "hooks.PreToolUse=" + _hook_group(zen_command(ctx, "guard", "hook", "--agent", "codex"),
                                             GUARDED_MATCHER)]
    for event in TURN_HOOKS:
        out.append(f"hooks.{event}=" + _hook_group(zen_command(ctx, "hook", event, "--agent", "codex")))
    return out


def output_state(data: bytes) -> tuple[str, str | None] | None:
    """The last state Codex reported in a chunk of its output: ("working", None),
    ("waiting", "approval") for an approval prompt, ("waiting", "idle") for a finished turn
    (`done`), ("idle", None) for its composer with no turn running (at start-up, or after an
    interrupted turn); None when the chunk reports nothing."""
    found = None
    for m in _STATE.finditer(data):
        found = m
    if found is None:
        return None
    state = found.group(1).decode()
    if state == "working":
        return "working", None
    if state == "blocked":
        return "waiting", "approval"
    if state == "done":
        return "waiting", "idle"
    if state == "idle":
        return "idle", None
    return None


def permissions(ctx: LaunchContext) -> tuple[str, str]:
    """(Codex's --sandbox, its --ask-for-approval) for the job's autonomy level (DESIGN 6): the
    read-only sandbox at observe; workspace-write (the worktree; the lane's .git stays read-only)
    with on-request approvals at suggest; and at act-and-report and autonomous, inside the wall,
    approvals `never`: what zen's guardian allows (its hook runs before Codex's own checks) runs
    without a prompt. zen.yaml agents.codex `sandbox` / `approval` override, never above observe's
    read-only, and a lane with `sandbox: off` keeps its approvals on request."""
    if ctx.level == "observe":
        return "read-only", "on-request"
    walled = ctx.wall and wall_enabled(ctx.lane)
    default = "never" if walled and ctx.level in ("act-and-report", "autonomous") else "on-request"
    return (str(ctx.settings.get("sandbox") or "workspace-write"), str(ctx.settings.get("approval") or default))


class CodexAdapter:
    name = "codex"
    guarded = True                  # every shell and patch call goes through zen's guardian
    turn_hooks = True               # each turn's end is reported by its Stop hook and notify
    paste_input = True              # typed text goes as one bracketed paste
    key_pause_s = 0.1               # then a pause before Enter (and between exit keys)

    def __init__(self) -> None:
        # a new list per adapter: callers may not mutate a shared default
        self.exit_keys: list[str] | None = ["/quit", "Enter"]

    def launch(self, ctx: LaunchContext) -> LaunchSpec:
        overrides = [*hook_overrides(ctx), "tui.terminal_title=[]", "check_for_update_on_startup=false",
                     "sandbox_workspace_write.exclude_slash_tmp=true",
                     *codex_settings(ctx)]   # zen's team tools (zen mcp serve) as an MCP server
        argv = [*agent_command(ctx, "codex"), "--no-daemon", "--dangerously-bypass-hook-trust"]
        for item in overrides:
            argv += ["-c", item]
        argv += [*ctx.extra_args]    # zen's own: its telemetry exporter (zen/observe/telemetry.py)
        sandbox, approval = permissions(ctx)
        if sandbox == "workspace-write" and lane_hosts(ctx.lane):
            # Codex's sandbox has no host list: a lane that names hosts lets its commands out
            argv += ["-c", "sandbox_workspace_write.network_access=true"]
        argv += [
            "--ask-for-approval", approval,
            "--sandbox", sandbox,
            *model_args(ctx),
            "--",
            first_prompt(ctx),
        ]
        return LaunchSpec(argv=argv, env=agent_env(ctx))

    def classify_screen(self, screen: str) -> str | None:
        return classify(screen, _DIALOG, _APPROVAL)

    def output_state(self, data: bytes) -> tuple[str, str | None] | None:
        return output_state(data)

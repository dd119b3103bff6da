"""Interactive Gemini CLI in a tmux pane.

    GEMINI_CLI_HOME=<job>/gemini-home gemini --approval-mode default --skip-trust

and the prompt typed once Gemini waits at its input box: `-i "<prompt>"` was not submitted in
about half of the starts seen under zen (Gemini CLI 0.61.0), typing it always is.

- Hooks: Gemini CLI reads hooks from its settings; a system settings file must be owned by root
  in root-owned folders, and the worktree's own `.gemini/settings.json` belongs to the project. So
  each job gets a Gemini home of its own (GEMINI_CLI_HOME): its `.gemini/settings.json` is the
  user's, with zen's hooks added, and every other entry of the user's ~/.gemini (credentials,
  trusted folders, extensions, chats) is a link to the user's own. Nothing the user has is edited.
- The guardian: BeforeTool for run_shell_command, write_file and replace, answered by
  `zen guard hook --agent gemini` (exit 2 blocks; Gemini tells the model "Tool execution
  blocked: <reason>"). Turns: AfterAgent (as Stop), BeforeAgent (as UserPromptSubmit),
  Notification ToolPermission (an approval prompt), SessionEnd.
- Trust: Gemini runs no hooks in a folder it does not trust, so the guardian would be silent
  there. A lane trusted with `zen lane trust` starts with `--skip-trust`; any other without it:
  Gemini shows its trust screen (the job waits, reason dialog), and the prompt is typed only
  once a human has answered it (never into the dialog).

zen.yaml agents.gemini may set `approval_mode` and `command`.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

from zen.agents.base import LaunchContext, LaunchSpec
from zen.agents.common import (
    agent_command,
    agent_env,
    classify,
    first_prompt,
    model_args,
    zen_command,
)
from zen.agents.gemini_trust import gemini_dir
from zen.agents.gemini_trust import is_trusted as gemini_trusts
from zen.errors import ZenError
from zen.store.layout import GEMINI_HOME as HOME_DIR

GUARDED_MATCHER = "run_shell_command|write_file|replace"
# Gemini event -> the `zen hook` event it stands for
TURN_EVENTS = {"BeforeAgent": "UserPromptSubmit", "AfterAgent": "Stop", "Notification": "Notification",
               "SessionEnd": "SessionEnd"}
HOOK_TIMEOUT_MS = 10000   # Gemini hook timeouts are in milliseconds (= zen.guard.hook.AGENT_TIMEOUT_S)

_DIALOG = re.compile(r"do you trust the files in this folder|do you trust this folder|trust folder \(",
                     re.IGNORECASE)
_APPROVAL = re.compile(r"waiting for user confirmation|allow execution of|apply this change|yes, allow once"
                       r"|do you want to proceed|allow once", re.IGNORECASE)
_INPUT_BOX = re.compile(r"Type your message")
_COMMENT = re.compile(r'"(?:[^"\\]|\\.)*"|//[^\n]*|/\*.*?\*/', re.DOTALL)


def strip_comments(text: str) -> str:
    """JSON with comments (Gemini's settings allow them) as plain JSON; strings are kept."""
    return _COMMENT.sub(lambda m: m.group(0) if m.group(0).startswith('"') else "", text)


def user_settings(src: Path) -> dict[str, Any]:
    path = src / "settings.json"
    try:
        text = path.read_text()
    except FileNotFoundError:
        return {}
    try:
        data = json.loads(strip_comments(text)) if text.strip() else {}
    except ValueError as exc:
        raise ZenError(f"cannot read {path} ({exc}); zen adds its hooks to a copy of it") from None
    if not isinstance(data, dict):
        raise ZenError(f"{path} does not hold a JSON object")
    return data


def job_settings(ctx: LaunchContext, base: dict[str, Any]) -> dict[str, Any]:
    """The user's settings with zen's guardian and turn hooks added (theirs kept, ours last).
    Inside zen's wall both reach zen through the resident guardian's socket zen binds in (zen's
    home is not in there): the guardian decides, and records the turn signals for the hook."""
    settings: dict[str, Any] = json.loads(json.dumps(base))
    hooks: dict[str, Any] = settings["hooks"] if isinstance(settings.get("hooks"), dict) else {}
    # Gemini CLI blocks a tool only on exit 2 and goes on after any other failure of a hook (one
    # that cannot even start exits 127): every failure is a block here, so the hook never fails open
    guard = zen_command(ctx, "guard", "hook", "--agent", "gemini") + " || exit 2"
    ours: dict[str, list[dict[str, Any]]] = {"BeforeTool": [{"matcher": GUARDED_MATCHER, "hooks": [
        {"type": "command", "command": guard, "timeout": HOOK_TIMEOUT_MS}]}]}
    for event, zen_event in TURN_EVENTS.items():
        ours[event] = [{"hooks": [{"type": "command", "command": zen_command(ctx, "hook", zen_event, "--agent", "gemini"),
                                   "timeout": HOOK_TIMEOUT_MS}]}]
    for event, groups in ours.items():
        existing: list[Any] = hooks[event] if isinstance(hooks.get(event), list) else []
        hooks[event] = [*existing, *groups]
    settings["hooks"] = hooks
    cfg: dict[str, Any] = settings["hooksConfig"] if isinstance(settings.get("hooksConfig"), dict) else {}
    mine = {guard, *(g["hooks"][0]["command"] for gs in ours.values() for g in gs)}
    cfg["enabled"] = True
    cfg["disabled"] = [d for d in cfg.get("disabled") or [] if d not in mine]
    settings["hooksConfig"] = cfg
    return settings


def walled(ctx: LaunchContext) -> bool:
    """Whether this job's Gemini CLI runs inside zen's bubblewrap (the lane keeps the wall)."""
    return ctx.wall


def link_user_home(src: Path, dst: Path) -> None:
    """Every entry of the user's ~/.gemini but settings.json, linked into the job's Gemini home."""
    dst.mkdir(parents=True, exist_ok=True)
    if not src.is_dir():
        return
    for entry in src.iterdir():
        if entry.name == "settings.json":
            continue
        link = dst / entry.name
        if link.is_symlink() or link.exists() or entry.name.endswith(".zen-lock"):
            continue
        os.symlink(entry, link)


def lane_trusted(ctx: LaunchContext) -> bool:
    return ctx.repo is not None and gemini_trusts(ctx.repo)


class GeminiAdapter:
    name = "gemini"
    guarded = True
    turn_hooks = True               # each turn's end is reported by its AfterAgent hook
    key_pause_s = 0.5               # Enter sooner after a paste is lost now and then (0.61.0)

    def __init__(self) -> None:
        # a new list per adapter: callers may not mutate a shared default
        self.exit_keys: list[str] | None = ["/quit", "Enter"]

    def launch(self, ctx: LaunchContext) -> LaunchSpec:
        home = ctx.job_dir / HOME_DIR
        src = gemini_dir()
        settings = job_settings(ctx, user_settings(src))
        link_user_home(src, home / ".gemini")
        argv = [*agent_command(ctx, "gemini"),
                "--approval-mode", str(ctx.settings.get("approval_mode") or "default"), *model_args(ctx)]
        if lane_trusted(ctx):
            argv.append("--skip-trust")
        # CI=0: Gemini CLI takes a CI or CI_* variable (set by every CI runner) to mean "no terminal"
        # and exits 42 waiting for piped input; under zen it always has a real terminal (tmux)
        env = {"GEMINI_CLI_HOME": str(home), "CI": "0", **agent_env(ctx)}
        settings_file = home / ".gemini" / "settings.json"
        files = {settings_file: json.dumps(settings, indent=2) + "\n"}
        if not walled(ctx):
            return LaunchSpec(argv=argv, env=env, files=files, initial_input=first_prompt(ctx))
        # inside the wall: its home read-write but the settings zen wrote (its hooks), and the
        # user's ~/.gemini its links point into (its login) read-only
        return LaunchSpec(argv=argv, env=env, files=files, initial_input=first_prompt(ctx),
                          wall_writable=(home,), wall_read_only=(settings_file, src))

    def classify_screen(self, screen: str) -> str | None:
        return classify(screen, _DIALOG, _APPROVAL)

    def input_ready(self, screen: str) -> bool:
        """Gemini has drawn its input box (it starts slowly, silent for seconds)."""
        return bool(_INPUT_BOX.search(screen)) and self.classify_screen(screen) is None

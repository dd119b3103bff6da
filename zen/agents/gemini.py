"""Interactive Gemini CLI in a tmux pane: `gemini --approval-mode default -i "<prompt>"`.

`-i` (--prompt-interactive) runs the prompt and stays interactive. Turn hooks come from a per-job
settings file given through GEMINI_CLI_SYSTEM_SETTINGS_PATH, so neither the worktree's
.gemini/settings.json nor the user's is edited. Gemini's events reach `zen hook` under the names of
their Claude Code equivalents, whose payload fields they share where it matters: AfterAgent (turn
done) as Stop, BeforeAgent (turn started) as UserPromptSubmit, Notification, SessionEnd. [UNCERTAIN per Gemini version: hooks
may need enabling, and that variable replaces a machine-wide system settings file if one exists.]
zen's guardian is not registered: its hook speaks Claude's payloads, not Gemini's BeforeTool.
"""

from __future__ import annotations

import json
import re
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

SETTINGS_FILE = "gemini-settings.json"
# Gemini event -> the `zen hook` event it stands for
TURN_EVENTS = {"BeforeAgent": "UserPromptSubmit", "AfterAgent": "Stop", "Notification": "Notification",
               "SessionEnd": "SessionEnd"}

_DIALOG = re.compile(r"do you trust this folder|trust folder", re.IGNORECASE)
_APPROVAL = re.compile(r"waiting for user confirmation|allow execution|apply this change|yes, allow once"
                       r"|do you want to proceed", re.IGNORECASE)


def gemini_settings(ctx: LaunchContext) -> dict[str, Any]:
    hooks = {event: [{"hooks": [{"type": "command", "command": zen_command(ctx, "hook", zen_event),
                                 "timeout": 10000}]}]  # Gemini hook timeouts are in milliseconds
             for event, zen_event in TURN_EVENTS.items()}
    return {"hooks": hooks}


class GeminiAdapter:
    name = "gemini"

    def __init__(self) -> None:
        # a new list per adapter: callers may not mutate a shared default
        self.exit_keys: list[str] | None = ["/quit", "Enter"]

    def launch(self, ctx: LaunchContext) -> LaunchSpec:
        settings = ctx.job_dir / SETTINGS_FILE
        argv = [
            *agent_command(ctx, "gemini"),
            "--approval-mode", str(ctx.settings.get("approval_mode") or "default"),
            *model_args(ctx),
            "-i", first_prompt(ctx),
        ]
        env = {"GEMINI_CLI_SYSTEM_SETTINGS_PATH": str(settings), **agent_env(ctx)}
        return LaunchSpec(argv=argv, env=env,
                          files={settings: json.dumps(gemini_settings(ctx), indent=2) + "\n"})

    def classify_screen(self, screen: str) -> str | None:
        return classify(screen, _DIALOG, _APPROVAL)

"""Interactive Codex CLI in a tmux pane.

    codex -c 'notify=["<zen>","hook","codex-notify"]' --ask-for-approval on-request \\
          --sandbox workspace-write -- "<handoff pointer + prompt>"

Codex runs its `notify` program after every turn with one extra argument, a JSON object of type
`agent-turn-complete` (reference/agents.md 2.4); `zen hook codex-notify` turns that into a turn
event. Notify says nothing about approvals, so those are read off the screen. Codex's own hooks
need per-hook trust, so zen's guardian is not registered here (the sandbox and on-request
approvals are the safety net); settings `approval` and `sandbox` in zen.yaml agents.codex change them.
"""

from __future__ import annotations

import json
import re

from zen.agents.base import LaunchContext, LaunchSpec
from zen.agents.common import agent_command, agent_env, classify, first_prompt, model_args

_DIALOG = re.compile(r"do you trust the contents of this directory|allow codex to work in this folder"
                     r"|hooks need review", re.IGNORECASE)
_APPROVAL = re.compile(r"would you like to run the following command|would you like to make the following edits"
                       r"|allow command\?|no, and tell codex what to do differently"
                       r"|press enter to confirm or esc to cancel", re.IGNORECASE)


def notify_argv(zen_argv: list[str]) -> list[str]:
    return [*zen_argv, "hook", "codex-notify"]


class CodexAdapter:
    name = "codex"

    def __init__(self) -> None:
        # a new list per adapter: callers may not mutate a shared default
        self.exit_keys: list[str] | None = ["/quit", "Enter"]

    def launch(self, ctx: LaunchContext) -> LaunchSpec:
        # -c takes a TOML value; a JSON array of strings is valid TOML
        notify = "notify=" + json.dumps(notify_argv(ctx.zen_argv))
        argv = [
            *agent_command(ctx, "codex"),
            "-c", notify,
            "--ask-for-approval", str(ctx.settings.get("approval") or "on-request"),
            "--sandbox", str(ctx.settings.get("sandbox") or "workspace-write"),
            *model_args(ctx),
            "--",
            first_prompt(ctx),
        ]
        return LaunchSpec(argv=argv, env=agent_env(ctx))

    def classify_screen(self, screen: str) -> str | None:
        return classify(screen, _DIALOG, _APPROVAL)

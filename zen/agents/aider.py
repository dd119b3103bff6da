"""Interactive aider in a tmux pane.

    aider --notifications --notifications-command "<zen> hook aider-notify" --no-check-update \\
          --no-show-release-notes --no-auto-commits

aider has no flag that takes a first prompt and stays interactive (`--message` answers once and
exits, so `zen send` could never follow up). So the prompt travels as LaunchSpec.initial_input:
the supervisor types it into the pane once aider first waits for input, like a person would.
`--notifications-command` runs when aider has answered and waits (no arguments, no stdin), which
is its only turn signal; there is no tool hook, so the guardian cannot vet aider's commands.
`--no-auto-commits` leaves the agent's edits in the worktree for harvest to snapshot; set
`auto_commits: true` in zen.yaml agents.aider to let aider commit each change itself.
"""

from __future__ import annotations

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

_QUESTION = re.compile(r"\(Y\)es/\(N\)o|\[Yes\]:\s*$|\(D\)on't ask again", re.IGNORECASE)
_DIALOG = re.compile(r"open documentation url for more info", re.IGNORECASE)


class AiderAdapter:
    name = "aider"

    def __init__(self) -> None:
        # a new list per adapter: callers may not mutate a shared default
        self.exit_keys: list[str] | None = ["/exit", "Enter"]

    def launch(self, ctx: LaunchContext) -> LaunchSpec:
        argv = [
            *agent_command(ctx, "aider"),
            "--notifications",
            "--notifications-command", zen_command(ctx, "hook", "aider-notify"),
            "--no-check-update",
            "--no-show-release-notes",
            *model_args(ctx),
        ]
        if not ctx.settings.get("auto_commits"):
            argv.append("--no-auto-commits")
        return LaunchSpec(argv=argv, env=agent_env(ctx), initial_input=first_prompt(ctx))

    def classify_screen(self, screen: str) -> str | None:
        return classify(screen, _DIALOG, _QUESTION, lines=10)

"""Interactive aider in a tmux pane.

    aider --notifications --notifications-command "<zen> hook aider-notify --agent aider" \\
          --no-suggest-shell-commands --no-auto-commits --no-gitignore --no-check-update \\
          --no-show-release-notes --no-show-model-warnings --no-analytics \\
          --analytics-log <worktree>/.zen-tmp/aider-analytics.jsonl \\
          --chat-history-file <worktree>/.zen-tmp/aider.chat.history.md \\
          --input-history-file <worktree>/.zen-tmp/aider.input.history

- Aider has no pre-execution hook: zen's guardian never sees what it does. It edits files itself,
  and it would offer to run the shell commands its model suggests. So it is an *unguarded* agent
  (zen/agents/unguarded.py): shell commands are off (`--no-suggest-shell-commands`) unless the
  lane says `unguarded_shell: true`, and it starts only on a lane that accepts unguarded agents
  (or inside zen's sandbox).
- Turns: `--notifications-command` runs when aider has answered and waits for input (no
  arguments, no stdin): `zen hook aider-notify`, which also records usage from aider's analytics
  log (each `message_send`: the prompt and completion tokens of its token report, and its cost).
  Screen reading adds aider's (Y)es/(N)o confirmations as approvals.
- aider takes no first prompt and stays interactive (`--message` answers once and exits), so the
  prompt travels as LaunchSpec.initial_input, typed once aider shows its input prompt.
- Its own files (chat and input history, the analytics log) go to the worktree's `.zen-tmp/`,
  which git ignores, so they never reach the review branch. `--no-auto-commits` leaves its edits
  for harvest; zen.yaml agents.aider `auto_commits: true` lets aider commit, `yes_always: true`
  answers its confirmations (never a shell command: those stay off unless the lane opts in, and
  then `yes_always` is refused).
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
from zen.errors import ZenError
from zen.store.layout import AIDER_ANALYTICS as ANALYTICS_LOG
from zen.store.layout import WORKTREE_TMP

_QUESTION = re.compile(r"\(Y\)es/\(N\)o|\[Yes\]:\s*$|\(D\)on't ask again", re.IGNORECASE)
_DIALOG = re.compile(r"open documentation url for more info", re.IGNORECASE)
_PROMPT = re.compile(r"^[\w.-]*> ?$")


def analytics_log(ctx: LaunchContext) -> str:
    return str(ctx.worktree / WORKTREE_TMP / ANALYTICS_LOG)


def shell_allowed(ctx: LaunchContext) -> bool:
    """The lane opted in to the shell commands of agents without a pre-execution hook."""
    return bool(ctx.lane.get("unguarded_shell")) if ctx.lane else False


class AiderAdapter:
    name = "aider"
    guarded = False                 # no pre-execution hook: see zen/agents/unguarded.py
    turn_hooks = True               # each turn's end is reported by its --notifications-command
    key_pause_s = 0.1

    def __init__(self) -> None:
        # a new list per adapter: callers may not mutate a shared default
        self.exit_keys: list[str] | None = ["/exit", "Enter"]

    def launch(self, ctx: LaunchContext) -> LaunchSpec:
        tmp = ctx.worktree / WORKTREE_TMP
        shell = shell_allowed(ctx)
        if shell and ctx.settings.get("yes_always"):
            raise ZenError("agents.aider yes_always would run every shell command aider suggests, and this "
                           "lane allows them (unguarded_shell): drop one of the two")
        argv = [
            *agent_command(ctx, "aider"),
            "--notifications",
            "--notifications-command", zen_command(ctx, "hook", "aider-notify", "--agent", "aider",
                                                   "--usage-file", analytics_log(ctx)),
            "--suggest-shell-commands" if shell else "--no-suggest-shell-commands",
            "--no-gitignore", "--no-check-update", "--no-show-release-notes", "--no-show-model-warnings",
            "--no-analytics", "--analytics-log", analytics_log(ctx),
            "--chat-history-file", str(tmp / "aider.chat.history.md"),
            "--input-history-file", str(tmp / "aider.input.history"),
            *model_args(ctx),
        ]
        if not ctx.settings.get("auto_commits"):
            argv.append("--no-auto-commits")
        if ctx.settings.get("yes_always"):
            argv.append("--yes-always")
        return LaunchSpec(argv=argv, env=agent_env(ctx), initial_input=first_prompt(ctx))

    def classify_screen(self, screen: str) -> str | None:
        return classify(screen, _DIALOG, _QUESTION, lines=10)

    def input_ready(self, screen: str) -> bool:
        """aider shows its input prompt (`> `, or `<mode>> `) on the last line."""
        lines = [ln.rstrip() for ln in screen.splitlines() if ln.strip()]
        return bool(lines) and bool(_PROMPT.match(lines[-1].strip() + " ")) and self.classify_screen(screen) is None

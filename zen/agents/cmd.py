"""Any command as an agent: argv = task.command, cwd = the worktree, the prompt in $ZEN_PROMPT.

The supervisor sets ZEN_PROMPT (for a prompt up to 4 KiB; any prompt is in the file
$ZEN_PROMPT_FILE), ZEN_HANDOFF, ZEN_HOME, ZEN_JOB_ID, ZEN_WORKTREE and TMPDIR for every agent, so this adapter adds nothing of its own. There is no hook: turns are told by output
activity, and a quiet screen whose last line asks something reads as a question.
"""

from __future__ import annotations

from zen.agents.base import LaunchContext, LaunchSpec
from zen.agents.common import agent_env, generic_question
from zen.errors import ZenError


class CmdAdapter:
    name = "cmd"
    exit_keys: list[str] | None = None  # no known exit command: TERM
    guarded = False                     # no hook: unguarded, the command a human chose

    def launch(self, ctx: LaunchContext) -> LaunchSpec:
        if not ctx.task.command:
            raise ZenError(f"job {ctx.job_id} uses agent 'cmd' but gives no command (--cmd \"ARGV\")")
        return LaunchSpec(argv=list(ctx.task.command), env=agent_env(ctx))

    def classify_screen(self, screen: str) -> str | None:
        return generic_question(screen)

"""The simulated agent as an adapter: runs zen.agents.simagent with the job's script and the very
settings file the claude adapter writes, so it exercises the same hook path Claude Code would."""

from __future__ import annotations

import json
import sys

from zen.agents.base import LaunchContext, LaunchSpec
from zen.agents.claude import classify_claude_screen
from zen.agents.common import agent_env, generic_question, job_sandbox, session_uuid
from zen.agents.settings import settings_text
from zen.agents.simagent import default_script
from zen.agents.teamtools import config_text
from zen.store.layout import JobPaths


class SimAdapter:
    name = "sim"
    guarded = True                  # its PreToolUse hook is zen's guardian (settings.py)
    turn_hooks = True               # each turn's end is reported by its Stop hook

    def __init__(self) -> None:
        # a new list per adapter: callers may not mutate a shared default
        self.exit_keys: list[str] | None = ["/exit", "Enter"]

    def launch(self, ctx: LaunchContext) -> LaunchSpec:
        paths = JobPaths(ctx.job_dir)
        settings, script, mcp_config = paths.claude_settings, paths.sim_script, paths.mcp_config
        steps = ctx.task.script if ctx.task.script is not None else default_script(ctx.task.prompt)
        # the interpreter running zen has zen importable; `-m` keeps the path free of guesses
        argv = [sys.executable, "-P", "-m", "zen.agents.simagent", "--settings", str(settings),
                "--script", str(script), "--session-id", session_uuid(ctx.job_id),
                "--mcp-config", str(mcp_config)]
        return LaunchSpec(
            argv=argv,
            env={"PYTHONUNBUFFERED": "1", **agent_env(ctx)},
            files={settings: settings_text(ctx.zen_argv, job_sandbox(ctx)),
                   script: json.dumps(steps, indent=2, ensure_ascii=False) + "\n",
                   mcp_config: config_text(ctx)},
        )

    def classify_screen(self, screen: str) -> str | None:
        # the sim prints Claude's permission dialog text, so Claude's patterns read it; its `ask`
        # step leaves the question as the last line
        return classify_claude_screen(screen) or generic_question(screen)

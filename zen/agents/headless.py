"""One turn of an agent without a terminal, for turns that run on a Ray worker (DESIGN 14).

    claude -p --output-format stream-json --verbose --settings <job>/claude-settings.json \\
           --permission-mode acceptEdits --session-id <uuid> -- "<prompt>"        (turn 1)
    claude -p ... --resume <uuid> -- "<what zen send sent>"                       (turn 2, 3, ...)
    codex exec --json -c hooks.PreToolUse=[...] ... --sandbox workspace-write -- "<prompt>"     (turn 1)
    codex exec resume --last --json ... -- "<what zen send sent>"                 (turn 2, 3, ...)
    sim, cmd: exactly what the interactive adapter starts (they need no terminal)

The settings file, hooks and guardian are the interactive adapter's own (`adapter.launch`), so a
remote turn is guarded exactly as a local one. The session id comes from the job id, so every
turn of a job resumes the same Claude session.
"""

from __future__ import annotations

from dataclasses import replace

from zen.agents import get_adapter
from zen.agents.base import LaunchContext, LaunchSpec
from zen.agents.codex import hook_overrides
from zen.agents.common import agent_command, first_prompt, session_uuid
from zen.store.layout import CLAUDE_SETTINGS

# agents whose session outlives one headless turn: after a turn they wait for the next input
RESUMABLE = frozenset({"claude", "codex"})


def resumable(agent: str, script: list[dict[str, object]] | None = None) -> bool:
    """Whether a turn of `agent` ends with the job waiting for input rather than exited. The sim
    waits when its script ends at the prompt (a `wait` step), as Claude Code would."""
    if agent in RESUMABLE:
        return True
    return agent == "sim" and bool(script) and any("wait" in step for step in script or [])


def launch(ctx: LaunchContext, prompt: str, *, turn: int) -> LaunchSpec:
    """What to run for turn `turn` (1 = the first) of the job, with `prompt` as its input."""
    agent = ctx.task.agent.value
    if agent == "claude":
        return _claude(ctx, prompt, turn)
    if agent == "codex":
        return _codex(ctx, prompt, turn)
    if agent == "sim" and turn > 1:
        # the sim's next turn does what it does with a fresh prompt: notes it and commits
        ctx = replace(ctx, task=ctx.task.model_copy(update={"prompt": prompt, "script": None}))
    return get_adapter(agent).launch(ctx)


def _claude(ctx: LaunchContext, prompt: str, turn: int) -> LaunchSpec:
    spec = get_adapter("claude").launch(ctx)        # the settings file with zen's hooks
    settings = ctx.job_dir / CLAUDE_SETTINGS
    text = first_prompt(ctx) if turn == 1 else prompt
    argv = [
        *agent_command(ctx, "claude"), "-p", "--output-format", "stream-json", "--verbose",
        "--settings", str(settings),
        "--permission-mode", str(ctx.settings.get("permission_mode") or "acceptEdits"),
        "--resume" if turn > 1 else "--session-id", session_uuid(ctx.job_id),
        "--", text,
    ]
    return LaunchSpec(argv=argv, env=spec.env, files=spec.files)


def _codex(ctx: LaunchContext, prompt: str, turn: int) -> LaunchSpec:
    spec = get_adapter("codex").launch(ctx)
    head = [*agent_command(ctx, "codex"), "exec", *(["resume", "--last"] if turn > 1 else [])]
    overrides = [x for item in hook_overrides(ctx) for x in ("-c", item)]  # the interactive job's hooks
    argv = [*head, "--json", *overrides,
            "--sandbox", str(ctx.settings.get("sandbox") or "workspace-write"),
            "--", first_prompt(ctx) if turn == 1 else prompt]
    return LaunchSpec(argv=argv, env=spec.env, files=spec.files)


__all__ = ["RESUMABLE", "launch", "resumable"]

"""What several adapters share: the first prompt, the agent command from zen.yaml, its env."""

from __future__ import annotations

import re
import shlex
import sys
import uuid
from pathlib import Path
from typing import Any

from zen.adapters.git_probe import common_dir
from zen.adapters.sandbox import run_dir_for
from zen.agents.base import LaunchContext
from zen.agents.settings import sandbox_settings
from zen.agents.wall import enabled as wall_enabled
from zen.agents.wall import lane_hosts

# Fixed namespace so a job id always maps to the same Claude session id (restarts, transcripts).
_SESSION_NS = uuid.UUID("6f1e3c52-7a1b-4c55-9b0e-2d7f0a9c4e11")


def session_uuid(job_id: str) -> str:
    return str(uuid.uuid5(_SESSION_NS, job_id))


# Longest prompt passed on the agent's command line (or in $ZEN_PROMPT). A longer one reaches the
# agent only through files: the handoff (its Task section) and jobs/<id>/prompt.txt
# ($ZEN_PROMPT_FILE). The command line goes through tmux, which refuses commands over ~16 KiB,
# and the kernel refuses any one argument over 128 KiB (issue 15).
INLINE_PROMPT_MAX = 4096


def inline(prompt: str) -> bool:
    return len(prompt.encode()) <= INLINE_PROMPT_MAX


def first_prompt(ctx: LaunchContext) -> str:
    """The task prompt preceded by a pointer to handoff.md (zen's orientation notes for the job);
    for a long prompt, the pointer alone: the handoff holds the prompt in full."""
    prompt = ctx.task.prompt.rstrip()
    if inline(prompt):
        return f"Read {ctx.handoff} first: it is zen's orientation for this job.\n\n{prompt}\n"
    return (f"Read {ctx.handoff} first, all of it: it is zen's orientation for this job, and its Task section "
            f"holds your task in full ({len(prompt)} characters, too long to give here). Then do that task.\n")


def agent_command(ctx: LaunchContext, default: str) -> list[str]:
    """zen.yaml agents.<name>.command (a string split like a shell, or a list), else `default`."""
    cmd: Any = ctx.settings.get("command") or default
    if isinstance(cmd, str):
        return shlex.split(cmd)
    return [str(part) for part in cmd]


def agent_env(ctx: LaunchContext) -> dict[str, str]:
    """zen.yaml agents.<name>.env: variables added for this agent (drop_env is the supervisor's)."""
    return settings_env(ctx.settings)


def settings_env(settings: dict[str, Any]) -> dict[str, str]:
    """The `env` of an agents.<name> entry of zen.yaml as strings: the one reading of it."""
    env = settings.get("env") or {}
    return {str(k): str(v) for k, v in dict(env).items()}


def model_args(ctx: LaunchContext, flag: str = "--model") -> list[str]:
    """The task's `model` (task field, or `config.model` over the API) as the agent's flag."""
    return [flag, ctx.task.model] if ctx.task.model else []


def zen_argv() -> list[str]:
    """How an agent's hooks call this very zen: the console script next to this interpreter, or
    the interpreter with -P, so a `zen/` folder in the agent's worktree (zen's own repository, or
    one an agent writes) is never what runs."""
    script = Path(sys.executable).parent / "zen"
    if script.exists():
        return [str(script)]
    return [sys.executable, "-P", "-m", "zen"]


def zen_command(ctx: LaunchContext, *args: str) -> str:
    """A shell command line calling zen itself, e.g. `/venv/bin/zen hook Stop`."""
    return shlex.join([*ctx.zen_argv, *args])


def classify(screen: str, dialog: re.Pattern[str], waiting: re.Pattern[str], *, lines: int = 30,
             waiting_reason: str = "approval") -> str | None:
    """'dialog' when the last `lines` of the screen match `dialog`, `waiting_reason` when they
    match `waiting`, else None: the shape of every TUI agent's screen reading."""
    tail = last_lines(screen, lines)
    if dialog.search(tail):
        return "dialog"
    if waiting.search(tail):
        return waiting_reason
    return None


def last_lines(screen: str, n: int = 30) -> str:
    lines = [ln.rstrip() for ln in screen.splitlines()]
    while lines and not lines[-1]:
        lines.pop()
    return "\n".join(lines[-n:])


_YES_NO = re.compile(r"(\[y/n\]|\(y/n\)|\[yes/no\]|\(yes/no\))\s*:?\s*$", re.IGNORECASE)


def generic_question(screen: str) -> str | None:
    """'question' when the last visible line asks something ("...?" or a [y/n] prompt).

    Only consulted once output has gone quiet, so a line ending in '?' mid-run costs nothing.
    """
    tail = last_lines(screen, 1).strip()
    if not tail:
        return None
    if _YES_NO.search(tail) or tail.endswith("?") or tail.endswith("? "):
        return "question"
    return None


def job_sandbox(ctx: LaunchContext) -> dict[str, Any] | None:
    """The job's wall in Claude Code's settings (Claude and the simulated agent read the same file),
    or None on a lane that turned the wall off."""
    if not ctx.wall or not wall_enabled(ctx.lane):
        return None
    sandbox = sandbox_settings(worktree=ctx.worktree, zen_home=ctx.home, handoff=ctx.handoff, job_dir=ctx.job_dir,
                               hosts=lane_hosts(ctx.lane),
                               # from the lane's checkout (zen.yaml's), not the worktree's pointer
                               git_dir=common_dir(ctx.repo or ctx.worktree))
    sandbox["filesystem"]["allowWrite"].append(str(sandbox_tmp(ctx)))
    return sandbox


def sandbox_tmp(ctx: LaunchContext) -> Path:
    """The job's $TMPDIR inside Claude Code's sandbox, which makes its bridge sockets there: a
    worktree's own is too long a path for a unix socket, so a short private one, writable inside."""
    return run_dir_for(f"{ctx.job_dir}/claude-tmp")

"""What `zen dispatch` does once its arguments are parsed: shared by the typer command
(zen/cli/dispatch.py) and the typer-free entry (zen/cli/fast.py), so both behave alike."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

from zen.agents import UNGUARDED
from zen.cli import render
from zen.core.agents import AgentKind
from zen.core.durations import parse_duration
from zen.errors import InvalidTask
from zen.orchestration.intake.enqueue import enqueue_or_prepare
from zen.store.layout import Home

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

AGENTS = ", ".join(a.value for a in AgentKind)
SIM_NOTE = ("zen: no --agent given, so the simulated agent `sim` runs this task (a stand-in with no model "
            "behind it); pass --agent claude, codex, aider, gemini or cmd, or set defaults.agent in zen.yaml")
# the options, as both entries spell them: --flag -> field
OPTIONS = {"--name": "name", "--lane": "lane", "--repo": "repo", "--agent": "agent", "--cmd": "cmd",
           "--priority": "priority", "--depends-on": "depends_on", "--timeout": "timeout", "--retries": "retries",
           "--domain": "domain", "--base": "base", "--file": "task_file"}


def _dispatched(task: Any) -> Iterator[render.Out]:
    yield task.id


def _check(agent: str | None, timeout: str | None, retries: int | None) -> None:
    if retries is not None and retries < 0:
        raise InvalidTask("--retries must be 0 or more")
    if agent is not None and agent not in {a.value for a in AgentKind}:
        raise InvalidTask(f"unknown agent {agent!r} ({AGENTS})")
    if timeout is not None:
        try:
            if parse_duration(timeout) <= 0:
                raise ValueError("the timeout must be positive")
        except ValueError as exc:
            raise InvalidTask(f"--timeout: {exc}") from None


def submit(home: Home, prompt: str | None, *, name: str | None = None, lane: str | None = None,
           repo: str | None = None, agent: str | None = None, cmd: str | None = None, priority: str | None = None,
           depends_on: list[str] | None = None, timeout: str | None = None, retries: int | None = None,
           domain: str | None = None, base: str | None = None, task_file: Path | None = None,
           json_out: bool = False) -> int:
    """Queue a task for the supervisor: validated first, then written to the spool atomically."""
    text = sys.stdin.read() if prompt == "-" else prompt
    if text is None and task_file is None:
        raise InvalidTask("the prompt is empty (give the task as text, or - to read it from stdin)")
    if cmd is not None and agent is None:
        agent = "cmd"
    _check(agent, timeout, retries)
    fields = {
        "prompt": text, "name": name, "lane": lane, "repo": repo, "agent": agent,
        "command": cmd, "priority": priority, "depends_on": list(depends_on or []), "timeout": timeout,
        "max_retries": retries, "domain": domain, "base": base,
    }
    quick, prepared = enqueue_or_prepare(home, fields) if task_file is None and not json_out else (None, None)
    if quick is not None:
        render.say(quick["id"])
        kind = quick["agent"]
    else:
        # here: the model's lane (a task file, dependencies, --json, anything the quick check
        # leaves to the model) costs pydantic and ruamel, which the usual dispatch never loads
        from zen.orchestration.intake.dispatch import dispatch

        task = dispatch(home, fields, task_file, prepared=prepared)
        render.emit(task, json_out, _dispatched)
        kind = task.agent.value
    if agent is None and task_file is None and kind == AgentKind.sim:
        render.note(SIM_NOTE)  # on stderr, with --json too: a newcomer must not miss it
    if kind in UNGUARDED and kind != "cmd":  # cmd: the human chose the command
        render.note(f"zen: {kind} is unguarded: it has no pre-execution hook, so zen's guardian does "
                    "not see its commands or edits; it starts only on a lane that accepts that or inside "
                    "zen's sandbox (lanes.<name>.unguarded; zen preflight says which)")
    return 0

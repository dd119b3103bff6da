"""zen dispatch."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import typer

from zen.agents import UNGUARDED
from zen.cli import common, render
from zen.core.durations import parse_duration
from zen.core.model import AgentKind, Task
from zen.errors import InvalidTask
from zen.orchestration.dispatch import dispatch as do_dispatch

AGENTS = ", ".join(a.value for a in AgentKind)
SIM_NOTE = ("zen: no --agent given, so the simulated agent `sim` runs this task (a stand-in with no model "
            "behind it); pass --agent claude, codex, aider, gemini or cmd, or set defaults.agent in zen.yaml")


def _dispatched(task: Task) -> Iterator[render.Out]:
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


def dispatch(
    prompt: str = typer.Argument(None, help="What the agent should do; - reads it from stdin."),
    name: str = typer.Option(None, "--name", help="Short name of the task (default: from the prompt)."),
    lane: str = typer.Option(None, "--lane", help="Lane to work on."),
    repo: str = typer.Option(None, "--repo", help="A repository path instead of a lane."),
    agent: str = typer.Option(None, "--agent", help=f"{AGENTS.replace(', ', ' | ')} (default: defaults.agent in "
                              "zen.yaml; a new home says sim, the simulated agent, and zen says so when it runs)."),
    cmd: str = typer.Option(None, "--cmd", help="For --agent cmd: the command line, split like a shell would."),
    priority: str = typer.Option(None, "--priority", help="1 (first) to 5 (last); default 3."),
    depends_on: list[str] = typer.Option([], "--depends-on", help="Name or id of a job to harvest first (repeatable)."),
    timeout: str = typer.Option(None, "--timeout", help="Stop the agent after this long, e.g. 30m."),
    retries: int = typer.Option(None, "--retries", help="Retry a failed start this many times."),
    domain: str = typer.Option(None, "--domain", help="Autonomy domain (default: the lane's)."),
    base: str = typer.Option(None, "--base", help="Ref the worktree starts from (default: the lane's base)."),
    task_file: Path = typer.Option(None, "--file", help="Read the task from a YAML file (flags override it)."),
    json_out: bool = typer.Option(False, "--json", help="Print the task as written, as JSON."),
) -> int:
    """Queue a task for the supervisor: validated first, then written to the spool atomically."""
    text = common.text_or_stdin(prompt)
    if text is None and task_file is None:
        raise InvalidTask("the prompt is empty (give the task as text, or - to read it from stdin)")
    if cmd is not None and agent is None:
        agent = "cmd"
    _check(agent, timeout, retries)
    fields = {
        "prompt": text, "name": name, "lane": lane, "repo": repo, "agent": agent,
        "command": cmd, "priority": priority, "depends_on": list(depends_on), "timeout": timeout,
        "max_retries": retries, "domain": domain, "base": base,
    }
    task = do_dispatch(common.home(), fields, task_file)
    render.emit(task, json_out, _dispatched)
    if agent is None and task_file is None and task.agent is AgentKind.sim:
        render.note(SIM_NOTE)  # on stderr, with --json too: a newcomer must not miss it
    if task.agent.value in UNGUARDED and task.agent.value != "cmd":  # cmd: the human chose the command
        render.note(f"zen: {task.agent.value} is unguarded: it has no pre-execution hook, so zen's guardian does "
                    "not see its commands or edits; it starts only on a lane that accepts that or inside "
                    "zen's sandbox (lanes.<name>.unguarded; zen preflight says which)")
    return 0


def register(app: typer.Typer) -> None:
    app.command("dispatch")(dispatch)

"""zen dispatch."""

from __future__ import annotations

from pathlib import Path

import typer

from zen.cli import common, render
from zen.cli.submit import AGENTS, submit
from zen.orchestration.intake.attempts import dispatch_group


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
    attempts: int = typer.Option(None, "--attempts", help="Best of N: this many jobs of the one prompt, in a group "
                                 "(zen compare, zen pick)."),
    agents: str = typer.Option(None, "--agents", help="Best of N across agents: one job per agent, e.g. "
                               "claude,codex."),
) -> int:
    """Queue a task for the supervisor: validated first, then written to the spool atomically."""
    if attempts is not None or agents is not None:
        text = common.text_or_stdin(prompt) if prompt is not None else None
        fields = {"prompt": text, "name": name, "lane": lane, "repo": repo, "agent": agent, "command": cmd,
                  "priority": priority, "depends_on": list(depends_on), "timeout": timeout, "max_retries": retries,
                  "domain": domain, "base": base}
        group = dispatch_group(common.home(), fields, attempts=attempts,
                               agents=[a.strip() for a in (agents or "").split(",") if a.strip()],
                               task_file=task_file)
        render.emit(group, json_out, lambda g: [*g.jobs, f"group {g.group} (zen compare {g.group})"])
        return 0
    return submit(common.home(), prompt, name=name, lane=lane, repo=repo, agent=agent, cmd=cmd, priority=priority,
                  depends_on=list(depends_on), timeout=timeout, retries=retries, domain=domain, base=base,
                  task_file=task_file, json_out=json_out)


def register(app: typer.Typer) -> None:
    app.command("dispatch")(dispatch)

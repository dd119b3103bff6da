"""zen recover JOB (DESIGN 13): a new agent session for a job whose agent died; its own module, so
`zen team ...` starts without the tmux and git libraries this command needs."""

from __future__ import annotations

import typer

from zen.cli import common, render
from zen.cli.common import JSON
from zen.orchestration.job.revive import recover as run
from zen.orchestration.read.query import resolve_job


def recover(job: str = typer.Argument(..., help="The job whose agent died or whose session is unusable."),
            json_out: bool = JSON) -> int:
    """Start a new agent session for JOB in its own worktree, with a recovery handoff (its goal,
    what was done, the last output, what remains). One recovery of a job at a time: another is
    refused while one runs. The first session's work stays on the job's branches."""
    home = common.home()
    result = run(home, resolve_job(home, job))
    render.emit(result, json_out, lambda r: [f"recovered {r.job}: attempt {r.attempt} in {r.worktree} "
                                             f"(handoff {r.handoff})"])
    return 0


def register(app: typer.Typer) -> None:
    app.command("recover")(recover)

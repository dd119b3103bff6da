"""zen show, log: one job's record and timeline (zen doctor is zen/cli/doctor.py)."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator

import typer

from zen.cli import common, render
from zen.cli.common import JOB, JSON
from zen.cli.views import format_event, show_lines
from zen.orchestration.read import overview
from zen.orchestration.read.query import (
    Timeline,
    follow,
    job_detail,
    resolve_job,
    timeline,
)

__all__ = ["format_event", "log", "register", "show"]


def show(
    job: str = JOB,
    events: int = typer.Option(10, "--events", help="How many of the last events to show."),
    json_out: bool = JSON,
) -> int:
    """A job's task, state and last events."""
    if json_out:  # the task as task.yaml has it, script and all
        render.emit_json(job_detail(common.home(), job, last_events=events))
    else:
        render.emit(overview.job(common.home(), job, last_events=events), False, show_lines)
    return 0


def _logged(t: Timeline) -> Iterator[render.Out]:
    yield from (format_event(ev) for ev in t.events)


def log(
    job: str = JOB,
    json_out: bool = typer.Option(False, "--json", help="The timeline as one JSON document {job, events}; with "
                                  "--follow, one JSON event per line as stored (JSON lines)."),
    follow_on: bool = typer.Option(False, "--follow", "-f", help="Keep printing new events until the job ends."),
) -> int:
    """A job's timeline."""
    home = common.home()
    if not follow_on:
        render.emit(timeline(home, job), json_out, _logged)
        return 0
    for batch in follow(home, resolve_job(home, job)):
        if json_out:
            render.write_lines(json.dumps(ev, separators=(",", ":")) for ev in batch)
        else:
            render.write_lines(format_event(ev) for ev in batch)
        sys.stdout.flush()
    return 0


def register(app: typer.Typer) -> None:
    app.command("show")(show)
    app.command("log")(log)

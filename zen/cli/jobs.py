"""zen show, log, doctor: one job's record and timeline, and the check of every record."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator

import typer

from zen.cli import common, render
from zen.cli.common import JOB, JSON
from zen.cli.views import format_event, show_lines
from zen.orchestration import overview
from zen.orchestration.doctor import JobCheck, check_jobs
from zen.orchestration.query import (
    Timeline,
    follow,
    job_detail,
    resolve_job,
    timeline,
)

__all__ = ["doctor", "format_event", "log", "register", "show"]


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


def _checked(report: list[JobCheck]) -> Iterator[render.Out]:
    for r in report:
        faults = sum(1 for p in r.problems if p.fault)
        mark = "ok" if r.ok else (f"{faults} problem" + ("s" if faults != 1 else "") if faults else "SEQ GAP")
        yield f"{r.job}  {r.events} events  {mark}  {r.state}" + ("  (rebuilt)" if r.rebuilt else "")
        for p in r.problems:
            where = f"line {p.line}" if p.line is not None else "record"
            yield render.clean(f"  {where}: {p.problem}" + ("" if p.fault else " (note)"))
    if not report:
        yield "no jobs"


def doctor(
    job: str = typer.Argument(None, help="Only this job (default: all)."),
    rebuild: bool = typer.Option(False, "--rebuild", help="Rebuild state.json and metrics.json from events.jsonl "
                                 "(a bad line is skipped and reported, never fatal)."),
    json_out: bool = JSON,
) -> int:
    """Check every job's record: each timeline line against the event catalogue (known type,
    fields of the right kinds, this job's, seq gap-free) and state.json against the timeline,
    each problem with its line number; exit 1 when any is found. With --rebuild, state.json and
    metrics.json are rebuilt from the timeline."""
    report = check_jobs(common.home(), job, rebuild=rebuild)
    render.emit(report, json_out, _checked)
    return 0 if all(r.ok for r in report) else 1


def register(app: typer.Typer) -> None:
    app.command("show")(show)
    app.command("log")(log)
    app.command("doctor")(doctor)

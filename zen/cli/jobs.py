"""zen show, log, doctor: one job's record and timeline, and the check of every record."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator, Mapping
from typing import Any

import typer

from zen.cli import common, render
from zen.cli.common import JOB, JSON
from zen.cli.render import headline, ms
from zen.orchestration.doctor import JobCheck, check_jobs
from zen.orchestration.query import (
    JobDetail,
    Timeline,
    follow,
    job_detail,
    resolve_job,
    timeline,
)

_SKIP = {"v", "seq", "ts", "job", "type", "actor", "task"}


def format_event(ev: Mapping[str, Any]) -> str:
    extras = " ".join(f"{k}={v}" for k, v in ev.items() if k not in _SKIP)
    ts = str(ev.get("ts", ""))[11:23]
    line = f"{ev.get('seq', '?'):>4} {ts} {ev.get('type', '?'):<18} {ev.get('actor', ''):<10} {extras}".rstrip()
    return render.clean(line)


def _shown(d: JobDetail) -> Iterator[render.Out]:
    task, snap = d.task, d.state
    yield f"job      {d.job}"
    yield f"name     {task.name}"
    yield f"state    {snap.state.value}" + (f" ({render.clean(snap.reason)})" if snap.reason else "")
    yield f"agent    {task.agent.value}" + (f" {render.clean(' '.join(task.command))}" if task.command else "")
    yield f"lane     {task.lane or task.repo} @ {task.base}   domain {task.domain}   priority {task.priority}"
    for label, value in (("worktree", snap.worktree), ("branch", snap.branch), ("review", snap.review_branch),
                         ("tmux", snap.tmux_target), ("exit", snap.exit_code)):
        if value is not None:
            yield f"{label:<8} {value}"
    m = d.metrics
    if m and (m.get("api_calls") or m.get("input_tokens") or m.get("guard", {}).get("allowed")):
        yield f"usage    {headline(m)}"
        lat = m["api_latency_ms"]
        if lat.get("count"):
            yield f"         API latency p50 {ms(lat['p50'])}, p95 {ms(lat['p95'])}   (zen metrics {d.job})"
    yield "prompt   " + render.clean(task.prompt.strip()).replace("\n", "\n         ")
    if d.events:
        yield "events"
        for ev in d.events:
            yield "  " + format_event(ev)


def show(
    job: str = JOB,
    events: int = typer.Option(10, "--events", help="How many of the last events to show."),
    json_out: bool = JSON,
) -> int:
    """A job's task, state and last events."""
    render.emit(job_detail(common.home(), job, last_events=events), json_out, _shown)
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

"""zen doctor: the home's pieces and privacy, this machine's tools, and every job's record."""

from __future__ import annotations

from collections.abc import Iterator

import typer

from zen.cli import common, render
from zen.cli.common import JSON
from zen.errors import ZenError
from zen.orchestration.home.doctor import Doctor, JobCheck
from zen.orchestration.home.doctor import doctor as run_doctor
from zen.orchestration.home.tools import OK, Found

_MARK = {"fault": "PROBLEM", "warn": "warning"}


def _found(title: str, found: list[Found]) -> Iterator[render.Out]:
    bad = [f for f in found if f.status != OK]
    good = [f.check for f in found if f.status == OK]
    if len(found) == 1 and not bad:
        yield f"{title}: {found[0].message}"
        return
    yield f"{title}:" + (f" {', '.join(good)} ok" if good else "")
    for f in bad:
        fix = f"; fix: {f.fix}" + (f" ({f.where})" if f.where else "") if f.fix else ""
        yield render.clean(f"  {_MARK.get(f.status, f.status)}: {f.message}{fix}")


def _jobs(report: list[JobCheck]) -> Iterator[render.Out]:
    for r in report:
        faults = sum(1 for p in r.problems if p.fault)
        mark = "ok" if r.ok else (f"{faults} problem" + ("s" if faults != 1 else "") if faults else "SEQ GAP")
        yield f"{r.job}  {r.events} events  {mark}  {r.state}" + ("  (rebuilt)" if r.rebuilt else "")
        for p in r.problems:
            where = f"line {p.line}" if p.line is not None else "record"
            yield render.clean(f"  {where}: {p.problem}" + ("" if p.fault else " (note)"))
    if not report:
        yield "no jobs"


def _text(d: Doctor) -> Iterator[render.Out]:
    yield from _found("home", d.home)
    yield from _found("tools", d.tools)
    yield from _jobs(d.jobs)


def doctor(
    job: str = typer.Argument(None, help="Only this job's record (default: all)."),
    rebuild: bool = typer.Option(False, "--rebuild", help="Rebuild state.json and metrics.json from events.jsonl "
                                 "(a bad line is skipped and reported, never fatal)."),
    json_out: bool = JSON,
) -> int:
    """Check the home, this machine and every job's record; exit 1 when anything is wrong.

    The home: each piece zen init makes (a missing one is named with the command that restores
    it) and its privacy (a home, control/, logs/ or jobs/ that other users can read or enter is
    warned of, with the chmod that fixes it). The tools zen needs (git, tmux; bubblewrap and
    socat on Linux, for Claude Code's sandbox; chromium for the web tests only), each missing
    one with how to install it. Each job's record: every timeline line against the event
    catalogue (known type, fields of the right kinds, this job's, seq gap-free) and state.json
    against the timeline, each problem with its line number. With --rebuild, state.json and
    metrics.json are rebuilt from the timeline."""
    try:
        home, why = common.home(), ""
    except ZenError as exc:
        if job or rebuild:
            raise                      # a job's record needs its home
        home, why = None, str(exc)
    report = run_doctor(home, job, rebuild=rebuild, no_home=why)
    render.emit(report, json_out, _text)
    return 0 if report.ok else 1


def register(app: typer.Typer) -> None:
    app.command("doctor")(doctor)

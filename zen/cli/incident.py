"""zen incident new | list | show | check | propose | adopt, and zen preflight."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import typer

from zen.cli import common, render
from zen.cli.common import JSON
from zen.cli.policy import change_lines
from zen.core.incident import Incident
from zen.errors import ZenError
from zen.orchestration.insight import propose as proposing
from zen.orchestration.insight.replay import Simulation, drift
from zen.orchestration.job.preflight import Report
from zen.orchestration.job.preflight import run as run_preflight
from zen.orchestration.safety import incidents

incident = typer.Typer(help="Incident records whose controls the guardian, preflight and handoff enforce.",
                       no_args_is_help=True)

_PROMPTS = [("title", "Title"), ("domain", "Domain (e.g. code)"), ("what_happened", "What happened"),
            ("root_cause", "Root cause"), ("impact", "Impact"), ("prevention", "What would have prevented it")]


def _ask_missing(fields: dict[str, Any]) -> None:
    """Prompt at a terminal for what the options left out; elsewhere say which option is missing."""
    for key, label in _PROMPTS:
        if not fields.get(key):
            if not sys.stdin.isatty():
                raise ZenError(f"--{key.replace('_', '-')} is required (or run zen incident new at a terminal)")
            fields[key] = typer.prompt(label)


def _recorded(r: incidents.Recorded) -> Iterator[render.Out]:
    yield f"recorded {r.path}"
    if r.demoted_to:
        yield f"domain {r.domain} demoted to {r.demoted_to}"


@incident.command("new")
def incident_new(
    title: str = typer.Option(None, "--title", help="One line: what went wrong."),
    domain: str = typer.Option(None, "--domain", help="Autonomy domain it concerns (it is demoted one level)."),
    what_happened: str = typer.Option(None, "--what-happened"),
    root_cause: str = typer.Option(None, "--root-cause"),
    impact: str = typer.Option(None, "--impact"),
    prevention: str = typer.Option(None, "--prevention", help="What would have prevented it."),
    mitigation: list[str] = typer.Option([], "--mitigation", help="Repeatable."),
    lane: list[str] = typer.Option([], "--lane", help="Lane it concerns (repeatable; default: all of the domain)."),
    path: list[str] = typer.Option([], "--path", help="Path glob it concerns (repeatable)."),
    tag: list[str] = typer.Option([], "--tag", help="Repeatable."),
    warning: list[str] = typer.Option([], "--warning", help="Handoff warning for matching jobs (repeatable)."),
    incident_id: str = typer.Option(None, "--id", help="Default: <date>-<slug of the title>."),
    no_demote: bool = typer.Option(False, "--no-demote", help="Do not demote the domain."),
    json_out: bool = JSON,
) -> int:
    """Record an incident (prompts for missing fields at a terminal). Guardian rules and preflight
    checks are added by editing the file it writes (zen incident check validates it)."""
    fields: dict[str, Any] = {
        "id": incident_id, "title": title, "domain": domain, "what_happened": what_happened,
        "root_cause": root_cause, "impact": impact, "prevention": prevention, "mitigations": list(mitigation),
        "lanes": list(lane), "paths": list(path), "tags": list(tag)}
    _ask_missing(fields)
    if warning:
        fields["controls"] = {"handoff_warnings": list(warning)}
    result = incidents.record(common.home(), fields, demote_domain=not no_demote)
    render.emit(result, json_out, _recorded)
    return 0


def _listed(rows: list[incidents.Summary]) -> Iterator[render.Out]:
    if not rows:
        yield "no incidents recorded"
        return
    yield render.Table(["id", "date", "domain", "rules", "checks", "warnings", "title"],
                       [[r.id, r.date or "-", r.domain or "-", r.guardian_rules, r.preflight_checks,
                         r.handoff_warnings, r.title or f"INVALID: {r.error}"] for r in rows])


@incident.command("list")
def incident_list(json_out: bool = JSON) -> int:
    """Every incident record, with how many live controls it carries."""
    render.emit(incidents.summaries(common.home()), json_out, _listed)
    return 0


@dataclass(frozen=True)
class Shown:
    path: Path
    incident: Incident

    def to_json(self) -> Any:
        return self.incident.model_dump(mode="json")


def _shown(s: Shown) -> Iterator[render.Out]:
    yield f"# {s.path}"
    yield s.path.read_text().rstrip()


@incident.command("show")
def incident_show(ref: str = typer.Argument(..., help="Incident id or unique prefix."), json_out: bool = JSON) -> int:
    """One incident record."""
    render.emit(Shown(*incidents.get(common.home(), ref)), json_out, _shown)
    return 0


def _checked(results: list[incidents.Checked]) -> Iterator[render.Out]:
    for r in results:
        yield f"{'ok ' if r.ok else 'BAD'} {r.id or r.path}" + ("" if r.ok else f": {'; '.join(r.problems)}")
    if not results:
        yield "no incidents recorded"


@incident.command("check")
def incident_check(json_out: bool = JSON) -> int:
    """Validate every record and that every control compiles; exit 1 if any does not."""
    results = incidents.check(common.home())
    render.emit(results, json_out, _checked)
    return 0 if all(r.ok for r in results) else 1


def _proposed(p: proposing.Proposal) -> Iterator[render.Out]:
    yield f"incident {p.incident}: {len(p.rules)} rule(s) drafted from the commands of {', '.join(p.jobs)}"
    for r in p.rules:
        yield f"  - {r['id']}: {json.dumps(r['match'])}"
    yield f"would have stopped {len(p.stops)} decision(s) in the incident's jobs:"
    yield from change_lines(Simulation("proposal", changes=p.stops), limit=20)
    yield f"would also block {len(p.also)} other decision(s) in the fleet's history" + (":" if p.also else "")
    yield from change_lines(Simulation("proposal", changes=p.also), limit=20)
    yield f"kept in {p.saved}; zen incident adopt {p.incident} writes it into the policy"


@incident.command("propose")
def incident_propose(
    ref: str = typer.Argument(..., help="Incident id or unique prefix."),
    job: list[str] = typer.Option([], "--job", help="A job of the incident (repeatable; default: those its text names)."),
    seq: list[int] = typer.Option([], "--seq", help="A decision of those jobs to draft a rule from (repeatable)."),
    json_out: bool = JSON,
) -> int:
    """Draft guardian rules that would have stopped the incident, from its commands in the
    timelines; simulate them over history and show what else they would block."""
    render.emit(proposing.propose(common.home(), ref, job, seq), json_out, _proposed)
    return 0


@incident.command("adopt")
def incident_adopt(ref: str = typer.Argument(..., help="Incident id or unique prefix."), json_out: bool = JSON) -> int:
    """Write the incident's proposed rules (zen incident propose) into its record, where the
    guardian loads them. For humans only."""
    if os.environ.get("ZEN_JOB_ID"):   # defence in depth behind the guardian's own deny
        raise ZenError(f"zen incident adopt is for humans only, and this shell belongs to agent job "
                       f"{os.environ['ZEN_JOB_ID']}")
    render.emit(proposing.adopt(common.home(), ref), json_out,
                lambda a: [f"adopted {len(a.rules)} rule(s) into {a.path}: {', '.join(a.rules) or '(none new)'}"])
    return 0


def _report(report: Report) -> Iterator[render.Out]:
    for c in report.checks:
        yield f"{c.status:<4}  {c.name:<28} {c.message}"


def preflight(lane: str = typer.Option(None, "--lane", help="Check only this lane."), json_out: bool = JSON) -> int:
    """Everything that must hold before an agent starts: PASS / WARN / FAIL each; exit 1 on any FAIL."""
    home = common.home()
    report = run_preflight(home, lane=lane)
    report.add("policy on history", *drift(home))
    render.emit(report, json_out, _report)
    return 0 if report.ok else 1


def register(app: typer.Typer) -> None:
    app.add_typer(incident, name="incident")
    app.command("preflight")(preflight)

"""zen incident new|list|show|check, and zen preflight."""

from __future__ import annotations

import sys

import typer

from zen.cli import common


def register(app: typer.Typer) -> None:
    incident = typer.Typer(help="Incident records whose controls the guardian, preflight and handoff enforce.",
                           no_args_is_help=True)
    app.add_typer(incident, name="incident")

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
        json_out: bool = typer.Option(False, "--json"),
    ) -> int:
        """Record an incident (prompts for missing fields at a terminal). Guardian rules and preflight
        checks are added by editing the file it writes (zen incident check validates it)."""
        from zen.orchestration import incidents

        fields = {"id": incident_id, "title": title, "domain": domain, "what_happened": what_happened,
                  "root_cause": root_cause, "impact": impact, "prevention": prevention,
                  "mitigations": list(mitigation), "lanes": list(lane), "paths": list(path), "tags": list(tag)}
        prompts = [("title", "Title"), ("domain", "Domain (e.g. code)"), ("what_happened", "What happened"),
                   ("root_cause", "Root cause"), ("impact", "Impact"), ("prevention", "What would have prevented it")]
        for key, label in prompts:
            if not fields.get(key):
                if sys.stdin.isatty():
                    fields[key] = typer.prompt(label)
                else:
                    from zen.errors import ZenError

                    raise ZenError(f"--{key.replace('_', '-')} is required (or run zen incident new at a terminal)")
        if warning:
            fields["controls"] = {"handoff_warnings": list(warning)}
        home = common.home()
        path_written = incidents.create(home, fields)
        _, record = incidents.get(home, path_written.stem)
        demoted = None
        if not no_demote:
            from zen.orchestration.autonomy import demote

            demoted = demote(home, record.domain, reason=f"incident {record.id}").label
        if json_out:
            common.emit_json({"path": str(path_written), "id": record.id, "demoted_to": demoted})
        else:
            common.say(f"recorded {path_written}")
            if demoted:
                common.say(f"domain {record.domain} demoted to {demoted}")
        return 0

    @incident.command("list")
    def incident_list(json_out: bool = typer.Option(False, "--json")) -> int:
        """Every incident record, with how many live controls it carries."""
        from zen.orchestration.incidents import load_all

        rows = []
        for item in load_all(common.home()):
            inc = item.incident
            rows.append({
                "id": inc.id if inc else item.path.stem, "file": item.path.name,
                "title": inc.title if inc else None, "date": str(inc.date) if inc else None,
                "domain": inc.domain if inc else None,
                "guardian_rules": len(inc.controls.guardian_rules) if inc else 0,
                "preflight_checks": len(inc.controls.preflight_checks) if inc else 0,
                "handoff_warnings": len(inc.controls.handoff_warnings) if inc else 0,
                "error": item.error,
            })
        if json_out:
            common.emit_json(rows)
        elif not rows:
            common.say("no incidents recorded")
        else:
            common.table(["id", "date", "domain", "rules", "checks", "warnings", "title"],
                         [[r["id"], r["date"] or "-", r["domain"] or "-", str(r["guardian_rules"]),
                           str(r["preflight_checks"]), str(r["handoff_warnings"]),
                           r["title"] or f"INVALID: {r['error']}"] for r in rows])
        return 0

    @incident.command("show")
    def incident_show(ref: str = typer.Argument(..., help="Incident id or unique prefix."),
                      json_out: bool = typer.Option(False, "--json")) -> int:
        """One incident record."""
        from zen.orchestration.incidents import get

        path, inc = get(common.home(), ref)
        if json_out:
            common.emit_json(inc.model_dump(mode="json"))
        else:
            common.say(f"# {path}")
            common.say(path.read_text().rstrip())
        return 0

    @incident.command("check")
    def incident_check(json_out: bool = typer.Option(False, "--json")) -> int:
        """Validate every record and that every control compiles; exit 1 if any does not."""
        from zen.orchestration.incidents import check

        results = check(common.home())
        if json_out:
            common.emit_json(results)
        else:
            for r in results:
                common.say(f"{'ok ' if r['ok'] else 'BAD'} {r['id'] or r['path']}" +
                           ("" if r["ok"] else f": {'; '.join(r['problems'])}"))
            if not results:
                common.say("no incidents recorded")
        return 0 if all(r["ok"] for r in results) else 1

    @app.command("preflight")
    def preflight(lane: str = typer.Option(None, "--lane", help="Check only this lane."),
                  json_out: bool = typer.Option(False, "--json")) -> int:
        """Everything that must hold before an agent starts: PASS / WARN / FAIL each; exit 1 on any FAIL."""
        from zen.orchestration.preflight import run

        report = run(common.home(), lane=lane)
        if json_out:
            common.emit_json(report.as_dict())
        else:
            for c in report.checks:
                common.say(f"{c.status:<4}  {c.name:<28} {c.message}")
        return 0 if report.ok else 1

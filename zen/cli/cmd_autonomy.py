"""zen accept / reject, zen autonomy [show|promote|demote], zen kill-switch."""

from __future__ import annotations

import typer

from zen.cli import common


def register(app: typer.Typer) -> None:
    @app.command("accept")
    def accept(job: str = typer.Argument(..., help="Job id, unique prefix, or name."),
               json_out: bool = typer.Option(False, "--json")) -> int:
        """Record that a harvested job's result was right: evidence toward the domain's next level."""
        from zen.orchestration.autonomy import verdict
        from zen.orchestration.query import resolve_job

        home = common.home()
        result = verdict(home, resolve_job(home, job), accepted=True)
        if json_out:
            common.emit_json(result)
        else:
            common.say(f"accepted {result['job']} (domain {result['domain']}, at {result['level']})")
        return 0

    @app.command("reject")
    def reject(job: str = typer.Argument(..., help="Job id, unique prefix, or name."),
               correction: str = typer.Option(None, "--correction", help="What was wrong: recorded as evidence."),
               json_out: bool = typer.Option(False, "--json")) -> int:
        """Record a correction on a harvested job; the domain is demoted one level."""
        from zen.orchestration.autonomy import verdict
        from zen.orchestration.query import resolve_job

        home = common.home()
        result = verdict(home, resolve_job(home, job), accepted=False, correction=correction)
        if json_out:
            common.emit_json(result)
        else:
            common.say(f"rejected {result['job']}; domain {result['domain']} demoted to {result['demoted_to']}")
        return 0

    autonomy = typer.Typer(help="Autonomy levels per domain, earned from evidence.", invoke_without_command=True)
    app.add_typer(autonomy, name="autonomy")

    def render(rows: list[dict], json_out: bool) -> None:
        if json_out:
            common.emit_json(rows)
            return
        from zen.orchestration.status import supervisor_status

        for line in supervisor_status(common.home()).get("banner", []):
            common.err(line)
        common.table(
            ["domain", "level", "effective", "next", "evidence"],
            [[r["domain"], r["level"], r["effective_level"], r["next_level"] or "-",
              "eligible now" if r["eligible"] else (r["missing"] or "")] for r in rows],
        )

    @autonomy.callback()
    def autonomy_root(ctx: typer.Context, json_out: bool = typer.Option(False, "--json")) -> None:
        """Show each domain's level and the evidence toward the next one."""
        if ctx.invoked_subcommand is None:
            from zen.orchestration.autonomy import show

            render(show(common.home()), json_out)

    @autonomy.command("show")
    def autonomy_show(json_out: bool = typer.Option(False, "--json")) -> int:
        """Each domain's level and the evidence toward the next one."""
        from zen.orchestration.autonomy import show

        render(show(common.home()), json_out)
        return 0

    @autonomy.command("promote")
    def autonomy_promote(
        domain: str = typer.Argument(...),
        override: bool = typer.Option(False, "--override", help="Promote without the evidence (recorded)."),
        reason: str = typer.Option(None, "--reason", help="Why, for --override."),
    ) -> int:
        """Raise a domain one level; refused unless evidence/ meets the threshold."""
        from zen.orchestration.autonomy import promote

        level = promote(common.home(), domain, override=override, reason=reason)
        common.say(f"{domain} is now {level.label}" + (" (human override recorded)" if override else ""))
        return 0

    @autonomy.command("demote")
    def autonomy_demote(domain: str = typer.Argument(...),
                        reason: str = typer.Option("demoted by a human", "--reason")) -> int:
        """Lower a domain one level."""
        from zen.orchestration.autonomy import demote

        level = demote(common.home(), domain, reason)
        common.say(f"{domain} is now {level.label}")
        return 0

    @app.command("kill-switch")
    def kill_switch(
        reason: str = typer.Option(None, "--reason", "-m", help="Why (recorded in control/KILL)."),
        release: bool = typer.Option(False, "--release", help="Lift the kill switch."),
        stop_agents: bool = typer.Option(False, "--stop-agents", help="Also stop every running agent and harvest it."),
        json_out: bool = typer.Option(False, "--json"),
    ) -> int:
        """Force every domain to observe-only at once, for running agents too (works with no supervisor)."""
        from zen.orchestration import autonomy as auto

        home = common.home()
        if release:
            result = auto.release_kill_switch(home)
            if json_out:
                common.emit_json(result)
            else:
                common.say("kill switch released; domains are back at their own levels")
            return 0
        result = auto.engage_kill_switch(home, reason)
        stopped: list[str] = []
        if stop_agents:
            from zen.orchestration.control import stop_all

            stopped = stop_all(home, reason="kill switch")
        result["stopped"] = stopped
        if json_out:
            common.emit_json(result)
        else:
            common.say("KILL SWITCH ENGAGED: every domain is observe-only until zen kill-switch --release")
            if stopped:
                common.say(f"stopped and harvested {len(stopped)} agent(s)")
        return 0

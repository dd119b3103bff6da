"""zen accept / reject, zen autonomy [show | promote | demote], zen kill-switch."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, replace

import typer

from zen.cli import common, render
from zen.cli.common import JOB, JSON
from zen.core.model import Level
from zen.orchestration.job import killswitch
from zen.orchestration.job.control import stop_all
from zen.orchestration.read.query import resolve_job
from zen.orchestration.read.status import supervisor_status
from zen.orchestration.safety import autonomy as auto

autonomy = typer.Typer(help="Autonomy levels per domain, earned from evidence.", invoke_without_command=True)


def _verdict(v: auto.Verdict) -> Iterator[render.Out]:
    if v.demoted_to is None:
        yield f"accepted {v.job} (domain {v.domain}, at {v.level.label})"
    else:
        yield f"rejected {v.job}; domain {v.domain} demoted to {v.demoted_to.label}"


def accept(job: str = JOB, json_out: bool = JSON) -> int:
    """Record that a harvested job's result was right: evidence toward the domain's next level."""
    home = common.home()
    render.emit(auto.verdict(home, resolve_job(home, job), accepted=True), json_out, _verdict)
    return 0


def reject(job: str = JOB,
           correction: str = typer.Option(None, "--correction", help="What was wrong: recorded as evidence."),
           json_out: bool = JSON) -> int:
    """Record a correction on a harvested job; the domain is demoted one level."""
    home = common.home()
    render.emit(auto.verdict(home, resolve_job(home, job), accepted=False, correction=correction), json_out,
                _verdict)
    return 0


def _levels(rows: list[auto.DomainView]) -> Iterator[render.Out]:
    for line in supervisor_status(common.home()).get("banner", []):
        yield render.Note(line)
    yield render.Table(
        ["domain", "level", "effective", "next", "evidence"],
        [[r.progress.domain, r.progress.level.label, r.effective_level.label,
          r.progress.next_level.label if r.progress.next_level else "-",
          "eligible now" if r.progress.missing is None else r.progress.missing] for r in rows],
    )


@autonomy.callback()
def autonomy_root(ctx: typer.Context, json_out: bool = JSON) -> None:
    """Show each domain's level and the evidence toward the next one."""
    if ctx.invoked_subcommand is None:
        render.emit(auto.show(common.home()), json_out, _levels)


@autonomy.command("show")
def autonomy_show(json_out: bool = JSON) -> int:
    """Each domain's level and the evidence toward the next one."""
    render.emit(auto.show(common.home()), json_out, _levels)
    return 0


@dataclass(frozen=True)
class LevelNow:
    domain: str
    level: Level
    override: bool = False

    def to_json(self) -> dict[str, object]:
        return {"domain": self.domain, "level": self.level.label, "override": self.override}


@autonomy.command("promote")
def autonomy_promote(
    domain: str = typer.Argument(..., help="The domain, e.g. code."),
    override: bool = typer.Option(False, "--override", help="Promote without the evidence (recorded)."),
    reason: str = typer.Option(None, "--reason", help="Why, for --override."),
    json_out: bool = JSON,
) -> int:
    """Raise a domain one level; refused unless evidence/ meets the threshold."""
    level = auto.promote(common.home(), domain, override=override, reason=reason)
    note = " (human override recorded)" if override else ""
    render.emit(LevelNow(domain, level, override), json_out, lambda r: [f"{r.domain} is now {r.level.label}{note}"])
    return 0


@autonomy.command("demote")
def autonomy_demote(domain: str = typer.Argument(..., help="The domain, e.g. code."),
                    reason: str = typer.Option("demoted by a human", "--reason"), json_out: bool = JSON) -> int:
    """Lower a domain one level."""
    level = auto.demote(common.home(), domain, reason)
    render.emit(LevelNow(domain, level), json_out, lambda r: [f"{r.domain} is now {r.level.label}"])
    return 0


def _engaged(k: auto.KillSwitch) -> Iterator[render.Out]:
    yield "KILL SWITCH ENGAGED: every domain is observe-only until zen kill-switch --release"
    if k.held:
        yield f"paused {len(k.held)} agent(s) the guardian does not see (resumed at the release): {', '.join(k.held)}"
    if k.stopped:
        yield f"stopped and harvested {len(k.stopped)} agent(s)"


def kill_switch(
    reason: str = typer.Option(None, "--reason", "-m", help="Why (recorded in control/KILL)."),
    release: bool = typer.Option(False, "--release", help="Lift the kill switch."),
    stop_agents: bool = typer.Option(False, "--stop-agents", help="Also stop every running agent and harvest it."),
    json_out: bool = JSON,
) -> int:
    """Force every domain to observe-only at once, for running agents too (works with no supervisor)."""
    home = common.home()
    if release:
        render.emit(killswitch.release(home), json_out,
                    lambda _: ["kill switch released; domains are back at their own levels"])
        return 0
    result = killswitch.engage(home, reason)
    if stop_agents:
        result = replace(result, stopped=tuple(stop_all(home, reason="kill switch")))
    render.emit(result, json_out, _engaged)
    return 0


def register(app: typer.Typer) -> None:
    app.command("accept")(accept)
    app.command("reject")(reject)
    app.add_typer(autonomy, name="autonomy")
    app.command("kill-switch")(kill_switch)

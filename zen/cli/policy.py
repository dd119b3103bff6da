"""zen policy simulate: a guardian policy tried on the fleet's recorded history before it goes live;
zen anomalies: what the fleet's agents did far from their own baselines (issue 38)."""

from __future__ import annotations

import time
from collections.abc import Iterator

import typer

from zen.cli import common, render
from zen.cli.common import JSON
from zen.core.durations import parse_duration
from zen.errors import UsageError
from zen.observe.anomalies import Finding
from zen.orchestration.insight.replay import Simulation, simulate
from zen.orchestration.insight.watch import scan

policy = typer.Typer(help="The guardian's policy tried on history.", no_args_is_help=True)


def since_epoch(since: str | None, option: str = "--since") -> float | None:
    if not since:
        return None
    try:
        return time.time() - parse_duration(since)
    except ValueError as exc:
        raise UsageError(f"{option}: {exc}") from None


def change_lines(sim: Simulation, limit: int | None = None) -> Iterator[render.Out]:
    """Each rule with how many decisions it changes, then each decision (the first `limit`)."""
    for rule, n in sim.by_rule.items():
        yield f"  {n:>5}  {rule}"
    shown = sim.changes if limit is None else sim.changes[:limit]
    for c in shown:
        where = f"{c.job} #{c.seq}" if c.job and c.seq is not None else (c.job or "(no job)")
        yield (f"  {where}  {c.ts}  {c.tool}: {render.clean(c.subject)[:160]}\n"
               f"      {c.old_decision} ({c.old_rule}) -> {c.new_decision} ({c.new_rule}): "
               f"{render.clean(c.new_reason)[:200]}")
    if limit is not None and len(sim.changes) > limit:
        yield f"  ... and {len(sim.changes) - limit} more (--json lists them all)"


def _text(sim: Simulation) -> Iterator[render.Out]:
    head = f"replayed {sim.replayed} recorded decisions under {sim.policy}"
    if sim.skipped:
        head += f" ({sim.skipped} recorded without what a replay needs, left out)"
    yield head
    if not sim.changes:
        yield "no decision would change"
        return
    yield f"{len(sim.changes)} would change, by rule:"
    yield from change_lines(sim)


@policy.command("simulate")
def policy_simulate(
    policy_file: str = typer.Option(None, "--policy", help="The guardian.yaml to try (default: the live one)."),
    since: str = typer.Option("30d", "--since", help="How far back to replay (e.g. 30d, 12h)."),
    lane: str = typer.Option(None, "--lane", help="Only this lane's jobs."),
    json_out: bool = JSON,
) -> int:
    """Judge every recorded guardian input again under a policy; show each decision that would
    change, grouped by rule. Exit 0 when none would, 1 when some would."""
    sim = simulate(common.home(), policy_file, since=since_epoch(since), lane=lane)
    render.emit(sim, json_out, _text)
    return 1 if sim.changes else 0


def _anomalies(found: list[Finding]) -> Iterator[render.Out]:
    if not found:
        yield "no anomalies"
        return
    yield render.Table(["job", "turn", "what", "value", "typical", "score", "evidence", "message"],
                       [[f.job, str(f.turn), f.what, f"{f.value:g}", "-" if f.typical is None else f"{f.typical:.4g}",
                         "-" if f.score is None else f"{f.score:.1f}",
                         ",".join(map(str, f.evidence[:6])) + ("..." if len(f.evidence) > 6 else ""),
                         render.clean(f.message)[:120]] for f in found])


def anomalies(
    since: str = typer.Option("24h", "--since", help="Turns that started this recently (e.g. 24h, 7d)."),
    json_out: bool = JSON,
) -> int:
    """Turns far from their agent's and lane's baseline (median and MAD of the fleet's own
    history) and known patterns: a tool loop, a deny burst, a cost spike, edit churn."""
    render.emit(scan(common.home(), since_epoch(since)), json_out, _anomalies)
    return 0


def register(app: typer.Typer) -> None:
    app.add_typer(policy, name="policy")
    app.command("anomalies")(anomalies)

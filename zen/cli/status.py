"""zen status."""

from __future__ import annotations

from collections.abc import Iterator

import typer

from zen.agents import shown
from zen.cli import common, render
from zen.cli.common import JSON
from zen.cli.render import headline
from zen.core.durations import format_duration
from zen.core.ids import parse_iso, utcnow
from zen.observe.metrics import headline as metrics_headline
from zen.orchestration.query import Status
from zen.orchestration.query import status as read_status


def age(ts: str | None) -> str:
    if not ts:
        return "-"
    try:
        return format_duration((utcnow() - parse_iso(ts)).total_seconds())
    except ValueError:
        return "-"


def _cost(usage: dict[str, float]) -> str:
    got = metrics_headline(usage)
    return f"${got['cost_usd']:.4f}" if got["api_calls"] or got["cost_usd"] else "-"


def _text(s: Status) -> Iterator[render.Out]:
    for line in s.supervisor.get("banner", []):
        yield render.Note(line)
    yield str(s.supervisor["summary"])
    b = s.breaker
    state = "OPEN: automatic work is held" if b["open"] else "closed"
    yield (f"circuit breaker: {state} ({b['automatic_in_window']} automatic starts in the last "
           f"{format_duration(b['window_s'])}, limit {b['limit']})")
    u = s.usage()
    if u["api_calls"] or u["tokens"]:
        yield f"usage: {headline(u)} (all jobs; zen metrics for more)"
    rows: list[list[object]] = [[t.id, t.name, "pending", shown(t.agent.value), t.lane or t.repo or "",
                                 age(t.created_at), ""] for t in s.pending]
    rows += [[j.job, j.name, j.state.value + (f" ({j.reason})" if j.reason else ""), shown(j.agent or ""),
              j.lane or "", age(j.created_at), _cost(j.usage)] for j in s.jobs]
    if rows:
        yield render.Table(["id", "name", "state", "agent", "lane", "age", "cost"], rows)
    else:
        yield "no tasks or jobs yet (zen dispatch \"PROMPT\")"


def status(json_out: bool = JSON,
           tmux: bool = typer.Option(False, "--tmux", help="One short line for a tmux status bar, e.g. "
                                     "set -g status-right '#(zen --home H status --tmux)'.")) -> int:
    """Tasks waiting in the spool, every job with its state, and whether a supervisor runs."""
    if tmux:
        from zen.tui.segment import tmux_segment  # only this form reads the live views' model

        render.say(tmux_segment(common.home()))
        return 0
    render.emit(read_status(common.home()), json_out, _text)
    return 0


def register(app: typer.Typer) -> None:
    app.command("status")(status)

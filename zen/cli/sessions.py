"""zen sessions: every Claude Code and Codex session on the machine, zen's or not (issue 39)."""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import typer

from zen.cli import common, render
from zen.cli.common import JSON
from zen.cli.render import count
from zen.core.durations import parse_duration
from zen.errors import UsageError


def _lines(data: Mapping[str, Any]) -> Iterator[render.Out]:
    rows = [[s["agent"], s["session"][:8], render.clean(s["project"]), s["started"][:16].replace("T", " "),
             s["last_activity"][:16].replace("T", " "), s["turns"],
             count(s["input_tokens"] + s["cache_read_input_tokens"] + s["cache_creation_input_tokens"]),
             count(s["output_tokens"]), f"${s['cost_usd']:.4f}", s["job"] or ("-" if not s["zen"] else "zen")]
            for s in data["sessions"]]
    if not rows:
        yield "no Claude Code or Codex sessions found"
        return
    yield render.Table(["agent", "session", "project", "started", "last", "turns", "input", "output",
                        "cost", "zen job"], rows)
    t = data["total"]
    yield (f"{t['sessions']} sessions ({t['zen']} run by zen): {count(t.get('api_calls', 0))} API calls, "
           f"${t.get('cost_usd', 0.0):.4f}")


def sessions(json_out: bool = JSON,
             since: str = typer.Option(None, "--since", help="Only sessions active in this long (7d, 12h)."),
             project: str = typer.Option(None, "--project", help="Only sessions whose directory names this.")
             ) -> int:
    """Every Claude Code and Codex session on this machine: project, turns, tokens, cost, and whether zen ran it."""
    from zen.observe import sessions as found  # only this command reads the agents' records
    from zen.observe.record import home_prices  # and prices them (it pulls in the config's YAML)

    try:
        since_s = parse_duration(since) if since else None
    except ValueError as exc:
        raise UsageError(f"--since: {exc}") from None
    home = common.home_or_none()
    listed = found.find(Path(os.environ.get("HOME") or Path.home()), since_s=since_s, project=project,
                        home=home, prices=home_prices(home.root) if home is not None else None)
    data = {"sessions": [s.to_json() for s in listed], "total": found.totals(listed)}
    render.emit(data, json_out, _lines)
    return 0


def register(app: typer.Typer) -> None:
    app.command("sessions")(sessions)

"""zen team spawn | status | wait | report | control | message | tree: the team tools from a shell.

The same code as the MCP tools (zen mcp serve). A command acts as the job named by --as (else
$ZEN_JOB_ID, else as a human): a person may act for any job; an agent reaches these only through
its MCP tools (the guardian keeps the state-changing ones from agents' shells).
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import typer

from zen.cli import common, render
from zen.cli.common import JSON
from zen.cli.views import branches
from zen.core import teamtree
from zen.core.durations import parse_duration
from zen.errors import UsageError
from zen.orchestration.read.query import resolve_job
from zen.orchestration.teams import ops as team_ops
from zen.orchestration.teams import workers as teams
from zen.orchestration.teams.workers import Caller, SpawnRequest
from zen.store.home import Home

team = typer.Typer(help="Agent teams: workers a job starts, their reports, control and messages.",
                   no_args_is_help=True)

AS = typer.Option(None, "--as", help="Act as this job (default: $ZEN_JOB_ID; none = as a human).")


def _caller(home: Home, as_job: str | None) -> Caller:
    ref = as_job or os.environ.get("ZEN_JOB_ID")
    return Caller(resolve_job(home, ref) if ref else None)


def _rows(workers: list[dict[str, Any]]) -> render.Table:
    rows = []
    for w in workers:
        rep = w.get("report") or {}
        said = f"{rep.get('status')}: {rep.get('summary') or rep.get('blocker') or ''}" if rep else "-"
        rows.append([w["id"], w.get("name") or "", w["state"] + (f" ({w['reason']})" if w.get("reason") else ""),
                     w["revision"], "yes" if w["settled"] else "no", said[:80]])
    return render.Table(["id", "name", "state", "revision", "settled", "report"], rows)


@team.command("spawn")
def spawn(goal: str = typer.Argument(..., help="What the worker is to do; - reads stdin."),
          as_job: str = AS,
          agent: str = typer.Option(None, "--agent", help="claude | codex | sim (default: the parent's agent)."),
          paths: list[str] = typer.Option(None, "--path", help="A path or glob it leases from the start (repeatable)."),
          name: str = typer.Option(None, "--name", help="The worker's name (default: from the goal)."),
          request_id: str = typer.Option(None, "--request-id", help="Replaying the same id returns the same worker."),
          until_done: bool = typer.Option(False, "--until-done", help="Continue it after each turn until it reports done."),
          budget_tokens: int = typer.Option(None, "--budget-tokens", help="Hard cap on the goal's tokens."),
          budget_cost: float = typer.Option(None, "--budget-cost", help="Hard cap on the goal's cost in USD."),
          budget_wall: str = typer.Option(None, "--budget-wall", help="Hard cap on the goal's wall time (e.g. 30m)."),
          script: Path = typer.Option(None, "--script", help="For --agent sim: a JSON file of its steps."),
          json_out: bool = JSON) -> int:
    """Start a worker job of the --as job on its lane. Refused, with the reason, over
    teams.max_active_workers or teams.max_depth, with the kill switch engaged or the breaker open."""
    home = common.home()
    goal = common.text_or_stdin(goal) or ""
    steps = None
    if script is not None:
        try:
            steps = json.loads(script.read_text())
        except (OSError, ValueError) as exc:
            raise UsageError(f"--script {script}: {exc}") from None
    if budget_wall is not None:
        try:
            parse_duration(budget_wall)
        except ValueError as exc:
            raise UsageError(f"--budget-wall: {exc}") from None
    budget = {k: v for k, v in (("tokens", budget_tokens), ("cost_usd", budget_cost), ("wall", budget_wall))
              if v is not None} or None
    req = SpawnRequest(goal=goal, agent=agent, paths=tuple(paths or ()), name=name, request_id=request_id,
                       until_done=until_done, budget=budget, script=steps)
    result = teams.spawn(home, _caller(home, as_job), req)
    render.emit(result, json_out, lambda r: [r["id"] + (" (replayed)" if r["replayed"] else "")])
    return 0


@team.command("status")
def status(ids: list[str] = typer.Argument(None, help="Workers to show (default: all of the --as job's)."),
           as_job: str = AS, json_out: bool = JSON) -> int:
    """Workers with their state, revision (for control), last report and whether they are settled."""
    home = common.home()
    workers = team_ops.status(home, _caller(home, as_job), ids or None)
    render.emit(workers, json_out, lambda ws: [_rows(ws)] if ws else ["no workers"])
    return 0


@team.command("wait")
def wait(ids: list[str] = typer.Argument(None, help="Workers to wait for (default: all of the --as job's)."),
         as_job: str = AS,
         timeout: str = typer.Option("60s", "--timeout", help="Give up after this long (at most teams.wait_max)."),
         json_out: bool = JSON) -> int:
    """Wait until the workers have reported done or blocked, or ended. Exit 1 at the timeout."""
    home = common.home()
    try:
        timeout_s = parse_duration(timeout)
    except ValueError as exc:
        raise UsageError(f"--timeout: {exc}") from None
    result = team_ops.wait(home, _caller(home, as_job), ids or None, timeout_s)
    render.emit(result, json_out, lambda r: [_rows(r["workers"])] if r["workers"] else ["no workers"])
    if not result["done"]:
        render.note(f"zen: not all workers settled within {timeout}")
        return 1
    return 0


@team.command("report")
def report(status_word: str = typer.Argument(..., metavar="STATUS", help="done | blocked | progress."),
           summary: str = typer.Option("", "--summary", help="What was done (for done and progress)."),
           blocker: str = typer.Option("", "--blocker", help="What blocks the work (for blocked)."),
           as_job: str = AS, json_out: bool = JSON) -> int:
    """Report to the --as job's parent (as a worker's agent_report does)."""
    home = common.home()
    result = team_ops.report(home, _caller(home, as_job), status_word, summary, blocker)
    render.emit(result, json_out, lambda r: [f"reported {r['status']} for {r['job']}"])
    return 0


@team.command("control")
def control(job: str = typer.Argument(..., help="The worker."),
            action: str = typer.Argument(..., help="pause | resume | cancel | finish | continue."),
            expected_revision: int = typer.Option(None, "--expected-revision",
                                                  help="Act only if the worker is still at this revision."),
            as_job: str = AS, json_out: bool = JSON) -> int:
    """Control a worker, compare-and-set on its revision. A stale revision is refused (exit 1)
    with the current one."""
    home = common.home()
    result = team_ops.control(home, _caller(home, as_job), job, action, expected_revision)
    render.emit(result, json_out, lambda r: [f"{r['action']}: {r['id']} is {r['state']} (revision {r['revision']})"])
    return 0


@team.command("message")
def message(job: str = typer.Argument(..., help="A worker of the --as job, or its parent."),
            text: str = typer.Argument(..., help="The message; - reads stdin."),
            as_job: str = AS, json_out: bool = JSON) -> int:
    """Message a job of the team: typed in if it waits, else delivered at its next turn's end."""
    home = common.home()
    result = team_ops.message(home, _caller(home, as_job), job, common.text_or_stdin(text) or "")
    render.emit(result, json_out, lambda r: [f"{'delivered to' if r['delivered'] else 'queued for'} {r['job']}"])
    return 0


def tree_lines(nodes: list[dict[str, Any]]) -> Iterator[str]:
    """A forest of jobs as text: each worker under its parent, drawn like `tree`."""
    by_id = {}
    for _, n in teamtree.walk(nodes):
        by_id[str(n["id"])] = n
    for job, drawn in branches(nodes):
        n = by_id[job]
        state = n["state"] + (f" ({n['reason']})" if n.get("reason") else "")
        yield f"{drawn}{job}  {n['name']}  {state}"


@team.command("tree")
def tree(json_out: bool = JSON) -> int:
    """Every job with the workers it started, as a tree."""
    forest = teams.tree(common.home())
    render.emit(forest, json_out, lambda f: list(tree_lines(f)) or ["no jobs yet"])
    return 0


def register(app: typer.Typer) -> None:
    app.add_typer(team, name="team")


"""zen metrics: tokens, cost, API calls and errors, latency, tools, file operations, guard
decisions, turns and wall time of one job or of the fleet."""

from __future__ import annotations

import time
from collections.abc import Iterator, Mapping
from typing import Any

import typer

from zen.cli import common, render
from zen.cli.common import JSON
from zen.cli.render import count, ms
from zen.core.durations import format_duration, parse_duration
from zen.errors import UsageError
from zen.observe.report import GROUPS, MetricsReport, fleet_report, job_report, since_iso


def _latency(label: str, lat: Mapping[str, Any]) -> str:
    if not lat.get("count"):
        return ""
    return f"  {label} p50 {ms(lat['p50'])}, p95 {ms(lat['p95'])}"


def figure_lines(f: Mapping[str, Any]) -> Iterator[str]:
    yield (f"tokens      input {count(f['input_tokens'])}  output {count(f['output_tokens'])}  "
           f"cache read {count(f['cache_read_input_tokens'])}  cache write {count(f['cache_creation_input_tokens'])}"
           + (f" (1 h: {count(f['cache_creation_1h_input_tokens'])})" if f["cache_creation_1h_input_tokens"] else ""))
    yield f"cost        ${f['cost_usd']:.6f}" + (
        f"  (not in the price table: {', '.join(render.clean(m or '?') for m in f['unpriced_models'])};"
        " priced from zen.yaml prices.default)" if f.get("unpriced_models") else "")
    yield (f"api         {count(f['api_calls'])} calls, {f['api_errors']} errors ({f['error_rate']:.1%})"
           + _latency("latency", f["api_latency_ms"]))
    yield f"tools       {count(f['tool_calls'])} calls" + _latency("latency", f["tool_latency_ms"])
    fo = f["file_operations"]
    yield f"files       read {fo['read']}  write {fo['write']}  delete {fo['delete']}"
    yield f"guard       allowed {f['guard']['allowed']}  denied {f['guard']['denied']}"
    yield f"turns       {f['turns']}" + _latency("latency", f["turn_latency_ms"])
    yield f"wall time   {format_duration(f['wall_time_s']) if f['wall_time_s'] else '-'}"


def _text(r: MetricsReport) -> Iterator[render.Out]:
    window = f"since {r.since}" if r.since else "all time"
    if r.scope == "job":
        x = r.extra
        yield f"job         {r.job} ({render.clean(x['name'])}, {x['agent']}, lane {x['lane_name'] or '-'}, {x['state']})"
        yield f"window      {window}"
    else:
        x = r.extra
        scope = f"lane {r.lane}" if r.lane else "fleet"
        yield (f"{scope:<11} {r.total['jobs']} jobs, {x['active_sessions']} active sessions, "
               f"{x['tasks_in_progress']} tasks in progress ({x['tasks_queued']} queued); {window}")
    yield from figure_lines(r.total)
    rec = r.extra.get("reconciliation")
    if rec:
        verdict = "agree" if rec["tokens_agree"] else "DIFFER"
        yield (f"sources     OpenTelemetry and transcript {verdict}: {rec['otel']['api_calls']} vs "
               f"{rec['transcript_or_rollout']['api_calls']} calls")
    if r.by:
        rows = [[k, g["jobs"], g["api_calls"], g["api_errors"], count(g["input_tokens"]), count(g["output_tokens"]),
                 count(g["cache_read_input_tokens"]), count(g["cache_creation_input_tokens"]), f"${g['cost_usd']:.4f}"]
                for k, g in r.groups.items()]
        yield render.Table([r.by, "jobs", "calls", "errors", "input", "output", "cache read", "cache write", "cost"],
                           rows)


def metrics(
    job: str = typer.Argument(None, help="Only this job (id, unique prefix or name); default: the fleet."),
    lane: str = typer.Option(None, "--lane", help="Only the jobs of this lane."),
    since: str = typer.Option(None, "--since", help="Only what happened in the last DURATION, e.g. 24h, 7d."),
    by: str = typer.Option(None, "--by", help="Group the fleet's figures by lane, agent or domain."),
    json_out: bool = JSON,
) -> int:
    """Tokens by class, cost, API calls and errors, API / tool / turn latency (p50, p95), tool
    calls, file operations, guard decisions, turns and wall time: of one job, or of the fleet."""
    from zen.orchestration.read.query import resolve_job  # only a job's report needs it

    since_s = None
    if since is not None:
        try:
            since_s = parse_duration(since)
        except ValueError as exc:
            raise UsageError(f"--since: {exc}") from None
    if by is not None and by not in GROUPS:
        raise UsageError(f"--by must be one of {', '.join(GROUPS)}, not {by!r}")
    home = common.home()
    start = since_iso(since_s, time.time())
    if job is not None:
        if lane is not None or by is not None:
            raise UsageError("give a job, or --lane / --by for the fleet, not both")
        report = job_report(home, resolve_job(home, job), start)
    else:
        report = fleet_report(home, start, lane, by)
    render.emit(report, json_out, _text)
    return 0


def register(app: typer.Typer) -> None:
    app.command("metrics")(metrics)

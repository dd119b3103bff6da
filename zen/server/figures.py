"""The Metrics tab's figures: `zen metrics`' own report (zen.observe.report), never a count of
its own.

The dashboard once folded the timelines by rules of its own and, on one fleet, showed 4 file
writes where `zen metrics` showed 11 (it counted only the Write/Edit tools, not a shell
command's writes), 23 tool calls for 14 (it counted the calls the guardian denied as calls that
ran) and a fleet turn p50 of 2.06 s for 0.80 s (the median of the jobs' medians). Each row here
is the report's figures as they are (the names of `zen metrics --json`), plus the flat names the
tab's charts read (`file_writes`, `guard_allowed`, `turn_latency_p50_s`, ...), taken from them.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from zen.observe.report import MetricsReport, fleet_report, job_report
from zen.store.layout import Home


def _seconds(latency: Mapping[str, Any], key: str) -> float | None:
    value = latency.get(key)
    return None if value is None else round(float(value) / 1000.0, 4)


def row(job: str | None, f: Mapping[str, Any]) -> dict[str, Any]:
    """One job's figures (or the fleet's, job None) in both the report's and the charts' names."""
    fo, guard, turns = f["file_operations"], f["guard"], f["turn_latency_ms"]
    return {**f, "job": job,
            "cache_read_tokens": f["cache_read_input_tokens"],
            "cache_write_tokens": f["cache_creation_input_tokens"],
            "guard_allowed": guard["allowed"], "guard_denied": guard["denied"],
            "file_reads": fo["read"], "file_writes": fo["write"], "file_deletes": fo["delete"],
            "wall_s": f["wall_time_s"],
            "turn_latency_p50_s": _seconds(turns, "p50"), "turn_latency_p95_s": _seconds(turns, "p95")}


def job_metrics(home: Home, job_id: str) -> dict[str, Any]:
    """The figures of `zen metrics JOB --json`, as a row."""
    report = job_report(home, job_id)
    return row(job_id, report.total)


def fleet_metrics(home: Home) -> dict[str, Any]:
    """The fleet's total as `zen metrics --json` gives it, each job's row, and the session counts."""
    report: MetricsReport = fleet_report(home)
    return {"total": row(None, report.total), "jobs": [row(j["job"], j) for j in report.per_job()],
            "active_sessions": report.extra["active_sessions"],
            "tasks_in_progress": report.extra["tasks_in_progress"]}


__all__ = ["fleet_metrics", "job_metrics", "row"]

"""Metrics folded from a hand-made timeline: every figure of `zen metrics --json`, the choice of
usage source, windows, grouping, reconciliation, compaction, and file operations from the
guardian's decisions."""

from __future__ import annotations

import json
from typing import Any

import pytest

from zen.observe.fileops import shell_ops
from zen.observe.metrics import JobFold, figures, headline, percentile, reconciliation

N = iter(range(1, 10_000))


def ev(etype: str, ts: str, **fields: Any) -> dict[str, Any]:
    return {"v": 1, "seq": next(N), "ts": ts, "job": "j1", "type": etype, "actor": "x", **fields}


def T(minute: int, second: float = 0.0) -> str:
    return f"2026-11-29T10:{minute:02d}:{second:06.3f}Z"


def req(ts: str, ms: float | None, model: str = "claude-sonnet-4-5", inp: int = 10, out: int = 100,
        cost: float = 0.0015) -> dict[str, Any]:
    fields: dict[str, Any] = {"source": "otel", "otel": f"s:{ts}", "model": model, "input_tokens": inp,
                              "output_tokens": out, "cache_read_input_tokens": 1000,
                              "cache_creation_input_tokens": 0, "cache_creation_1h_input_tokens": 0,
                              "cost_usd": cost}
    if ms is not None:
        fields["duration_ms"] = ms
    return ev("api.request", ts, **fields)


def usage(ts: str, calls: int, inp: int, out: int, cost: float, one_hour: int = 0, errors: int = 0) -> dict[str, Any]:
    return ev("usage", ts, source="transcript", ledger="claude-s", n=1, input_tokens=inp, output_tokens=out,
              cache_read_input_tokens=1000 * calls, cache_creation_input_tokens=one_hour,
              cache_creation_1h_input_tokens=one_hour, cost_usd=cost, api_calls=calls, api_errors=errors)


def timeline() -> list[dict[str, Any]]:
    return [
        ev("task.received", T(0), task={"name": "fix", "agent": "claude", "lane": "app", "domain": "code"}),
        ev("agent.spawned", T(0, 1), session="zen-j1", target="zen-j1:0.0"),
        req(T(0, 5), 1000), req(T(0, 9), 3000),
        ev("guard.allowed", T(0, 10), decision="allow", rule="ok", reason="", tool="Write", file_path="/w/a.py"),
        ev("guard.allowed", T(0, 11), decision="allow", rule="ok", reason="", tool="Bash",
           command="cat a.py b.py > c.txt && rm -f old.txt"),
        ev("guard.denied", T(0, 12), decision="deny", rule="fs", reason="no", tool="Bash", command="rm -rf /"),
        ev("tool.result", T(0, 13), source="otel", otel="s:t1", tool="Write", success=True, duration_ms=40),
        ev("tool.result", T(0, 14), source="otel", otel="s:t2", tool="Bash", success=False, duration_ms=400),
        ev("api.error", T(0, 15), source="otel", otel="s:e1", model="claude-sonnet-4-5", status_code=529,
           error="Overloaded", attempt=1, duration_ms=300),
        ev("turn.waiting", T(0, 21), reason="idle", hook="Stop"),          # turn 1 took 20 s
        usage(T(0, 21, ), calls=2, inp=20, out=200, cost=0.00306),
        ev("input.sent", T(5, 0), text="more", chars=4),
        req(T(5, 2), 2000), req(T(5, 3), None),                          # a call with no duration
        ev("turn.waiting", T(5, 30), reason="idle", hook="Stop"),          # turn 2 took 30 s
        ev("agent.exited", T(6, 0), exit_code=0, signal=None),
    ]


def fold(events: list[dict[str, Any]]) -> JobFold:
    f = JobFold("j1")
    for e in events:
        f.apply(e)
    return f


def test_every_figure_of_one_job() -> None:
    got = figures([fold(timeline())], now=T(59))
    # OpenTelemetry counted 4 calls, the transcript 2 (its second turn not read yet): OTel wins
    assert got["usage_sources"] == {"otel": 1, "transcript_or_rollout": 0, "none": 0}
    assert got["api_calls"] == 4 and got["input_tokens"] == 40 and got["output_tokens"] == 400
    assert got["cache_read_input_tokens"] == 4000 and got["cost_usd"] == pytest.approx(0.006)
    assert got["api_errors"] == 1 and got["error_rate"] == pytest.approx(1 / 5)
    assert got["api_latency_ms"] == {"count": 3, "p50": 2000.0, "p95": 3000.0}
    assert got["tool_calls"] == 2 and got["tool_errors"] == 1
    assert got["tool_latency_ms"]["p50"] == 40.0 and got["tool_latency_ms"]["p95"] == 400.0
    # Write: 1 write; cat a b > c: 2 reads, 1 write; rm -f old: 1 delete; the denied rm counts nothing
    assert got["file_operations"] == {"read": 2, "write": 2, "delete": 1}
    assert got["guard"] == {"allowed": 2, "denied": 1}
    assert got["turns"] == 2 and got["turn_latency_ms"] == {"count": 2, "p50": 20000.0, "p95": 30000.0}
    assert got["wall_time_s"] == pytest.approx(359.0)      # spawned 10:00:01, exited 10:06:00
    json.dumps(got)                                          # plain JSON, every figure named


def test_the_transcript_wins_a_tie_for_its_cache_write_split() -> None:
    events = [e for e in timeline() if e["type"] != "usage"]
    events.insert(-1, usage(T(5, 31), calls=4, inp=40, out=400, cost=0.0072, one_hour=500))
    got = figures([fold(events)], now=T(59))
    assert got["usage_sources"]["transcript_or_rollout"] == 1
    assert got["api_calls"] == 4 and got["cache_creation_1h_input_tokens"] == 500
    assert got["cost_usd"] == pytest.approx(0.0072)
    assert got["api_errors"] == 1            # errors still from OpenTelemetry, which is on
    rec = reconciliation(fold(events))
    assert rec is not None and rec["otel"]["api_calls"] == 4 and not rec["tokens_agree"]


def test_without_telemetry_zen_still_sees_the_guard_turns_and_the_transcript() -> None:
    events = [e for e in timeline() if e["type"] not in ("api.request", "api.error", "tool.result")]
    got = figures([fold(events)], now=T(59))
    assert got["api_calls"] == 2 and got["cost_usd"] == pytest.approx(0.00306)
    assert got["tool_calls"] == 2                 # the guarded calls it let through
    assert got["turns"] == 2 and got["guard"]["denied"] == 1
    assert got["api_latency_ms"] == {"count": 0, "p50": None, "p95": None}


def test_a_window_counts_only_its_minutes_and_clips_wall_time() -> None:
    got = figures([fold(timeline())], since=T(5), now=T(59))
    assert got["api_calls"] == 2 and got["turns"] == 1 and got["guard"]["allowed"] == 0
    assert got["wall_time_s"] == pytest.approx(60.0)


def test_many_jobs_add_up_and_percentiles_merge_their_samples() -> None:
    a, b = fold(timeline()), fold(timeline())
    got = figures([a, b], now=T(59))
    assert got["jobs"] == 2 and got["api_calls"] == 8 and got["api_latency_ms"]["count"] == 6


def test_metrics_json_round_trips_and_compaction_keeps_totals() -> None:
    f = fold(timeline())
    again = JobFold.from_json(json.loads(json.dumps(f.to_json())))
    assert figures([again], now=T(59)) == figures([f], now=T(59))
    before = figures([again], now=T(59))
    assert again.compact(T(4)) == 1                          # minute 10:00 merged
    after = figures([again], now=T(59))
    assert after["api_calls"] == before["api_calls"] and after["cost_usd"] == before["cost_usd"]
    assert after["file_operations"] == before["file_operations"]
    assert after["api_latency_ms"]["count"] == 1             # only the samples kept after 10:05


def test_headline_from_state_usage_sums() -> None:
    assert headline({"input_tokens": 10, "output_tokens": 5, "cost_usd": 0.5, "api_calls": 2,
                     "otel_api_calls": 1, "otel_api_errors": 3}) == {
        "tokens": 15, "cost_usd": 0.5, "api_calls": 2, "api_errors": 3}
    assert headline({"otel_api_calls": 3, "otel_tokens": 99, "otel_cost_usd": 0.1})["tokens"] == 99


def test_percentile_nearest_rank() -> None:
    assert percentile([], 0.5) is None
    xs = [float(i) for i in range(1, 101)]
    assert percentile(xs, 0.5) == 50.0 and percentile(xs, 0.95) == 95.0 and percentile([7.0], 0.95) == 7.0


@pytest.mark.parametrize(("command", "want"), [
    ("cat a b", {"read": 2, "write": 0, "delete": 0}),
    ("rm -rf build dist", {"read": 0, "write": 0, "delete": 2}),
    ("echo hi > out.txt 2>/dev/null", {"read": 0, "write": 1, "delete": 0}),
    ("sed -i s/a/b/ f.py && git rm old.py", {"read": 0, "write": 1, "delete": 1}),
    ("FOO=1 sudo cp a b dest/", {"read": 2, "write": 1, "delete": 0}),
    ("ls -la; pytest -q", {"read": 0, "write": 0, "delete": 0}),
    ("grep -n 'x | y' src/a.py | wc -l", {"read": 1, "write": 0, "delete": 0}),
    ("echo 'unterminated", {"read": 0, "write": 0, "delete": 0}),
])
def test_file_operations_of_shell_commands(command: str, want: dict[str, int]) -> None:
    assert shell_ops(command) == want

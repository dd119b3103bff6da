"""How a job's timeline folds into the figures of `zen metrics` and the headline of `zen status`:
which usage source wins and why, where errors come from, turns and wall time, windows, what
survives metrics.json, and file operations of each guarded tool. Pure: hand-made events."""

from __future__ import annotations

import json
from typing import Any

import pytest

from zen.observe.fileops import ops_of, shell_ops
from zen.observe.metrics import (
    OLDER,
    JobFold,
    figures,
    headline,
    reconciliation,
    usage_choice,
    window,
)

SEQ = iter(range(1, 100_000))


def T(minute: int, second: float = 0.0, hour: int = 10) -> str:
    return f"2026-11-29T{hour:02d}:{minute:02d}:{second:06.3f}Z"


def ev(etype: str, ts: str, **fields: Any) -> dict[str, Any]:
    return {"v": 1, "seq": next(SEQ), "ts": ts, "job": "j1", "type": etype, "actor": "x", **fields}


def otel_call(ts: str, inp: int = 10, out: int = 5, cost: float = 0.001, ms: Any = 100.0, **kw: Any) -> dict[str, Any]:
    return ev("api.request", ts, source="otel", otel=f"k{next(SEQ)}", model="claude-haiku-4-5", input_tokens=inp,
              output_tokens=out, cache_read_input_tokens=0, cache_creation_input_tokens=0,
              cache_creation_1h_input_tokens=0, cost_usd=cost, duration_ms=ms, **kw)


def usage(ts: str, calls: int, inp: int, out: int = 0, cost: float = 0.0, errors: int = 0, **kw: Any) -> dict[str, Any]:
    return ev("usage", ts, source="transcript", ledger="claude-s", n=1, input_tokens=inp, output_tokens=out,
              cache_read_input_tokens=0, cache_creation_input_tokens=0, cache_creation_1h_input_tokens=0,
              cost_usd=cost, api_calls=calls, api_errors=errors, **kw)


def fold(*events: dict[str, Any], job: str = "j1") -> JobFold:
    f = JobFold(job)
    for e in events:
        f.apply(e)
    return f


# -- the usage source ------------------------------------------------------------------------------

def test_the_source_that_counted_more_calls_wins_and_they_are_never_added() -> None:
    f = fold(otel_call(T(0, 1), inp=100), otel_call(T(0, 2), inp=100), otel_call(T(0, 3), inp=100),
             usage(T(0, 4), calls=2, inp=999))
    got = figures([f])
    assert got["api_calls"] == 3 and got["input_tokens"] == 300
    assert got["usage_sources"] == {"otel": 1, "transcript_or_rollout": 0, "none": 0}


def test_a_tie_goes_to_the_transcript() -> None:
    f = fold(otel_call(T(0, 1), inp=100), usage(T(0, 4), calls=1, inp=120))
    got = figures([f])
    assert got["input_tokens"] == 120 and got["usage_sources"]["transcript_or_rollout"] == 1


def test_a_transcript_with_tokens_but_no_calls_still_counts() -> None:
    source, chosen = usage_choice(window(fold(usage(T(0, 1), calls=0, inp=50)), None))
    assert source == "files" and chosen["input_tokens"] == 50
    assert usage_choice(window(fold(ev("agent.spawned", T(0))), None))[0] == "none"


def test_errors_come_from_opentelemetry_when_it_is_on_else_from_the_transcript() -> None:
    with_otel = fold(otel_call(T(0, 1)), ev("api.error", T(0, 2), source="otel", otel="e", model="m",
                                            status_code=529, error="x", attempt=1),
                     usage(T(0, 3), calls=5, inp=1, errors=4))
    got = figures([with_otel])
    assert got["api_errors"] == 1 and got["api_calls"] == 5       # calls from the transcript (more)
    assert got["error_rate"] == pytest.approx(1 / 6, abs=1e-6)
    without = figures([fold(usage(T(0, 3), calls=3, inp=1, errors=1))])
    assert without["api_errors"] == 1 and without["error_rate"] == 0.25
    assert figures([fold()])["error_rate"] == 0.0


def test_otel_errors_alone_turn_otel_on() -> None:
    f = fold(ev("api.error", T(0, 2), source="otel", otel="e", model="m", status_code=500, error="x", attempt=1),
             usage(T(0, 3), calls=2, inp=1, errors=7))
    assert figures([f])["api_errors"] == 1


def test_reconciliation_compares_the_two_sources_only_when_both_counted() -> None:
    assert reconciliation(fold(otel_call(T(0, 1)))) is None
    assert reconciliation(fold(usage(T(0, 1), calls=1, inp=10))) is None
    same = reconciliation(fold(otel_call(T(0, 1), inp=10, out=5, cost=0.001),
                               usage(T(0, 2), calls=1, inp=10, out=5, cost=0.001)))
    assert same is not None and same["agree"] and same["tokens_agree"]
    priced_apart = reconciliation(fold(otel_call(T(0, 1), inp=10, out=5, cost=0.001),
                                       usage(T(0, 2), calls=1, inp=10, out=5, cost=0.002)))
    assert priced_apart is not None and priced_apart["tokens_agree"] and not priced_apart["agree"]
    assert priced_apart["transcript_or_rollout"]["cost_usd"] == 0.002


# -- the headline ----------------------------------------------------------------------------------

def test_headline_chooses_like_figures_and_rounds_the_cost() -> None:
    files = {"input_tokens": 10, "output_tokens": 20, "cache_read_input_tokens": 30,
             "cache_creation_input_tokens": 40, "cache_creation_1h_input_tokens": 40,   # inside the 40
             "cost_usd": 0.123456789, "api_calls": 4, "api_errors": 2}
    assert headline(files) == {"tokens": 100, "cost_usd": 0.123457, "api_calls": 4, "api_errors": 2}
    more_otel = {**files, "otel_api_calls": 5, "otel_tokens": 7, "otel_cost_usd": 1.0}
    assert headline(more_otel) == {"tokens": 7, "cost_usd": 1.0, "api_calls": 5, "api_errors": 0}
    assert headline({}) == {"tokens": 0, "cost_usd": 0.0, "api_calls": 0, "api_errors": 0}
    assert headline({"api_calls": None, "cost_usd": None, "otel_api_errors": 2})["api_errors"] == 2


# -- tools, guard, turns, wall time ----------------------------------------------------------------

def test_tool_calls_come_from_opentelemetry_else_from_what_the_guardian_allowed() -> None:
    guarded = [ev("guard.allowed", T(0, i), decision="allow", rule="r", reason="", tool="Read", file_path="/a")
               for i in range(3)]
    guarded.append(ev("guard.denied", T(0, 9), decision="deny", rule="r", reason="no", tool="Bash", command="x"))
    got = figures([fold(*guarded)])
    assert got["tool_calls"] == 3 and got["guard"] == {"allowed": 3, "denied": 1}
    assert got["file_operations"] == {"read": 3, "write": 0, "delete": 0}
    tools = [ev("tool.result", T(1, 0), source="otel", otel="t1", tool="Read", success=True, duration_ms=5),
             ev("tool.result", T(1, 1), source="otel", otel="t2", tool="Bash", success=False)]
    got = figures([fold(*guarded, *tools)])
    assert got["tool_calls"] == 2 and got["tool_errors"] == 1 and got["tool_latency_ms"]["count"] == 1


def test_a_denied_call_touches_no_file() -> None:
    f = fold(ev("guard.denied", T(0), decision="deny", rule="r", reason="", tool="Bash", command="rm -rf a b"))
    assert figures([f])["file_operations"] == {"read": 0, "write": 0, "delete": 0}


def test_turns_run_from_a_start_to_the_next_wait() -> None:
    f = fold(ev("agent.spawned", T(0, 0)), ev("turn.working", T(0, 5)),          # already in a turn
             ev("turn.waiting", T(0, 10)),                                       # 10 s
             ev("turn.waiting", T(0, 20)),                                       # no turn running: ignored
             ev("input.sent", T(1, 0), text="go", chars=2), ev("turn.waiting", T(1, 4)),   # 4 s
             ev("input.sent", T(2, 0), text="go", chars=2), ev("agent.exited", T(2, 30), exit_code=0, signal=None),
             ev("turn.waiting", T(2, 31)))                                       # after the exit: no turn
    got = figures([f], now=T(59))
    assert got["turns"] == 2 and got["turn_latency_ms"] == {"count": 2, "p50": 4000.0, "p95": 10000.0}
    assert got["wall_time_s"] == 150.0                                           # spawn to exit


def test_wall_time_of_a_live_job_runs_to_now_and_a_window_clips_it() -> None:
    f = fold(ev("agent.spawned", T(0, 0)))
    assert figures([f], now=T(10))["wall_time_s"] == 600.0
    assert figures([f], since=T(8), now=T(10))["wall_time_s"] == 120.0
    assert figures([f])["wall_time_s"] == 0.0                                    # no `now`: not measured
    assert figures([fold()], now=T(10))["wall_time_s"] == 0.0                    # never started


def test_the_first_end_is_the_end() -> None:
    f = fold(ev("agent.spawned", T(0)), ev("job.failed", T(1), reason="limit"),
             ev("agent.exited", T(3), exit_code=1, signal=None))
    assert f.ended_at == T(1) and figures([f], now=T(9))["wall_time_s"] == 60.0


# -- windows, events that do not fold, metrics.json ------------------------------------------------

def test_a_window_takes_the_minutes_from_its_start_and_never_the_compacted_bucket() -> None:
    f = fold(otel_call(T(0, 30)), otel_call(T(1, 0)), otel_call(T(2, 59.9)))
    assert figures([f], since=T(1, 45))["api_calls"] == 2                        # minute 10:01 is in
    f.compact(T(1, 0))
    assert OLDER in f.buckets and figures([f])["api_calls"] == 3
    assert figures([f], since=T(0))["api_calls"] == 1                            # compacted: out of windows


def test_events_of_the_wrong_shape_are_not_folded_but_keep_the_sequence() -> None:
    f = fold(otel_call(T(0, 1)))
    f.apply({"type": "api.request", "seq": 10, "ts": T(0, 2), "input_tokens": "lots", "model": 3})
    f.apply({"seq": 11, "ts": T(0, 3)})                                          # no type
    f.apply({"type": "something.new", "ts": T(0, 4)})                            # unknown: ignored
    f.apply({"type": "api.request", "ts": 12345, "input_tokens": 1})             # a wrong-typed ts: skipped
    f.apply({"type": "api.request", "input_tokens": 1})                          # no ts: the "older" bucket
    assert f.seq == 14
    got = figures([f])
    assert got["api_calls"] == 2 and got["input_tokens"] == 11 and OLDER in f.buckets


def test_unpriced_models_and_models_are_remembered_once_each() -> None:
    f = fold(otel_call(T(0, 1), unpriced=["m1"]), usage(T(0, 2), calls=1, inp=1, model="m2", unpriced=["m1", "m2"]))
    assert f.unpriced == ["m1", "m2"] and f.models == {"claude-haiku-4-5": 1, "m2": 1}
    g = fold(otel_call(T(0, 1), unpriced=["m3"]), job="j2")
    assert figures([f, g])["unpriced_models"] == ["m1", "m2", "m3"]


def test_task_info_and_a_repo_lane() -> None:
    f = fold(ev("task.received", T(0), task={"name": "fix", "agent": "codex", "repo": "/srv/x", "domain": "code"}))
    assert f.info == {"name": "fix", "lane": "/srv/x", "agent": "codex", "domain": "code"}


def test_metrics_json_keeps_a_turn_in_progress() -> None:
    # the spawn starts the first turn; input sent during it does not restart it
    f = fold(ev("agent.spawned", T(0)), ev("input.sent", T(1), text="x", chars=1))
    again = JobFold.from_json(json.loads(json.dumps(f.to_json())))
    again.apply(ev("turn.waiting", T(1, 30)))
    assert figures([again])["turn_latency_ms"]["p50"] == 90000.0


def test_metrics_json_of_another_version_is_refused() -> None:
    data = fold().to_json()
    with pytest.raises(ValueError, match="metrics format 2"):
        JobFold.from_json({**data, "v": 2})


def test_many_jobs_are_summed_and_sampled_together() -> None:
    jobs = [fold(otel_call(T(0, 1), inp=10, ms=float(i * 100)), job=f"j{i}") for i in range(1, 11)]
    got = figures(jobs)
    assert got["jobs"] == 10 and got["api_calls"] == 10 and got["input_tokens"] == 100
    assert got["api_latency_ms"] == {"count": 10, "p50": 500.0, "p95": 1000.0}
    assert got["cost_usd"] == pytest.approx(0.01)


def test_a_duration_that_is_not_a_number_is_no_sample() -> None:
    f = fold(otel_call(T(0, 1), ms=None), otel_call(T(0, 2), ms=True), otel_call(T(0, 3), ms=12.34))
    assert figures([f])["api_latency_ms"] == {"count": 1, "p50": 12.3, "p95": 12.3}


# -- file operations of each guarded tool ----------------------------------------------------------

@pytest.mark.parametrize("event,want", [
    ({"tool": "Write"}, {"read": 0, "write": 1, "delete": 0}),
    ({"tool": "MultiEdit"}, {"read": 0, "write": 1, "delete": 0}),
    ({"tool": "apply_patch"}, {"read": 0, "write": 1, "delete": 0}),
    ({"tool": "NotebookRead"}, {"read": 1, "write": 0, "delete": 0}),
    ({"tool": "Bash", "command": "git rm -q a.py"}, {"read": 0, "write": 0, "delete": 1}),
    ({"tool": "Bash", "command": "ls"}, None),
    ({"tool": "Glob"}, None), ({"tool": "Bash", "command": ""}, None), ({}, None),
])
def test_file_operations_of_a_guarded_tool_call(event: dict[str, Any], want: dict[str, int] | None) -> None:
    assert ops_of(event) == want


@pytest.mark.parametrize("command,want", [
    ("/usr/bin/rm -f a", (0, 0, 1)),                 # a path to the command
    ("cat <<'EOF' > notes.md\nhi\nEOF", (0, 1, 0)),  # a here-doc written to a file
    ("cat <<< 'text' | wc -l", (0, 0, 0)),           # a here-string is no file
    ("echo x >> log.txt; echo y 2>&1", (0, 1, 0)),   # 2>&1 writes no file
    ("cp -r src dst", (1, 1, 0)),
    ("env A=1 nice touch a b c", (0, 3, 0)),
    ("rg pattern", (0, 0, 0)),                       # a pattern is no file
    ("awk '{print $1}' a.txt b.txt", (2, 0, 0)),
    ("rm # a comment naming files", (0, 0, 1)),
    ("git show HEAD:a.py | head -5", (1, 0, 0)),
])
def test_more_shell_file_operations(command: str, want: tuple[int, int, int]) -> None:
    got = shell_ops(command)
    assert (got["read"], got["write"], got["delete"]) == want

"""The limits enforcer in-process (zen/observe/limits.py `Limits.observe`): on an initialised
home with policy/guardian.yaml limits and a hand-written timeline, when a job is stopped, with
what reason, exactly once per agent start, and what `usage_of` reports against each limit."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from zen.observe import snapshot
from zen.observe.limits import Limits, usage_of
from zen.store import events as ev_store
from zen.store.layout import Home

JOB = "20261201T100000Z-limits-0001"
_KEYS = iter(range(1, 100_000))        # a distinct OpenTelemetry key per call


def set_limits(home: Path, **limits: int) -> None:
    text = "zen: 1\nlimits:\n" + "".join(f"  {k}: {v}\n" for k, v in limits.items())
    (home / "policy" / "guardian.yaml").write_text(text)


def job_dir(home: Path) -> Path:
    d = Home(home).job(JOB).dir
    d.mkdir(parents=True, exist_ok=True)
    return d


def add(home: Path, etype: str, **fields: Any) -> dict[str, Any]:
    return ev_store.append(job_dir(home), JOB, etype, **fields)


def call(home: Path, n: int = 1) -> list[dict[str, Any]]:
    return [add(home, "api.request", source="otel", otel=f"s:{next(_KEYS)}", model="claude-haiku-4-5",
                input_tokens=100, output_tokens=10, cache_read_input_tokens=0, cache_creation_input_tokens=0,
                cache_creation_1h_input_tokens=0, cost_usd=0.0001) for _ in range(n)]


def types(home: Path) -> list[str]:
    return [e["type"] for e in ev_store.read_events(job_dir(home) / "events.jsonl")]


def test_a_job_reaching_its_api_call_limit_is_failed_with_the_reason(home: Path) -> None:
    set_limits(home, max_api_calls=3)
    lim = Limits(Home(home))
    add(home, "agent.spawned", session="zen-x", target="zen-x:0.0")
    assert lim.observe(JOB, call(home, 2)) is None                # 2 of 3: nothing yet
    got = lim.observe(JOB, call(home, 1))
    assert got is not None and (got.limit, got.max, got.used) == ("max_api_calls", 3, 3)
    evs = list(ev_store.read_events(job_dir(home) / "events.jsonl"))
    reached = [e for e in evs if e["type"] == "limit.reached"]
    failed = [e for e in evs if e["type"] == "job.failed"]
    assert len(reached) == 1 and len(failed) == 1
    assert reached[0]["limit"] == "max_api_calls" and reached[0]["used"] == 3
    assert failed[0]["reason"] == "limit max_api_calls reached: 3 API calls of 3 allowed (policy/guardian.yaml limits)"
    assert evs.index(reached[0]) < evs.index(failed[0])


def test_it_fires_once_per_agent_start(home: Path) -> None:
    set_limits(home, max_api_calls=1)
    lim = Limits(Home(home))
    add(home, "agent.spawned", session="zen-x", target="zen-x:0.0")
    assert lim.observe(JOB, call(home)) is not None
    assert lim.observe(JOB, call(home)) is None                    # stopped already: not again
    assert types(home).count("limit.reached") == 1
    add(home, "agent.spawned", session="zen-x", target="zen-x:0.0")   # a human restarts it
    assert lim.observe(JOB, call(home)) is not None
    assert types(home).count("limit.reached") == 2


def test_a_job_that_ended_otherwise_is_not_failed_again(home: Path) -> None:
    set_limits(home, max_api_calls=1)
    add(home, "agent.spawned", session="zen-x", target="zen-x:0.0")
    new = call(home)
    add(home, "job.cancelled", reason="by a human")
    assert Limits(Home(home)).observe(JOB, new) is None
    assert "limit.reached" not in types(home) and "job.failed" not in types(home)


def test_events_that_move_no_counted_figure_are_not_even_looked_at(home: Path) -> None:
    set_limits(home, max_api_calls=1)
    add(home, "agent.spawned", session="zen-x", target="zen-x:0.0")
    call(home, 5)                                                  # over the limit already
    lim = Limits(Home(home))
    noise = [add(home, "turn.waiting", reason="idle", hook="Stop")]
    assert lim.observe(JOB, noise) is None and "limit.reached" not in types(home)
    assert lim.observe(JOB, [{"type": "usage"}]) is not None      # a counted type: checked


def test_file_operations_count_what_the_guardian_let_through(home: Path) -> None:
    set_limits(home, max_file_operations=3)
    lim = Limits(Home(home))
    add(home, "agent.spawned", session="zen-x", target="zen-x:0.0")
    denied = add(home, "guard.denied", decision="deny", rule="fs", reason="no", tool="Bash", command="rm -rf a b c d")
    assert lim.observe(JOB, [denied]) is None                      # denied: nothing touched
    ok = add(home, "guard.allowed", decision="allow", rule="ok", reason="", tool="Bash", command="cat a b")
    assert lim.observe(JOB, [ok]) is None
    ok2 = add(home, "guard.allowed", decision="allow", rule="ok", reason="", tool="Write", file_path="/w/x")
    got = lim.observe(JOB, [ok2])
    assert got is not None and (got.limit, got.used) == ("max_file_operations", 3)


def test_tokens_count_every_class_from_the_chosen_source(home: Path) -> None:
    set_limits(home, max_tokens_per_session=1000)
    lim = Limits(Home(home))
    add(home, "agent.spawned", session="zen-x", target="zen-x:0.0")
    u = add(home, "usage", source="transcript", ledger="claude-s", n=1, input_tokens=100, output_tokens=100,
            cache_read_input_tokens=700, cache_creation_input_tokens=99, cache_creation_1h_input_tokens=99,
            cost_usd=0.0, api_calls=1, api_errors=0)
    assert lim.observe(JOB, [u]) is None                           # 999: the 1 h part is inside the 99
    u2 = add(home, "usage", source="transcript", ledger="claude-s", n=2, input_tokens=1, output_tokens=0,
             cache_read_input_tokens=0, cache_creation_input_tokens=0, cache_creation_1h_input_tokens=0,
             cost_usd=0.0, api_calls=0, api_errors=0)
    got = lim.observe(JOB, [u2])
    assert got is not None and got.used == 1000 and "1000 tokens of 1000" in got.reason


def test_without_limits_nothing_is_stopped_and_usage_of_is_empty(home: Path) -> None:
    add(home, "agent.spawned", session="zen-x", target="zen-x:0.0")
    assert Limits(Home(home)).observe(JOB, call(home, 50)) is None
    fold = snapshot.current(job_dir(home), JOB)
    assert usage_of(Home(home), fold) == {}


def test_usage_of_reports_each_configured_limit(home: Path) -> None:
    set_limits(home, max_api_calls=10, max_file_operations=5)
    add(home, "agent.spawned", session="zen-x", target="zen-x:0.0")
    call(home, 4)
    add(home, "guard.allowed", decision="allow", rule="ok", reason="", tool="Edit", file_path="/w/x")
    got = usage_of(Home(home), snapshot.current(job_dir(home), JOB))
    assert got == {"max_api_calls": {"max": 10, "used": 4}, "max_file_operations": {"max": 5, "used": 1}}

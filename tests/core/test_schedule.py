"""The pure scheduler: priority then age, dependencies, slots, backoff, breaker, cycles."""

from __future__ import annotations

from typing import Any

from zen.core.schedule import Decision, DepState, Queued, backoff_s, breaker, find_cycle, plan


def q(i: str, prio: int = 3, t: str = "2026-11-29T10:00:00.000Z", **kw: Any) -> Queued:
    return Queued(id=i, name=i, priority=prio, created_at=t, **kw)


def actions(decisions: list[Decision]) -> list[tuple[str, str]]:
    return [(d.job, d.action) for d in decisions]


def test_priority_first_then_age_and_slots() -> None:
    jobs = [q("late-p3", 3, "2026-11-29T10:05:00.000Z"), q("early-p3", 3, "2026-11-29T10:00:00.000Z"),
            q("p1", 1, "2026-11-29T10:09:00.000Z"), q("p5", 5, "2026-11-29T09:00:00.000Z")]
    d = plan(jobs, {}, running=1, max_concurrent=3, breaker_until=None, now=0)
    assert actions(d) == [("p1", "start"), ("early-p3", "start"), ("late-p3", "wait"), ("p5", "wait")]
    assert d[2].why == "waiting for a slot (3 of 3 running)"


def test_dependencies_wait_then_start_and_failures_propagate() -> None:
    job = q("b", depends_on=("a",))
    assert plan([job], {"a": DepState("working")}, running=0, max_concurrent=5, breaker_until=None,
                now=0)[0].why == "waiting for dependency a (working)"
    assert plan([job], {"a": DepState("harvested", 0)}, running=0, max_concurrent=5, breaker_until=None,
                now=0)[0].action == "start"
    for st in (DepState("failed"), DepState("cancelled"), DepState("harvested", 2)):
        d = plan([job], {"a": st}, running=0, max_concurrent=5, breaker_until=None, now=0)[0]
        assert d.action == "fail" and "dependency a" in d.why
    assert plan([job], {}, running=0, max_concurrent=5, breaker_until=None, now=0)[0].action == "fail"


def test_backoff_and_breaker_hold_only_what_they_should() -> None:
    retry = q("retry", t="2026-11-29T09:00:00.000Z", automatic=True, retry_at=100.0)
    human = q("human")
    d = plan([retry, human], {}, running=0, max_concurrent=5, breaker_until=None, now=50)
    assert actions(d) == [("retry", "wait"), ("human", "start")] and "backoff" in d[0].why
    auto = q("auto", t="2026-11-29T09:00:00.000Z", automatic=True)
    d = plan([auto, human], {}, running=0, max_concurrent=5, breaker_until=500.0, now=60)
    assert actions(d) == [("auto", "wait"), ("human", "start")] and "breaker" in d[0].why


def test_backoff_grows_to_its_cap() -> None:
    delays = [backoff_s(n, base_s=5, factor=2, cap_s=30) for n in range(1, 6)]
    assert delays == [5, 10, 20, 30, 30]


def test_breaker_opens_over_the_limit_and_holds() -> None:
    starts = [100.0, 110.0, 120.0]
    assert breaker(starts, now=130, window_s=600, limit=3, hold_s=900, open_until=None) is None
    until = breaker([*starts, 125.0], now=130, window_s=600, limit=3, hold_s=900, open_until=None)
    assert until == 1030
    assert breaker([], now=500, window_s=600, limit=3, hold_s=900, open_until=until) == until
    assert breaker([], now=1031, window_s=600, limit=3, hold_s=900, open_until=until) is None
    # starts outside the rolling window do not count
    assert breaker([1.0, 2.0, 3.0, 4.0], now=1000, window_s=600, limit=3, hold_s=900, open_until=None) is None


def test_find_cycle() -> None:
    assert find_cycle({"a": ["b"], "b": ["c"], "c": []}) is None
    cycle = find_cycle({"a": ["b"], "b": ["c"], "c": ["a"]})
    assert cycle is not None and cycle[0] == cycle[-1] and set(cycle) == {"a", "b", "c"}


def test_equal_priority_and_age_fall_back_to_the_id() -> None:
    jobs = [q("b"), q("c"), q("a")]
    d = plan(jobs, {}, running=0, max_concurrent=2, breaker_until=None, now=0)
    assert actions(d) == [("a", "start"), ("b", "start"), ("c", "wait")]


def test_held_and_failing_jobs_take_no_slot() -> None:
    blocked = q("blocked", 1, depends_on=("dep",))
    doomed = q("doomed", 1, depends_on=("gone",))
    later = q("later", 5)
    d = plan([blocked, doomed, later], {"dep": DepState("queued")}, running=0, max_concurrent=1,
             breaker_until=None, now=0)
    assert actions(d) == [("blocked", "wait"), ("doomed", "fail"), ("later", "start")]
    assert d[1].why == "dependency gone does not exist"


def test_no_slot_when_already_full() -> None:
    d = plan([q("a")], {}, running=4, max_concurrent=4, breaker_until=None, now=0)
    assert actions(d) == [("a", "wait")] and d[0].why == "waiting for a slot (4 of 4 running)"


def test_a_harvest_without_an_exit_code_satisfies_a_dependency() -> None:
    # a live harvest (zen harvest of a running agent) records no exit code
    d = plan([q("b", depends_on=("a",))], {"a": DepState("harvested", None)}, running=0, max_concurrent=1,
             breaker_until=None, now=0)
    assert actions(d) == [("b", "start")]


def test_the_first_unmet_dependency_is_named() -> None:
    job = q("c", depends_on=("a", "b"))
    d = plan([job], {"a": DepState("harvested", 0), "b": DepState("waiting")}, running=0, max_concurrent=1,
             breaker_until=None, now=0)
    assert d[0].why == "waiting for dependency b (waiting)"


def test_a_passed_backoff_and_a_closed_breaker_hold_nothing() -> None:
    retry = q("retry", automatic=True, retry_at=100.0)
    d = plan([retry], {}, running=0, max_concurrent=1, breaker_until=99.0, now=100.0)
    assert actions(d) == [("retry", "start")]


def test_the_reason_to_wait_shows_the_time_in_utc() -> None:
    d = plan([q("r", retry_at=3723.0)], {}, running=0, max_concurrent=1, breaker_until=None, now=0)
    assert d[0].why == "backoff until 01:02:03Z"


def test_backoff_of_the_first_retry_is_the_base() -> None:
    assert backoff_s(1, base_s=5, factor=3, cap_s=1000) == 5
    assert backoff_s(0, base_s=5, factor=3, cap_s=1000) == 5
    assert backoff_s(3, base_s=5, factor=3, cap_s=1000) == 45


def test_the_breaker_opens_only_past_the_limit() -> None:
    at_limit = [10.0, 20.0, 30.0]
    assert breaker(at_limit, now=40, window_s=60, limit=3, hold_s=100, open_until=None) is None
    assert breaker([*at_limit, 35.0], now=40, window_s=60, limit=3, hold_s=100, open_until=None) == 140
    # a breaker that was open and has expired re-opens if the window is still over the limit
    assert breaker([*at_limit, 35.0], now=41, window_s=60, limit=3, hold_s=100, open_until=40.0) == 141


def test_find_cycle_finds_self_loops_and_ignores_unknown_nodes() -> None:
    assert find_cycle({"a": ["a"]}) == ["a", "a"]
    assert find_cycle({"a": ["missing"], "b": ["a"]}) is None
    cycle = find_cycle({"x": ["y"], "y": ["z"], "z": ["y"]})
    assert cycle == ["y", "z", "y"]

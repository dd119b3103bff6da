"""zen.core.goal, the blocker rule, replayed with an injected clock: a persisting blocker stops a
goal at exactly its third turn and never before 60 s, however fast or slow the agent turns."""

from __future__ import annotations

import random

from zen.core import goal

LIMITS = goal.Limits()          # 3 turns, 60 s


def run(turn_s: list[float], blockers: list[str | None], progress: list[bool] | None = None,
        limits: goal.Limits = LIMITS, start: float = 1000.0, done_at: int | None = None,
        tokens_per_turn: float = 0.0) -> tuple[goal.Decision, list[goal.Turn]]:
    """Drive the rule like the supervisor does: a turn ends, zen decides; a hold moves the clock
    to its end (the injected clock jumps, no one waits)."""
    now = start
    turns: list[goal.Turn] = []
    for i, length in enumerate(turn_s):
        now += length
        b = blockers[i % len(blockers)]
        turns.append(goal.Turn(n=i + 1, at=now, blocker=goal.fingerprint(b),
                               progress=bool(progress and progress[i % len(progress)]), done=done_at == i + 1))
        while True:
            d = goal.decide(turns, limits, started_at=start, now=now, tokens=tokens_per_turn * len(turns))
            if d.action != goal.HOLD:
                break
            assert d.until is not None and d.until > now
            now = d.until
        if d.action != goal.CONTINUE:
            return d, turns
    return d, turns


def test_the_same_blocker_stops_at_exactly_the_third_turn_and_not_before_60s_in_every_run() -> None:
    rng = random.Random(22)
    for _ in range(2000):
        lengths = [rng.choice([0.2, 1.0, 5.0, rng.uniform(0, 90)]) for _ in range(10)]
        d, turns = run(lengths, [f"database at localhost:5432 is down (attempt {rng.randint(1, 9)})"])
        assert d.action == goal.BLOCKED and len(turns) == 3
        assert turns[-1].at - turns[0].at >= 60.0
        assert d.streak == 3


def test_a_blocker_is_the_same_whatever_its_numbers_case_and_spacing() -> None:
    a = goal.fingerprint("Timed out after 31s waiting for   port 8080")
    assert a == goal.fingerprint("timed out after 30.5s waiting for port 9090")
    assert a != goal.fingerprint("permission denied on /var/lib/app")
    assert goal.fingerprint("  ") is None and goal.fingerprint(None) is None


def test_progress_or_a_new_blocker_starts_the_count_again() -> None:
    # every third turn makes progress: never three blocked turns in a row
    d, turns = run([1.0] * 30, ["flaky test"], progress=[False, False, True])
    assert d.action == goal.CONTINUE and len(turns) == 30
    # a different blocker each turn: never the same three times
    d, turns = run([1.0] * 12, ["a", "b", "c", "d"])
    assert d.action == goal.CONTINUE and len(turns) == 12
    # two blockers alternating, then one persists: stopped three turns after it began
    d, turns = run([1.0] * 12, ["a", "b", "a", "b", "c", "c", "c", "c"])
    assert d.action == goal.BLOCKED and len(turns) == 7


def test_a_goal_without_blockers_goes_on_until_done_and_budgets_stop_it() -> None:
    d, turns = run([2.0] * 8, [None], done_at=6)
    assert d.action == goal.DONE and len(turns) == 6
    d, turns = run([2.0] * 50, [None], limits=goal.Limits(tokens=1000), tokens_per_turn=300)
    assert d.action == goal.BUDGET and len(turns) == 4 and "token budget" in d.reason
    d, turns = run([10.0] * 50, [None], limits=goal.Limits(wall_s=35))
    assert d.action == goal.BUDGET and len(turns) == 4 and "wall-time" in d.reason
    d, turns = run([1.0] * 50, [None], limits=goal.Limits(max_turns=5))
    assert d.action == goal.BUDGET and len(turns) == 5
    d = goal.decide([goal.Turn(1, 5.0)], goal.Limits(cost_usd=0.5), started_at=0, now=5, cost_usd=0.5)
    assert d.action == goal.BUDGET and "cost budget" in d.reason

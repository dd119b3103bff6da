"""Pure rules of agent teams (DESIGN 13) beyond tests/teams/test_goal_rule.py: which messages
are still queued and how an agent reads them, whether an agent waits at its prompt, the jobs as
a forest, and the goal rule's edges (budget order, hold times, blocker identity)."""

from __future__ import annotations

import pytest

from zen.core import goal, messages, teamtree
from zen.core.goal import (
    BLOCKED,
    BUDGET,
    CONTINUE,
    DONE,
    HOLD,
    Limits,
    Turn,
    decide,
    fingerprint,
    streak,
)

# -- messages ---------------------------------------------------------------------------------------

def _msg(mid: str, *, queued: bool = True, sender: str = "job:parent-1", text: str = "hi") -> dict:
    return {"type": "team.message", "id": mid, "queued": queued, "sender": sender, "text": text}


def _delivered(mid: str) -> dict:
    return {"type": "team.delivered", "id": mid, "via": "hook"}


def test_pending_is_the_queued_messages_not_yet_delivered_oldest_first() -> None:
    evs = [_msg("m1"), _msg("m2"), _delivered("m1"), _msg("m3"), {"type": "agent.output"}]
    assert [m["id"] for m in messages.pending(evs)] == ["m2", "m3"]


def test_a_message_typed_in_at_once_is_never_pending() -> None:
    assert messages.pending([_msg("m1", queued=False)]) == []


def test_a_delivery_recorded_before_its_message_still_counts() -> None:
    # two processes append: the order in the timeline is not the order of intent
    assert messages.pending([_delivered("m1"), _msg("m1")]) == []


def test_pending_of_no_events_is_empty_and_takes_any_iterable() -> None:
    assert messages.pending([]) == []
    assert [m["id"] for m in messages.pending(iter([_msg("a")]))] == ["a"]


def test_delivered_names_one_message() -> None:
    evs = [_msg("m1"), _delivered("m1"), _msg("m2")]
    assert messages.delivered(evs, "m1") and not messages.delivered(evs, "m2")
    assert not messages.delivered(evs, "m3")


def test_the_text_an_agent_reads_names_each_sender() -> None:
    out = messages.text([_msg("a", sender="job:20261201-parent", text="run the tests"),
                         _msg("b", sender="human", text="stop after that"),
                         {"type": "team.message", "id": "c", "text": "anonymous"}])
    assert out == ("[zen: message from job 20261201-parent] run the tests\n\n"
                   "[zen: message from a human] stop after that\n\n"
                   "[zen: message from someone] anonymous")


def test_the_text_of_no_messages_is_empty_and_keeps_a_messages_own_lines() -> None:
    assert messages.text([]) == ""
    assert messages.text([_msg("a", text="line 1\nline 2 ✓")]) == "[zen: message from job parent-1] line 1\nline 2 ✓"


def _turn(kind: str, actor: str = "hook") -> dict:
    return {"type": f"turn.{kind}", "actor": actor}


@pytest.mark.parametrize("events, waiting, expect", [
    ([], True, True),                                                  # no hooks: the terminal decides
    ([], False, False),
    ([_turn("working", actor="supervisor")], True, True),              # read off the screen: not a hook
    ([_turn("working")], True, False),                                 # in its turn, however quiet
    ([_turn("working"), _turn("waiting")], False, True),               # Stop came: at its prompt
    ([_turn("waiting"), _turn("working"), {"type": "agent.output", "actor": "hook"}], True, False),
])
def test_at_prompt_trusts_the_hooks_over_the_screen(events: list, waiting: bool, expect: bool) -> None:
    assert messages.at_prompt(events, waiting) is expect


# -- the forest of jobs -----------------------------------------------------------------------------

def test_workers_nest_under_their_parents_in_order() -> None:
    nodes = [{"id": "root"}, {"id": "w1", "parent": "root"}, {"id": "w2", "parent": "root"},
             {"id": "w1a", "parent": "w1"}, {"id": "other"}]
    roots = teamtree.forest(nodes)
    assert [r["id"] for r in roots] == ["root", "other"]
    assert [c["id"] for c in roots[0]["children"]] == ["w1", "w2"]
    assert [(d, n["id"]) for d, n in teamtree.walk(roots)] == [
        (0, "root"), (1, "w1"), (2, "w1a"), (1, "w2"), (0, "other")]


def test_a_worker_whose_parent_is_gone_is_a_root() -> None:
    roots = teamtree.forest([{"id": "orphan", "parent": "harvested-and-collected"}])
    assert [r["id"] for r in roots] == ["orphan"]


def test_a_child_listed_before_its_parent_still_nests() -> None:
    roots = teamtree.forest([{"id": "w", "parent": "p"}, {"id": "p"}])
    assert [r["id"] for r in roots] == ["p"]
    assert [c["id"] for c in roots[0]["children"]] == ["w"]


def test_a_node_naming_itself_as_parent_is_a_root_not_lost() -> None:
    roots = teamtree.forest([{"id": "loop", "parent": "loop"}])
    assert [r["id"] for r in roots] == ["loop"] and roots[0]["children"] == []


def test_a_duplicate_id_keeps_the_first_node() -> None:
    roots = teamtree.forest([{"id": "a", "name": "first"}, {"id": "a", "name": "second"}])
    assert [r["name"] for r in roots] == ["first"]


def test_the_forest_leaves_its_input_alone() -> None:
    nodes = [{"id": "p"}, {"id": "w", "parent": "p"}]
    teamtree.forest(nodes)
    assert nodes == [{"id": "p"}, {"id": "w", "parent": "p"}]


def test_walk_of_nothing_is_nothing() -> None:
    assert list(teamtree.walk([])) == []


# -- the goal rule ------------------------------------------------------------------------------------

L = Limits(blocked_turns=3, blocked_span_s=60.0, max_turns=200)


def test_done_wins_over_an_exhausted_budget() -> None:
    turns = [Turn(1, 0.0, done=True)]
    d = decide(turns, Limits(tokens=10), started_at=0.0, now=1.0, tokens=999)
    assert (d.action, d.reason) == (DONE, "the agent reported its goal done")


@pytest.mark.parametrize("limits, kw, reason", [
    (Limits(tokens=1000), {"tokens": 1000}, "token budget reached (1000 of 1000)"),
    (Limits(cost_usd=0.5), {"cost_usd": 0.75}, "cost budget reached ($0.7500 of $0.5000)"),
    (Limits(wall_s=3600), {"now": 3600.0}, "wall-time budget reached (3600s of 3600s)"),
    (Limits(max_turns=1), {}, "turn limit reached (1 of 1, teams.goal_max_turns)"),
])
def test_each_budget_stops_the_goal_at_its_cap_with_its_reason(limits: Limits, kw: dict, reason: str) -> None:
    args = {"started_at": 0.0, "now": 10.0, **kw}
    d = decide([Turn(1, 5.0)], limits, **args)
    assert (d.action, d.reason) == (BUDGET, reason)


def test_just_under_every_cap_the_goal_goes_on() -> None:
    limits = Limits(tokens=1000, cost_usd=0.5, wall_s=3600, max_turns=2)
    d = decide([Turn(1, 5.0)], limits, started_at=0.0, now=3599.0, tokens=999, cost_usd=0.4999)
    assert d.action == CONTINUE and d.reason == "no blocker"


def test_tokens_are_checked_before_cost_before_wall_time() -> None:
    limits = Limits(tokens=1, cost_usd=0.01, wall_s=1)
    d = decide([Turn(1, 0.0)], limits, started_at=0.0, now=100.0, tokens=5, cost_usd=1.0)
    assert d.reason.startswith("token budget")
    d = decide([Turn(1, 0.0)], limits, started_at=0.0, now=100.0, tokens=0, cost_usd=1.0)
    assert d.reason.startswith("cost budget")


def test_a_repeated_blocker_holds_the_third_turn_until_the_span_has_passed() -> None:
    b = fingerprint("tests fail")
    turns = [Turn(1, 100.0, blocker=b), Turn(2, 101.0, blocker=b)]   # the agent turned at once
    d = decide(turns, L, started_at=0.0, now=101.0)
    assert d.action == HOLD and d.until == 160.0 and d.streak == 2
    assert decide(turns, L, started_at=0.0, now=159.9).action == HOLD
    late = decide(turns, L, started_at=0.0, now=160.0)
    assert (late.action, late.reason) == (CONTINUE, "a blocker in 2 turn(s) in a row")


def test_a_first_blocker_is_held_until_its_first_step() -> None:
    b = fingerprint("tests fail")
    d = decide([Turn(1, 100.0, blocker=b)], L, started_at=0.0, now=100.0)
    assert d.action == HOLD and d.until == 130.0 and d.streak == 1
    assert d.reason == "a blocker in 1 turn(s) in a row: the next try waits"


def test_enough_turns_but_too_short_a_span_is_not_yet_blocked() -> None:
    b = fingerprint("x")
    turns = [Turn(1, 0.0, blocker=b), Turn(2, 30.0, blocker=b), Turn(3, 59.0, blocker=b)]
    d = decide(turns, L, started_at=0.0, now=59.0)
    assert d.action == HOLD and d.until == 60.0
    turns = [*turns[:2], Turn(3, 60.0, blocker=b)]
    d = decide(turns, L, started_at=0.0, now=60.0)
    assert (d.action, d.streak) == (BLOCKED, 3)
    assert d.reason == "the same blocker in 3 turns in a row over 60s"


def test_a_blocked_turns_of_one_stops_on_the_first_blocker_once_the_span_is_zero() -> None:
    d = decide([Turn(1, 5.0, blocker=fingerprint("x"))], Limits(blocked_turns=1, blocked_span_s=0.0),
               started_at=0.0, now=5.0)
    assert d.action == BLOCKED


def test_streak_is_broken_by_progress_and_restarted_by_a_new_blocker() -> None:
    a, b = fingerprint("a"), fingerprint("b")
    turns = [Turn(1, 0, blocker=a), Turn(2, 1, blocker=a), Turn(3, 2, blocker=b), Turn(4, 3, blocker=b)]
    assert [t.n for t in streak(turns)] == [3, 4]
    turns = [Turn(1, 0, blocker=a), Turn(2, 1, blocker=a, progress=True), Turn(3, 2, blocker=a)]
    assert [t.n for t in streak(turns)] == [3]
    turns = [Turn(1, 0, blocker=a), Turn(2, 1)]
    assert streak(turns) == []
    assert streak([]) == []


@pytest.mark.parametrize("a, b", [
    ("Timed out after 31s", "timed out after 30s"),
    ("commit deadbeef1 failed", "commit 0a1b2c3d4 failed"),
    ("pointer 0xFF00 null", "pointer 0x1 null"),
    ("  many   spaces\there ", "many spaces here"),
    ("retry 1.5 of 3", "retry 2.25 of 9"),
])
def test_blockers_that_differ_only_in_numbers_hashes_case_or_spacing_are_one(a: str, b: str) -> None:
    assert fingerprint(a) == fingerprint(b)


@pytest.mark.parametrize("a, b", [
    ("tests fail", "build fails"),
    ("cannot reach db", "cannot reach cache"),
])
def test_different_blockers_stay_different(a: str, b: str) -> None:
    assert fingerprint(a) != fingerprint(b)


@pytest.mark.parametrize("empty", [None, "", "   ", "\n\t"])
def test_no_blocker_has_no_fingerprint(empty: str | None) -> None:
    assert fingerprint(empty) is None


def test_a_fingerprint_is_short_hex_and_handles_unicode_and_huge_text() -> None:
    fp = fingerprint("ошибка: 文件 не найден " * 10_000)
    assert fp is not None and len(fp) == 16 and int(fp, 16) >= 0
    assert fingerprint("ОШИБКА ") == fingerprint("ошибка")     # case folds beyond ASCII


def test_goal_constants_are_the_actions_the_supervisor_records() -> None:
    assert {goal.CONTINUE, goal.HOLD, goal.DONE, goal.BLOCKED, goal.BUDGET} == {
        "continue", "hold", "done", "blocked", "budget"}

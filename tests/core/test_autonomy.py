"""Autonomy earned from evidence: levels, thresholds, corrections, incidents, demotion."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest

from zen.core.autonomy import (
    DEFAULT_THRESHOLDS,
    demoted,
    last_demotion_ts,
    progress,
    since_last_demotion,
)
from zen.core.model import Level

Records = list[Mapping[str, Any]]


def accepted(level: str, n: int = 1) -> Records:
    return [{"kind": "accepted", "level": level, "job": f"j{i}"} for i in range(n)]


def test_levels_are_ordered_lowest_first() -> None:
    assert Level.observe < Level.suggest < Level.act_and_report < Level.autonomous
    assert [lvl.label for lvl in Level] == ["observe", "suggest", "act-and-report", "autonomous"]


@pytest.mark.parametrize(("text", "level"), [
    ("observe", Level.observe), ("act-and-report", Level.act_and_report), ("ACT_AND_REPORT", Level.act_and_report),
    (" suggest ", Level.suggest), ("Autonomous", Level.autonomous),
])
def test_parse_level(text: str, level: Level) -> None:
    assert Level.parse(text) is level


def test_an_unknown_level_names_the_known_ones() -> None:
    with pytest.raises(ValueError, match="unknown autonomy level 'boss' \\(one of observe, suggest, act-and-report, "
                                         "autonomous\\)"):
        Level.parse("boss")


def test_default_thresholds_grow_with_the_level() -> None:
    needed = [DEFAULT_THRESHOLDS[lvl]["accepted"] for lvl in ("suggest", "act-and-report", "autonomous")]
    assert needed == sorted(needed) and needed[0] > 0
    assert DEFAULT_THRESHOLDS["autonomous"]["incidents"] == 0


def test_promotion_is_earned_at_the_threshold_not_before() -> None:
    two = progress("code", Level.observe, accepted("observe", 2), {})
    assert two.next_level is Level.suggest and two.accepted == 2
    assert two.missing == "promoting code to suggest needs 1 more accepted observe job(s) (2 of 3)"
    three = progress("code", Level.observe, accepted("observe", 3), {})
    assert three.missing is None


def test_only_evidence_at_the_current_level_counts() -> None:
    p = progress("code", Level.suggest, [*accepted("observe", 9), *accepted("suggest", 2)], {})
    assert p.accepted == 2 and p.next_level is Level.act_and_report and p.missing is not None


def test_a_correction_blocks_promotion_until_a_demotion_clears_it() -> None:
    records: Records = [*accepted("observe", 5), {"kind": "corrected", "job": "x"}]
    p = progress("code", Level.observe, records, {})
    assert p.corrections == 1
    assert p.missing == "promoting code to suggest needs no corrections since the last demotion (1 recorded)"
    after: Records = [*records, {"kind": "demoted", "ts": "t1"}, *accepted("observe", 3)]
    p = progress("code", Level.observe, after, {})
    assert p.corrections == 0 and p.accepted == 3 and p.missing is None


def test_incidents_matter_only_where_the_threshold_names_them() -> None:
    records = accepted("act-and-report", 10)
    assert progress("code", Level.act_and_report, records, {}, incidents_since=0).missing is None
    blocked = progress("code", Level.act_and_report, records, {}, incidents_since=1)
    assert blocked.missing is not None and "no incidents since the last demotion (1 recorded)" in blocked.missing
    # suggest's threshold does not mention incidents
    assert progress("code", Level.observe, accepted("observe", 3), {}, incidents_since=4).missing is None


def test_several_shortfalls_are_joined_in_one_sentence() -> None:
    p = progress("infra", Level.act_and_report, [*accepted("act-and-report", 4), {"kind": "corrected"}], {},
                 incidents_since=2)
    assert p.missing == ("promoting infra to autonomous needs 6 more accepted act-and-report job(s) (4 of 10)"
                         " and no corrections since the last demotion (1 recorded)"
                         " and no incidents since the last demotion (2 recorded)")


def test_configured_thresholds_replace_the_defaults() -> None:
    p = progress("code", Level.observe, accepted("observe", 1), {"suggest": {"accepted": 1, "corrections": 2}})
    assert p.missing is None
    p = progress("code", Level.observe, [*accepted("observe", 1), {"kind": "corrected"}, {"kind": "corrected"},
                                         {"kind": "corrected"}], {"suggest": {"accepted": 1, "corrections": 2}})
    assert p.missing is not None and "(3 recorded)" in p.missing


def test_the_highest_level_has_nothing_to_earn() -> None:
    p = progress("code", Level.autonomous, accepted("autonomous", 50), {})
    assert p.next_level is None and p.needed == {}
    assert p.missing == "code is already autonomous, the highest level"


def test_as_dict_is_the_json_shape() -> None:
    d = progress("code", Level.observe, accepted("observe", 3), {}).as_dict()
    assert d == {"domain": "code", "level": "observe", "next_level": "suggest", "accepted": 3, "corrections": 0,
                 "incidents": 0, "needed": {"accepted": 3, "corrections": 0}, "eligible": True, "missing": None}
    top = progress("code", Level.autonomous, [], {}).as_dict()
    assert top["next_level"] is None and top["eligible"] is False


def test_since_last_demotion_and_its_time() -> None:
    records: Records = [{"kind": "accepted", "n": 1}, {"kind": "demoted", "ts": "t1"}, {"kind": "accepted", "n": 2},
               {"kind": "promoted", "ts": "t2"}, {"kind": "demoted", "ts": "t3"}, {"kind": "corrected", "n": 3}]
    assert since_last_demotion(records) == [{"kind": "corrected", "n": 3}]
    assert last_demotion_ts(records) == "t3"
    assert last_demotion_ts([{"kind": "accepted"}]) is None
    assert since_last_demotion([]) == []


@pytest.mark.parametrize(("level", "down"), [
    (Level.autonomous, Level.act_and_report), (Level.act_and_report, Level.suggest),
    (Level.suggest, Level.observe), (Level.observe, Level.observe),
])
def test_demotion_drops_one_level_and_stops_at_observe(level: Level, down: Level) -> None:
    assert demoted(level) is down

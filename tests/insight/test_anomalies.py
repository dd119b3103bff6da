"""Issue 38 step 4 (the detector): robust baselines per agent and lane, and the patterns, over
generated fleets (tests/insight/fleets.py)."""

from __future__ import annotations

import random

import pytest

from tests.insight.fleets import KINDS, fleet, inject
from zen.observe.anomalies import Turn, baselines, detect, fold_turns


def folded(f: dict[str, list[dict]]) -> dict[str, list[Turn]]:
    return {j: fold_turns(j, evs) for j, evs in f.items()}


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_an_ordinary_fleet_of_50_jobs_raises_no_flag(seed: int) -> None:
    turns = folded(fleet(50, seed))
    assert sum(len(t) for t in turns.values()) > 500
    base = baselines(turns)
    assert {g[0] for g in base} == {"claude", "codex", "sim"} and sum("tool_calls" in b for b in base.values()) >= 6
    assert detect(turns, base) == []


@pytest.mark.parametrize("kind", KINDS)
def test_each_injected_anomaly_is_flagged_in_the_turn_it_starts(kind: str) -> None:
    f = fleet(50, 7)
    turns = folded(f)
    base = baselines(turns)
    rng = random.Random(kind)
    job = next(j for j in f if f[j][0]["task"]["agent"] == "claude")
    events, first = inject(f[job], kind, rng)
    found = detect({job: fold_turns(job, events)}, base, only_last=True)
    assert kind in {x.what for x in found}
    hit = next(x for x in found if x.what == kind)
    last = fold_turns(job, events)[-1]
    assert hit.turn == last.n and hit.turn_seq == last.start_seq
    assert first in hit.evidence or hit.evidence == [last.start_seq]
    assert all(last.start_seq <= s <= (last.end_seq or s) for s in hit.evidence)
    d = hit.as_dict()
    assert d["what"] == kind and d["message"] and d["key"] == f"{kind}@{last.start_seq}"
    if hit.kind == "baseline":
        assert d["typical"] and d["score"] >= 5.5


def test_a_loop_is_flagged_while_its_turn_is_still_open() -> None:
    f = fleet(10, 3)
    job = next(iter(f))
    events, first = inject(f[job], "tool_loop", random.Random(0))
    open_turn = [e for e in events if e["type"] not in ("usage", "turn.waiting")][: len(f[job]) + 8]
    [hit] = [x for x in detect({job: fold_turns(job, open_turn)}, {}, only_last=True) if x.what == "tool_loop"]
    assert hit.evidence[0] == first and len(hit.evidence) >= 6


def test_a_group_with_too_few_turns_has_no_baseline_yet() -> None:
    turns = folded(fleet(2, 4, turns=(3, 5)))
    assert all(not b for b in baselines(turns).values())

"""zen.core.jobstate: a job's state without pydantic. `Snap` holds state.json's fields with
JobSnapshot's defaults and order, folds like the model (zen.core.states), keeps what a newer zen
wrote; `plausible` tells a state.json this zen wrote from one to rebuild from the timeline."""

from __future__ import annotations

from typing import Any

import pytest

from zen.core.jobstate import FINAL, SNAPSHOT_DEFAULTS, JobStatus, Snap, plausible
from zen.core.model import JobSnapshot
from zen.core.states import replay, replay_plain


def test_a_snap_is_a_job_snapshot_without_pydantic() -> None:
    want = JobSnapshot(job="j").model_dump(mode="json")
    assert list(want)[2:] == list(SNAPSHOT_DEFAULTS) and {k: want[k] for k in SNAPSHOT_DEFAULTS} == SNAPSHOT_DEFAULTS
    events = [
        {"seq": 1, "ts": "2026-01-01T00:00:00.000Z", "type": "task.received",
         "task": {"name": "n", "agent": "cmd", "lane": "app", "priority": 2, "created_at": "2026-01-01T00:00:00.000Z"}},
        {"seq": 2, "ts": "2026-01-01T00:00:01.000Z", "type": "worktree.created", "path": "/w", "branch": "b"},
        {"seq": 3, "ts": "2026-01-01T00:00:02.000Z", "type": "agent.spawned", "session": "s", "target": "%1"},
        {"seq": 4, "ts": "2026-01-01T00:00:03.000Z", "type": "usage", "input_tokens": 5, "cost_usd": 0.5},
        {"seq": 5, "ts": "2026-01-01T00:00:04.000Z", "type": "turn.waiting", "reason": "approval"},
        {"seq": 6, "ts": "2026-01-01T00:00:05.000Z", "type": "job.paused"},
        {"seq": 7, "ts": "2026-01-01T00:00:06.000Z", "type": "job.resumed", "paused_s": 1.5},
        {"seq": 8, "ts": "2026-01-01T00:00:07.000Z", "type": "something.new", "x": 1},
        {"seq": 9, "ts": "2026-01-01T00:00:08.000Z", "type": "agent.exited", "exit_code": 3},
    ]
    for cut in range(len(events) + 1):
        full = replay("j", events[:cut]).model_dump(mode="json")
        assert replay_plain("j", events[:cut]).as_json() == full
        # and folded on from a state.json written part way
        start = Snap("j", replay("j", events[: cut // 2]).model_dump(mode="json"))
        assert replay_plain("j", events[cut // 2: cut], start).as_json() == full


def test_live_and_final_states_split_the_lifecycle() -> None:
    live = {s for s in JobStatus if s.live}
    final = {s for s in JobStatus if s.final}
    assert live == {JobStatus.starting, JobStatus.working, JobStatus.waiting, JobStatus.paused}
    assert final == {JobStatus.harvested, JobStatus.failed, JobStatus.cancelled}
    assert {s.value for s in final} == FINAL
    assert not live & final and {JobStatus.queued, JobStatus.exited}.isdisjoint(live | final)


def test_a_snap_round_trips_fields_of_a_newer_zen_and_drops_the_readers_offset() -> None:
    data = {"v": 1, "job": "j", "state": "working", "turns": 2, "usage": {"cost_usd": 1.0},
            "from_the_future": {"x": 1}, "_offset": 123}
    snap = Snap("j", data)
    assert snap.state is JobStatus.working and snap.turns == 2
    out = snap.as_json()
    assert out["from_the_future"] == {"x": 1} and "_offset" not in out
    assert list(out)[:2] == ["v", "job"] and out["priority"] == SNAPSHOT_DEFAULTS["priority"]
    snap.usage["cost_usd"] = 2.0                   # containers are the snap's own, not the caller's
    assert data["usage"] == {"cost_usd": 1.0}


def test_a_snap_with_a_state_zen_does_not_know_is_refused() -> None:
    with pytest.raises(ValueError):
        Snap("j", {"state": "sleeping"})


def good() -> dict[str, Any]:
    return JobSnapshot(job="j").model_dump(mode="json")


@pytest.mark.parametrize(("change", "ok"), [
    ({}, True),
    ({"state": "harvested", "seq": 40, "revision": 7}, True),
    ({"v": 2}, False),                              # a format this zen does not read
    ({"job": "other"}, False),                      # another job's record
    ({"state": "sleeping"}, False),
    ({"seq": "4"}, False),
    ({"revision": None}, False),
    ({"usage": []}, False),
    ({"guard": "x"}, False),
])
def test_plausible_accepts_only_a_state_json_this_zen_wrote_for_the_job(change: dict[str, Any], ok: bool) -> None:
    assert plausible("j", {**good(), **change}) is ok


@pytest.mark.parametrize("data", [None, [], "state", 1])
def test_plausible_refuses_what_is_not_an_object(data: object) -> None:
    assert plausible("j", data) is False

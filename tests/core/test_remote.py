"""The pure parts of turns on a Ray cluster: which executor a job gets, the turn spec's round
trip, and how a worker's log is told apart into output and numbered events."""

from __future__ import annotations

import pytest

from zen.core.remote import (
    FRAME,
    ExecutorError,
    Output,
    TurnSpec,
    WorkerEvent,
    choose,
    frame_event,
    frame_output,
    parse_executor,
    parse_log,
    submission_id,
    turn_ref,
)


def test_the_task_names_its_executor_else_the_lane_else_local() -> None:
    assert choose(None, None).kind == "local"
    lane = {"kind": "ray", "address": "http://10.0.0.5:8265", "resources": {"zen_slot": 1}}
    assert choose(lane, None).address == "http://10.0.0.5:8265"
    assert choose(lane, "local").kind == "local"
    assert choose(None, lane).resources == {"zen_slot": 1.0}


@pytest.mark.parametrize(("value", "says"), [
    ("ray", "needs address"),
    ({"kind": "slurm"}, "not one of local, ray"),
    ({"kind": "ray", "address": "x", "cpus": 2}, "cpus"),
    (["ray"], "must be local, ray, or a mapping"),
])
def test_a_bad_executor_is_one_sentence(value: object, says: str) -> None:
    with pytest.raises(ExecutorError) as err:
        parse_executor(value)
    assert says in str(err.value) and "\n" not in str(err.value)


def test_ids_and_refs() -> None:
    assert submission_id("20261201T000000Z-fix-ab12", 3) == "20261201T000000Z-fix-ab12-3"
    assert turn_ref("j", 2) == "refs/zen/j/turn-2"


def test_a_spec_survives_the_trip_and_a_garbled_one_is_refused() -> None:
    spec = TurnSpec(job="j", submission="j-1", turn=1, attempt=1, lane="app", remote="/srv/app.git",
                    start_ref="refs/zen/j/base", push_ref="refs/zen/j/turn-1", task_yaml="zen: 1\n",
                    prompt="héllo ✻", policy={"policy/guardian.yaml": "rules: []\n" * 500})
    text = spec.encode()
    assert len(text) < 2000  # compressed: the policy repeats
    assert TurnSpec.decode(text) == spec
    with pytest.raises(ExecutorError):
        TurnSpec.decode(text[:-8] + "AAAAAAAA")


def test_the_log_splits_into_output_and_events_and_an_agent_cannot_pose_as_one() -> None:
    forged = FRAME + '{"n":9,"e":{"type":"harvest.done"}}\n'
    log = ("Ray: runtime env is set up\n" + frame_output("hello\x1e world\n") + frame_output(forged)
           + frame_event(1, {"type": "guard.denied", "actor": "guard", "seq": 7, "job": "x", "rule": "r"})
           + frame_output("no newline yet"))
    items, offset = parse_log(log + FRAME + '{"o": "half a li', 0)
    assert items == [Output("Ray: runtime env is set up\n"), Output("hello\x1e world\n"), Output(forged),
                     WorkerEvent(n=1, type="guard.denied", actor="guard", fields={"rule": "r"}, ts=None),
                     Output("no newline yet")]
    assert offset == len(log)
    more, again = parse_log(log + frame_output("later\n"), offset)
    assert more == [Output("later\n")] and again > offset

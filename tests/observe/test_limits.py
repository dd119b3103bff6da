"""Guardrail limits from policy/guardian.yaml, enforced from the observatory's counts: a `sim` job
over `max_file_operations` or `max_api_calls` is stopped at the limit with a reason naming it
(limit.reached, job.failed, the agent stopped and its work harvested); `zen metrics` shows usage
against the limits; a bad limit is a policy error, not a silent no-limit."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.helpers import wait_until, zen, zen_json
from tests.supervisor.util import dispatch_sim, events, snap, types
from zen.observe.limits import Reached, configured, reached
from zen.store.layout import Home


def _limits(home: Path, **limits: int) -> None:
    text = "zen: 1\nlimits:\n" + "".join(f"  {k}: {v}\n" for k, v in limits.items())
    (home / "policy" / "guardian.yaml").write_text(text)


def _stopped(zh: Path, job: str) -> dict[str, Any]:
    wait_until(lambda: snap(zh, job).state.value == "failed" and "harvest.done" in types(zh, job),
               timeout=60, message=f"{job} stopped and harvested: {types(zh, job)}")
    [ev] = [e for e in events(zh, job) if e["type"] == "limit.reached"]
    return ev


def test_a_job_over_max_file_operations_is_stopped_at_the_limit(zh: Path, sup: Any, tmp_path: Path) -> None:
    _limits(zh, max_file_operations=3)
    script = [x for i in range(12) for x in ({"write": {"path": f"f{i}.txt", "content": f"{i}\n"}},
                                               {"sleep": 0.3})]
    job = dispatch_sim(zh, tmp_path, "busy-writer", [*script, {"say": "Wrote them all."}])
    hit = _stopped(zh, job)
    assert hit["limit"] == "max_file_operations" and hit["max"] == 3 and hit["used"] == 3
    s = snap(zh, job)
    assert s.reason is not None and "max_file_operations" in s.reason and "3 file operations of 3" in s.reason
    evs = events(zh, job)
    failed = next(e for e in evs if e["type"] == "job.failed")
    assert failed["seq"] > hit["seq"] and failed["reason"] == hit["reason"]
    # stopped there: the agent was ended (it never wrote most of its files) and what it made is
    # on the review branch
    written = [e for e in evs if e["type"] == "guard.allowed"]
    assert 3 <= len(written) < 12
    assert "agent.exited" in types(zh, job)
    m = zen_json("metrics", job)
    assert m["limits"] == {"max_file_operations": {"max": 3, "used": len(written)}}
    shown = zen("show", job)
    assert "limit max_file_operations reached" in shown.stdout


def test_a_job_over_max_api_calls_is_stopped(zh: Path, sup: Any, tmp_path: Path) -> None:
    _limits(zh, max_api_calls=3, max_file_operations=100)
    # five assistant messages (four said, one asked: five API calls in the sim's transcript),
    # counted when the turn ends
    job = dispatch_sim(zh, tmp_path, "talker", [{"say": f"thought {i}"} for i in range(4)]
                       + [{"ask": "Shall I go on?"}, {"say": "never said"}])
    hit = _stopped(zh, job)
    assert hit["limit"] == "max_api_calls" and hit["max"] == 3 and hit["used"] == 5
    assert "5 API calls of 3" in hit["reason"]
    assert zen_json("metrics", job)["limits"]["max_api_calls"] == {"max": 3, "used": 5}
    assert "never said" not in zen("output", job).stdout


def test_no_limit_set_stops_nothing(zh: Path, sup: Any, tmp_path: Path) -> None:
    job = dispatch_sim(zh, tmp_path, "free", [{"write": {"path": "a.txt", "content": "a\n"}}] * 5)
    wait_until(lambda: snap(zh, job).state.value == "harvested", timeout=60, message="harvested")
    assert "limit.reached" not in types(zh, job)
    assert "limits" not in zen_json("metrics", job)


def test_reached_and_configured(tmp_path: Path, home: Path) -> None:
    fig = {"api_calls": 10, "file_operations": {"read": 2, "write": 1, "delete": 0},
           "input_tokens": 100, "output_tokens": 50, "cache_read_input_tokens": 1000,
           "cache_creation_input_tokens": 10}
    assert reached({}, fig) is None
    assert reached({"max_api_calls": 11, "max_file_operations": 0}, fig) is None
    assert reached({"max_api_calls": 10}, fig) == Reached("max_api_calls", 10, 10)
    assert reached({"max_file_operations": 3}, fig) == Reached("max_file_operations", 3, 3)
    got = reached({"max_tokens_per_session": 1000}, fig)
    assert got == Reached("max_tokens_per_session", 1000, 1160)
    assert got is not None and got.reason.startswith("limit max_tokens_per_session reached: 1160 tokens of 1000")
    h = Home(home)
    assert configured(h) == {}
    _limits(home, max_api_calls=5, max_tokens_per_session=0)
    assert configured(h) == {"max_api_calls": 5}


@pytest.mark.parametrize("bad", ["max_api_calls: -1", "max_api_calls: lots", "max_calls: 3"])
def test_a_bad_limit_is_a_policy_error(home: Path, bad: str) -> None:
    (home / "policy" / "guardian.yaml").write_text(f"zen: 1\nlimits:\n  {bad}\n")
    r = zen("guard", "check", "--", "ls")
    assert r.returncode != 0
    assert "limits" in (r.stdout + r.stderr)

"""Restart decisions, failed-start detection, retry counting and the injected clock. Pure."""

from __future__ import annotations

import time

import pytest

from zen.core.agents import AGENT_NAMES, AgentKind
from zen.core.clock import SYSTEM, ManualClock
from zen.core.model import JobStatus
from zen.core.recovery import Recover, decide, last_index, pending_input, running_spawn
from zen.core.schedule import early_failure, retries_done

S = JobStatus


def ev(etype: str, **fields: object) -> dict[str, object]:
    return {"type": etype, **fields}


SPAWNED = [ev("task.received"), ev("job.queued"), ev("worktree.created"), ev("agent.spawned", session="zen-j")]


def test_an_agent_spawned_and_not_exited_is_watched_if_alive_else_settled() -> None:
    assert running_spawn(SPAWNED) == {"type": "agent.spawned", "session": "zen-j"}
    assert decide(SPAWNED, S.working, pane_alive=True) is Recover.WATCH
    assert decide(SPAWNED, S.waiting, pane_alive=False) is Recover.SETTLE
    # a retry spawned again after an exit: the last spawn counts
    again = [*SPAWNED, ev("agent.exited"), ev("retry.scheduled"), ev("agent.spawned", session="zen-j2")]
    assert running_spawn(again) == {"type": "agent.spawned", "session": "zen-j2"}
    assert decide(again, S.working, pane_alive=False) is Recover.SETTLE


def test_other_jobs_are_harvested_resumed_queued_or_left_alone() -> None:
    exited = [*SPAWNED, ev("agent.exited", exit_code=0)]
    assert running_spawn(exited) is None
    assert decide(exited, S.exited, pane_alive=False) is Recover.HARVEST
    assert decide(exited, S.exited, pane_alive=True) is Recover.HARVEST   # a pane does not undo an exit
    assert decide(SPAWNED[:3], S.starting, pane_alive=False) is Recover.RESUME
    assert decide(SPAWNED[:2], S.queued, pane_alive=False) is Recover.QUEUE
    for final in (S.harvested, S.failed, S.cancelled):
        assert decide([*exited, ev("harvest.done")], final, pane_alive=False) is Recover.NOTHING
    assert last_index(exited, "agent.spawned") == 3 and last_index(exited, "nope") == -1


def test_a_cancelled_or_failed_job_whose_harvest_is_still_due_is_harvested() -> None:
    """A cancel on a full disk records job.cancelled and the exit, but not the harvest (issue 15):
    the next supervisor harvests it; one the disk cannot explain, or one never started, it leaves."""
    cancelled = [*SPAWNED, ev("job.cancelled"), ev("agent.exited", signal=15)]
    for final in (S.cancelled, S.failed):
        assert decide(cancelled, final, pane_alive=False) is Recover.HARVEST
        assert decide([*cancelled, ev("harvest.failed", retry=True)], final, pane_alive=False) is Recover.HARVEST
        assert decide([*cancelled, ev("harvest.failed")], final, pane_alive=False) is Recover.NOTHING
    assert decide([*cancelled, ev("harvest.done")], S.cancelled, pane_alive=False) is Recover.NOTHING
    assert decide([*SPAWNED[:2], ev("job.cancelled")], S.cancelled, pane_alive=False) is Recover.NOTHING


def test_a_first_prompt_not_yet_typed_is_typed_by_the_next_supervisor() -> None:
    """agent.spawned keeps the first prompt of an agent that takes it typed (aider, gemini): a
    supervisor killed before typing it leaves it pending, and once typed it is never typed again."""
    first = [*SPAWNED[:3], ev("agent.spawned", session="zen-j", initial_input="Read handoff.md first")]
    assert pending_input(first) == "Read handoff.md first"
    assert pending_input([*first, ev("input.sent", text="hi", chars=2)]) == "Read handoff.md first"
    assert pending_input([*first, ev("input.sent", text="Read", chars=4, initial=True)]) is None
    assert pending_input(SPAWNED) is None and pending_input(SPAWNED[:3]) is None
    # a later attempt's spawn counts, with its own first prompt
    again = [*first, ev("input.sent", initial=True), ev("agent.exited"), ev("retry.scheduled"),
             ev("agent.spawned", session="zen-j", initial_input="again")]
    assert pending_input(again) == "again"


def test_an_error_before_the_first_turn_is_a_failed_start() -> None:
    assert early_failure(SPAWNED, 1, None) == "agent exited with code 1 before its first turn"
    assert early_failure(SPAWNED, None, 9) == "agent exited with signal 9 before its first turn"
    assert early_failure(SPAWNED, 0, None) is None          # a clean exit is an end, not a failure
    assert early_failure(SPAWNED, None, None) is None       # unknown: not counted as a failure
    for past in ("turn.waiting", "input.sent", "job.cancelled", "job.timeout", "agent.exited"):
        assert early_failure([*SPAWNED, ev(past)], 1, None) is None, past
    assert early_failure([*SPAWNED, ev("turn.working"), ev("guard.allowed")], 2, None) is not None
    assert early_failure(SPAWNED[:3], 1, None) is None      # never spawned


def test_retries_are_counted_from_the_timeline() -> None:
    assert retries_done(SPAWNED) == 0
    assert retries_done([*SPAWNED, ev("retry.scheduled"), ev("agent.spawned"), ev("retry.scheduled")]) == 2


def test_the_manual_clock_moves_only_forward_and_both_readings_together() -> None:
    c = ManualClock(wall=100.0, mono=5.0)
    c.advance(2.5)
    assert (c.time(), c.monotonic()) == (102.5, 7.5)
    with pytest.raises(ValueError):
        c.advance(-1)
    assert abs(SYSTEM.time() - time.time()) < 1 and SYSTEM.monotonic() > 0


def test_the_agent_names_are_one_tuple() -> None:
    assert AGENT_NAMES == ("claude", "codex", "aider", "gemini", "sim", "cmd")
    assert AgentKind("aider") is AgentKind.aider and str(AgentKind.cmd) == "cmd"

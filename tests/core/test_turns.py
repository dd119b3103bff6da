"""The turn detector's clock: when silence becomes a wait, and where the idle clock starts.

The recorded-history cases (output, hooks, input) live in tests/supervisor/test_turns.py; these
are the parts the supervisor relies on to sleep instead of polling.
"""

from __future__ import annotations

import pytest

from zen.core.turns import REASONS, Transition, TurnDetector, replay


def test_idle_due_in_counts_down_from_the_last_output() -> None:
    det = TurnDetector(idle_after_s=2.0, now=0.0)
    assert det.idle_due_in(0.0) is None  # nothing seen yet: no timer
    det.observe(0.0, "a")
    det.observe(1.0, "b")
    assert det.idle_due_in(1.5) == pytest.approx(1.5)
    assert det.idle_due_in(5.0) == 0.0
    assert det.observe(3.0, "b") == Transition(3.0, "waiting", "idle")
    assert det.idle_due_in(3.0) is None  # waiting: no idle timer


def test_a_working_hook_pushes_the_idle_timer_to_the_end_of_its_hold() -> None:
    det = TurnDetector(idle_after_s=0.5, hook_hold_s=3.0, now=0.0)
    det.observe(0.0, "a")
    det.hook(1.0, "working")
    assert det.idle_due_in(1.0) == pytest.approx(3.0)


def test_the_default_hook_hold_is_at_least_three_seconds_or_two_idle_periods() -> None:
    assert TurnDetector(idle_after_s=0.5, now=0).hook_hold_s == 3.0
    assert TurnDetector(idle_after_s=4.0, now=0).hook_hold_s == 8.0
    assert TurnDetector(idle_after_s=4.0, hook_hold_s=1.0, now=0).hook_hold_s == 1.0


def test_the_idle_clock_starts_when_the_output_was_written() -> None:
    det = TurnDetector(idle_after_s=2.0, now=0.0)
    det.observe(0.0, "a")
    # seen at 5.0, but the pane log says it was written at 4.0
    assert det.observe(5.0, "b", activity_at=4.0) is None
    assert det.observe(5.9, "b") is None
    assert det.observe(6.0, "b") == Transition(6.0, "waiting", "idle")


def test_an_activity_time_never_moves_the_clock_back_or_into_the_future() -> None:
    det = TurnDetector(idle_after_s=2.0, now=0.0)
    det.observe(0.0, "a")
    det.observe(3.0, "b", activity_at=1.0)
    det.observe(4.0, "c", activity_at=0.5)   # older than the last activity we knew: kept
    assert det.last_activity == 1.0
    det.observe(6.0, "d", activity_at=99.0)  # a clock ahead of ours: capped at now
    assert det.last_activity == 6.0


def test_the_first_look_emits_nothing_and_the_idle_clock_runs_from_the_start() -> None:
    det = TurnDetector(idle_after_s=1.0, now=0.0)
    assert det.observe(100.0, "same") is None  # the first look only sets the fingerprint
    # an agent silent since it was started is waiting at the next look
    assert det.observe(100.5, "same") == Transition(100.5, "waiting", "idle")
    fresh = TurnDetector(idle_after_s=1.0, now=100.0)
    fresh.observe(100.0, "same")
    assert fresh.observe(100.5, "same") is None
    assert fresh.observe(101.0, "same") == Transition(101.0, "waiting", "idle")


def test_recorded_state_is_followed_without_emitting() -> None:
    det = TurnDetector(idle_after_s=1.0, now=0.0)
    det.observe(0.0, "a")
    det.recorded("waiting", "approval")
    assert (det.state, det.reason) == ("waiting", "approval")
    det.recorded("working", "approval")
    assert det.reason is None
    assert det.observe(0.5, "b") is None  # already working: no second "working"


def test_replay_refuses_unknown_signals() -> None:
    with pytest.raises(ValueError, match="unknown signal 'bell'"):
        replay([(0.0, ("bell",))], idle_after_s=1.0)


def test_the_waiting_reasons_are_the_documented_ones() -> None:
    assert REASONS == ("idle", "question", "approval", "dialog")

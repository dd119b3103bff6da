"""The pure turn detector, replayed from recorded histories with an injected clock."""

from __future__ import annotations

from zen.core.turns import Transition, TurnDetector, replay


def states(trs: list[Transition]) -> list[tuple[float, str, str | None]]:
    return [(t.t, t.state, t.reason) for t in trs]


def test_silence_after_output_is_waiting_after_idle_after() -> None:
    history = [(0.0, ("output", 10)), (0.5, ("output", 20)), (1.0, ("output", 20)), (2.4, ("output", 20)),
               (2.6, ("output", 20)), (3.0, ("output", 20))]
    assert states(replay(history, idle_after_s=2)) == [(2.6, "waiting", "idle")]


def test_new_output_after_waiting_is_working_again_and_cycles() -> None:
    history = [(0, ("output", 1)), (1, ("output", 1)), (2, ("output", 1)),
               (3, ("output", 2)), (4, ("output", 3)), (5, ("output", 3)), (6, ("output", 3))]
    assert states(replay(history, idle_after_s=2)) == [
        (2, "waiting", "idle"), (3, "working", None), (6, "waiting", "idle")]


def test_the_screen_reading_refines_the_reason() -> None:
    history = [(0, ("output", 1)), (1, ("output", 1, "question")), (2.5, ("output", 1, "question"))]
    assert states(replay(history, idle_after_s=2)) == [(2.5, "waiting", "question")]


def test_a_prompt_that_finishes_drawing_later_updates_the_reason_once() -> None:
    history = [(0, ("output", 1)), (2, ("output", 1)), (3, ("output", 1, "approval")),
               (4, ("output", 1, "approval"))]
    assert states(replay(history, idle_after_s=2)) == [(2, "waiting", "idle"), (3, "waiting", "approval")]


def test_a_fresh_stop_hook_is_not_undone_by_the_tail_of_the_output() -> None:
    # Stop at 1.0; the agent redraws its prompt at 1.2 and 1.5: still waiting (hook hold 3 s)
    history = [(0, ("output", 1)), (0.5, ("output", 2)), (1.0, ("hook", "waiting", "idle")),
               (1.2, ("output", 3)), (1.5, ("output", 4)), (3.0, ("output", 4))]
    assert replay(history, idle_after_s=0.5, hook_hold_s=3) == []


def test_a_hook_reported_wait_outlasts_idle_redraws() -> None:
    # Claude Code redraws its idle screen ~10 s after Stop (hints, tips): that is not work
    history = [(0, ("output", 1)), (1.0, ("hook", "waiting", "idle")), (10.0, ("output", 2)),
               (11.0, ("output", 3)), (20.0, ("output", 3))]
    assert replay(history, idle_after_s=0.5, hook_hold_s=3) == []


def test_after_a_working_hook_s_hold_new_output_and_silence_count_again() -> None:
    history = [(0, ("output", 1)), (1.0, ("hook", "working")), (5.0, ("output", 2)), (6.0, ("output", 2))]
    assert states(replay(history, idle_after_s=0.5, hook_hold_s=3)) == [(6.0, "waiting", "idle")]


def test_typed_input_ends_the_hold() -> None:
    history = [(0, ("output", 1)), (1.0, ("hook", "waiting", "question")), (1.2, ("input",)),
               (1.3, ("output", 2))]
    assert states(replay(history, idle_after_s=0.5, hook_hold_s=3)) == [(1.3, "working", None)]


def test_a_working_hook_holds_off_the_idle_heuristic() -> None:
    # UserPromptSubmit at 0.1, a long silent tool call: not waiting until the hold ends
    history = [(0, ("output", 1)), (0.1, ("hook", "working")), (1.0, ("output", 1)), (2.0, ("output", 1)),
               (3.2, ("output", 1)), (3.4, ("output", 1))]
    assert states(replay(history, idle_after_s=0.5, hook_hold_s=3)) == [(3.2, "waiting", "idle")]


def test_no_transition_is_repeated() -> None:
    history = [(float(t), ("output", 1)) for t in range(20)]
    assert states(replay(history, idle_after_s=2)) == [(2.0, "waiting", "idle")]


def test_a_restarted_detector_follows_the_recorded_state() -> None:
    det = TurnDetector(idle_after_s=1, now=100.0, state="waiting", reason="question")
    assert det.observe(100.0, 5) is None
    assert det.observe(101.0, 5, "question") is None
    tr = det.observe(102.0, 6)
    assert tr == Transition(102.0, "working", None)

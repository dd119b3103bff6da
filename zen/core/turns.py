"""Turn detection: is the agent working, or waiting for a human? Pure: no I/O, no clock.

The supervisor feeds it signals with the time they were seen; it answers with the transitions
worth recording. The most reliable signal wins:

1. Agent hooks (Claude Stop / Notification / UserPromptSubmit, Codex notify, aider's
   notifications command) say outright what happened. They are recorded by `zen hook` itself;
   the detector only learns of them. A hook-reported wait holds until a working hook, a
   guarded tool call or typed input (an idle TUI redraws itself; that is not work); after a
   working hook, the activity heuristic may not contradict it for `hook_hold_s`.
   An agent that reports its own state in its output (Codex's `ESC ] 7501 ; state=...` sequence)
   is believed the same way, through `agent_state`; the supervisor records what it changes.
2. Output activity, for every agent: new output (the pane log grows, the cursor moves) means
   working; no new output for `idle_after_s` means waiting. The reason of a waiting turn comes
   from the adapter's reading of the screen (question / approval / dialog), else idle.

Typed input (`zen send`) ends any hook hold: the human has answered, so fresh output is fresh work.

`replay(history)` runs a recorded history of (t, signal) tuples through a detector, which is how
the tests exercise it.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

WORKING = "working"
WAITING = "waiting"
REASONS = ("idle", "question", "approval", "dialog")


@dataclass(frozen=True)
class Transition:
    t: float
    state: str            # working | waiting
    reason: str | None    # for waiting: idle | question | approval | dialog


class TurnDetector:
    def __init__(self, *, idle_after_s: float, hook_hold_s: float | None = None, now: float,
                 state: str = WORKING, reason: str | None = None) -> None:
        self.idle_after_s = idle_after_s
        self.hook_hold_s = hook_hold_s if hook_hold_s is not None else max(3.0, 2 * idle_after_s)
        self.state = state
        self.reason = reason
        self.last_activity = now
        self.fingerprint: Any = None
        self.hold_until = float("-inf")
        self.agent_busy = False     # the agent itself last said it was working (agent_state)
        self.turn_over = False      # a hook said the turn ended (not an approval wait), no input since

    # -- signals -------------------------------------------------------------------
    def hook(self, now: float, state: str, reason: str | None = None) -> None:
        """An agent hook said what happened. Already recorded by the hook: nothing to emit.

        A wait that a hook reported (Claude's Stop, a permission prompt) holds until the agent
        or the human says otherwise: a working hook, a guarded tool call, typed input, or exit.
        Agents redraw idle screens on their own (hints, tips, clocks); that is not work.
        """
        self._hold(now, state, reason)
        self.turn_over = state == WAITING and reason != "approval"

    def _hold(self, now: float, state: str, reason: str | None) -> None:
        self.state = state
        self.reason = reason if state == WAITING else None
        self.hold_until = float("inf") if state == WAITING else now + self.hook_hold_s
        self.last_activity = now

    def agent_state(self, now: float, state: str, reason: str | None = None) -> Transition | None:
        """The agent reported its own state in its output (Codex's terminal state sequence):
        trusted like a hook, but recorded by whoever read it (the transition returned).

        `working`; `waiting` with a reason (approval: a prompt is up; else a finished turn, which
        keeps the reason a hook gave, e.g. question); `idle`: at its prompt with no turn running,
        which ends a wait for approval (the prompt was answered or cancelled) and a turn the agent
        said was running, but means nothing at start-up, before any turn. A hook's word that
        the turn ended outranks a `working` read afterwards: the report may have been written
        before the hook ran (only new input starts the next turn).
        """
        tr: Transition | None = None
        if state == WORKING:
            if self.state == WAITING and self.turn_over:
                return None
            if self.state != WORKING:
                tr = self._move(now, WORKING, None)
            self.agent_busy = True
            self._hold(now, WORKING, None)
            return tr
        if state == WAITING:
            reason = reason or "idle"
            if self.state != WAITING or (reason == "approval" and self.reason != "approval"):
                tr = self._move(now, WAITING, reason)
        elif state == "idle":
            if (self.state == WAITING and self.reason == "approval") or (self.state == WORKING and self.agent_busy):
                tr = self._move(now, WAITING, "idle")
        else:
            return None
        self.agent_busy = False
        if tr is not None or self.state == WAITING:
            self._hold(now, WAITING, self.reason)
        return tr

    def tool(self, now: float, hold_s: float) -> None:
        """The agent started a tool call (its PreToolUse hook was answered): it works until a hook
        says otherwise or `hold_s` passed, however silent the call (a long test run, a wait on
        workers). Only agents whose hooks also report the turn's end get this signal. Called while
        it is recorded as waiting (a permission prompt answered in `zen attach`), it only ends the
        wait's hold, so the output that follows is read as work."""
        if self.state == WAITING:
            self.input(now)
            return
        self.hold_until = max(self.hold_until, now + hold_s)
        self.last_activity = now

    def input(self, now: float) -> None:
        """A human typed into the pane: the hold of a previous hook no longer applies."""
        self.hold_until = float("-inf")
        self.turn_over = False
        self.last_activity = now

    def recorded(self, state: str, reason: str | None = None) -> None:
        """Someone else recorded a state (e.g. a restart replayed the timeline): follow it."""
        self.state = state
        self.reason = reason if state == WAITING else None

    def observe(self, now: float, fingerprint: Any, screen_reason: str | None = None,
                activity_at: float | None = None) -> Transition | None:
        """One look at the pane: `fingerprint` changes whenever it produced output; the screen
        reading refines why it waits; `activity_at` is when the output was actually written, if
        known (the idle clock starts there, not at the moment we happened to look). Returns the
        transition to record, if any."""
        changed = self.fingerprint is not None and fingerprint != self.fingerprint
        first = self.fingerprint is None
        self.fingerprint = fingerprint
        held = now < self.hold_until
        if changed:
            self.last_activity = now if activity_at is None else min(now, max(activity_at, self.last_activity))
            if self.state == WAITING and not held:
                return self._move(now, WORKING, None)
            return None
        if first:
            return None
        if self.state == WAITING and screen_reason and screen_reason != self.reason:
            # still silent, but the screen now shows why (e.g. an approval prompt finished drawing,
            # or a hook that cannot tell a prompt from a question, like aider's, said idle)
            return self._move(now, WAITING, screen_reason)
        if held:
            return None
        if self.state == WORKING and now - self.last_activity >= self.idle_after_s:
            return self._move(now, WAITING, screen_reason or "idle")
        return None

    def idle_due_in(self, now: float) -> float | None:
        """Seconds until silence would make a working turn waiting (None when not working)."""
        if self.state != WORKING or self.fingerprint is None:
            return None
        return max(0.0, self.last_activity + self.idle_after_s - now, self.hold_until - now)

    def _move(self, now: float, state: str, reason: str | None) -> Transition:
        self.state = state
        self.reason = reason
        return Transition(now, state, reason)


def replay(history: Iterable[tuple[float, Any]], *, idle_after_s: float, hook_hold_s: float | None = None,
           start: float = 0.0) -> list[Transition]:
    """Run a recorded history through a fresh detector. Signals:

    ("output", fingerprint[, screen_reason])  one look at the pane
    ("hook", "working" | "waiting"[, reason])  an agent hook fired
    ("agent", "working" | "waiting" | "idle"[, reason])  the agent reported its state in its output
    ("input",)                                  a human typed into the pane
    """
    det = TurnDetector(idle_after_s=idle_after_s, hook_hold_s=hook_hold_s, now=start)
    out: list[Transition] = []
    for t, signal in history:
        kind = signal[0]
        if kind == "output":
            tr = det.observe(t, signal[1], signal[2] if len(signal) > 2 else None)
            if tr is not None:
                out.append(tr)
        elif kind == "hook":
            det.hook(t, signal[1], signal[2] if len(signal) > 2 else None)
        elif kind == "agent":
            tr = det.agent_state(t, signal[1], signal[2] if len(signal) > 2 else None)
            if tr is not None:
                out.append(tr)
        elif kind == "input":
            det.input(t)
        else:
            raise ValueError(f"unknown signal {kind!r}")
    return out

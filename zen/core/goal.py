"""Goal continuation (DESIGN 13): after each turn of a job with `goal: until-done`, continue it,
hold it, or stop it. Pure: the supervisor gathers each turn's facts and a clock reading.

The rule, decided by zen and never left to the model:

- done: the agent reported its goal done (agent_report status done) during the turn;
- budget: the goal's tokens, cost or wall time reached its cap, or its turns goal_max_turns;
- blocked: the same blocker (the normalised text of a reported blocker) in `blocked_turns` turns
  in a row, with no progress among them (a new commit or changed files), and those turns span at
  least `blocked_span_s`. Progress or a different blocker starts the count again;
- otherwise continue. After a turn that repeats a blocker, the continuation waits, so that the
  turns of a persisting blocker are spread over the span: the k-th repeat is continued no sooner
  than span * k / (blocked_turns - 1) after the first. A blocker that persists therefore stops the
  goal at exactly its `blocked_turns`-th turn, and never before the span has passed, however fast
  the agent turns; retrying a blocked agent at once would only burn tokens.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from dataclasses import dataclass

CONTINUE = "continue"
HOLD = "hold"
DONE = "done"
BLOCKED = "blocked"
BUDGET = "budget"

_NUMBERS = re.compile(r"0x[0-9a-f]+|\b[0-9a-f]{7,40}\b|\d+(?:\.\d+)?")
_SPACE = re.compile(r"\s+")


def fingerprint(blocker: str | None) -> str | None:
    """The blocker's identity: case, spacing, numbers and hashes (timings, ids, counts) ignored,
    so "timed out after 31s" and "Timed out after 30s" are the same blocker."""
    if blocker is None or not blocker.strip():
        return None
    text = _SPACE.sub(" ", _NUMBERS.sub("#", blocker.strip().lower()))
    return hashlib.sha256(text.encode()).hexdigest()[:16]


@dataclass(frozen=True)
class Turn:
    n: int                      # 1 for the first turn (the task's prompt)
    at: float                   # the goal clock when the turn ended
    blocker: str | None = None  # fingerprint of the blocker reported in the turn, if any
    progress: bool = False      # a new commit or changed files since the turn before
    done: bool = False          # reported done


@dataclass(frozen=True)
class Limits:
    blocked_turns: int = 3
    blocked_span_s: float = 60.0
    max_turns: int = 200
    tokens: int | None = None
    cost_usd: float | None = None
    wall_s: float | None = None


@dataclass(frozen=True)
class Decision:
    action: str                 # continue | hold | done | blocked | budget
    reason: str
    until: float | None = None  # for hold: continue at this clock reading
    streak: int = 0             # turns in a row with this blocker


def streak(turns: Sequence[Turn]) -> list[Turn]:
    """The last turns in a row that report the same blocker with no progress among them (a turn
    that made progress counts for none, whatever it reported)."""
    run: list[Turn] = []
    for t in turns:
        if t.blocker is None or t.progress:
            run = []
        elif run and run[-1].blocker != t.blocker:
            run = [t]
        else:
            run.append(t)
    return run


def decide(turns: Sequence[Turn], limits: Limits, *, started_at: float, now: float, tokens: float = 0,
           cost_usd: float = 0.0) -> Decision:
    """What to do once the last of `turns` has ended."""
    last = turns[-1]
    if last.done:
        return Decision(DONE, "the agent reported its goal done")
    over = _over_budget(limits, len(turns), started_at=started_at, now=now, tokens=tokens, cost_usd=cost_usd)
    if over:
        return Decision(BUDGET, over)
    run = streak(turns)
    if not run:
        return Decision(CONTINUE, "no blocker")
    span = last.at - run[0].at
    if len(run) >= limits.blocked_turns and span >= limits.blocked_span_s:
        return Decision(BLOCKED, f"the same blocker in {len(run)} turns in a row over {span:.0f}s",
                        streak=len(run))
    steps = max(1, limits.blocked_turns - 1)
    until = run[0].at + limits.blocked_span_s * min(len(run), steps) / steps
    if now < until:
        return Decision(HOLD, f"a blocker in {len(run)} turn(s) in a row: the next try waits", until=until,
                        streak=len(run))
    return Decision(CONTINUE, f"a blocker in {len(run)} turn(s) in a row", streak=len(run))


def _over_budget(limits: Limits, n: int, *, started_at: float, now: float, tokens: float,
                 cost_usd: float) -> str | None:
    if limits.tokens is not None and tokens >= limits.tokens:
        return f"token budget reached ({int(tokens)} of {limits.tokens})"
    if limits.cost_usd is not None and cost_usd >= limits.cost_usd:
        return f"cost budget reached (${cost_usd:.4f} of ${limits.cost_usd:.4f})"
    if limits.wall_s is not None and now - started_at >= limits.wall_s:
        return f"wall-time budget reached ({now - started_at:.0f}s of {limits.wall_s:.0f}s)"
    if n >= limits.max_turns:
        return f"turn limit reached ({n} of {limits.max_turns}, teams.goal_max_turns)"
    return None

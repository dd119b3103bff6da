"""What a restarted supervisor does with each job it finds (DESIGN section 3, Restart). Pure.

The timeline says what happened; tmux says whether the agent still runs:

- `agent.spawned` with no `agent.exited` after it: the agent's pane lives -> WATCH it again;
  it is gone or dead -> SETTLE (record its exit, with tmux's code if it kept one, and harvest);
- `exited` with no harvest after the exit -> HARVEST; so is a job that ended `cancelled` or
  `failed` whose harvest is still due (a cancel on a full disk stops the agent and records the
  exit, but cannot write the harvest: issue 15);
- `starting` (worktree.created, no agent.spawned): a spawn cut short -> RESUME it in place;
- `queued` -> QUEUE; no timeline at all, or anything else -> NOTHING.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from enum import StrEnum
from typing import Any

from zen.core.events import EventType as E
from zen.core.model import JobStatus

Event = Mapping[str, Any]


class Recover(StrEnum):
    WATCH = "watch"
    SETTLE = "settle"
    HARVEST = "harvest"
    RESUME = "resume"
    QUEUE = "queue"
    NOTHING = "nothing"


def last_index(events: Sequence[Event], etype: str) -> int:
    """Index of the last event of `etype`, or -1."""
    for i in range(len(events) - 1, -1, -1):
        if events[i].get("type") == etype:
            return i
    return -1


def running_spawn(events: Sequence[Event]) -> Event | None:
    """The last `agent.spawned` when no `agent.exited` follows it: an agent that may still run."""
    i = last_index(events, E.AGENT_SPAWNED)
    if i < 0 or any(e.get("type") == E.AGENT_EXITED for e in events[i:]):
        return None
    return events[i]


def harvest_pending(events: Sequence[Event]) -> bool:
    """No harvest finished after the agent's last exit: neither harvest.done nor a harvest.failed
    that trying again cannot cure (one the disk caused says retry)."""
    last_exit = max((i for i, e in enumerate(events) if e.get("type") == E.AGENT_EXITED), default=-1)
    return not any(e.get("type") == E.HARVEST_DONE or (e.get("type") == E.HARVEST_FAILED and not e.get("retry"))
                   for e in events[last_exit + 1:])


def harvest_due(events: Sequence[Event]) -> bool:
    """The last spawn's agent exited, on record, and no harvest finished after that."""
    i = last_index(events, E.AGENT_SPAWNED)
    return i >= 0 and any(e.get("type") == E.AGENT_EXITED for e in events[i:]) and harvest_pending(events)


def pending_input(events: Sequence[Event]) -> str | None:
    """The first prompt the running agent is still to be typed (agent.spawned's initial_input,
    with no initial input.sent after it): a supervisor killed before typing it types it now."""
    i = last_index(events, E.AGENT_SPAWNED)
    if i < 0:
        return None
    text = events[i].get("initial_input")
    if not isinstance(text, str) or not text:
        return None
    if any(e.get("type") == E.INPUT_SENT and e.get("initial") for e in events[i:]):
        return None
    return text


def decide(events: Sequence[Event], state: JobStatus, pane_alive: bool) -> Recover:
    """The one thing to do for a job found on restart; `pane_alive`: its tmux pane exists and
    is not dead (only asked about a job whose agent may still run)."""
    if not events:
        # no timeline: a record cut short before its first event is intake's to finish; one
        # whose timeline is gone ran, or began to, and must never run again (issue 15)
        return Recover.NOTHING
    if events[0].get("kind") == "attached":
        return Recover.NOTHING   # `zen run` in the user's terminal follows it (zen.orchestration.attach)
    if running_spawn(events) is not None:
        return Recover.WATCH if pane_alive else Recover.SETTLE
    if state is JobStatus.exited or (state in (JobStatus.cancelled, JobStatus.failed) and harvest_due(events)):
        return Recover.HARVEST
    if state is JobStatus.starting:
        return Recover.RESUME
    if state is JobStatus.queued:
        return Recover.QUEUE
    return Recover.NOTHING

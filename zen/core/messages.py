"""Messages between the jobs of a team (DESIGN 13): which are still queued, and how an agent reads
them. Pure and lean: `zen hook Stop` (on every turn's end) uses it to deliver queued messages."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from zen.core.events import Actor, EventType

MESSAGE = EventType.TEAM_MESSAGE
DELIVERED = EventType.TEAM_DELIVERED


def pending(events: Iterable[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """Queued team.message events that no team.delivered names yet, oldest first."""
    evs = list(events)
    delivered = {ev.get("id") for ev in evs if ev.get("type") == DELIVERED}
    return [ev for ev in evs if ev.get("type") == MESSAGE and ev.get("queued") and ev.get("id") not in delivered]


def delivered(events: Iterable[Mapping[str, Any]], msg_id: str) -> bool:
    return any(ev.get("type") == DELIVERED and ev.get("id") == msg_id for ev in events)


def text(msgs: Iterable[Mapping[str, Any]]) -> str:
    """What the agent reads: one paragraph per message, naming who sent it."""
    parts = []
    for m in msgs:
        sender = str(m.get("sender") or "someone")
        who = "a human" if sender == "human" else sender.replace("job:", "job ")
        parts.append(f"[zen: message from {who}] {m.get('text', '')}")
    return "\n\n".join(parts)


def at_prompt(events: Iterable[Mapping[str, Any]], waiting: bool) -> bool:
    """Does the agent wait at its prompt, so typed text starts its next turn? For an agent whose
    hooks report its turns, the hooks decide: after a working hook (a prompt submitted) and before
    the next waiting one (Stop), it is inside its turn, however quiet (a long tool call, a wait on
    its workers). Without such hooks, the state zen reads off the terminal decides (`waiting`)."""
    for ev in reversed(list(events)):
        if ev.get("actor") == Actor.HOOK and ev.get("type") in (EventType.TURN_WORKING, EventType.TURN_WAITING):
            return bool(ev.get("type") == EventType.TURN_WAITING)
    return waiting

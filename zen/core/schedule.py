"""Scheduling decisions (DESIGN section 3): which queued job starts next, and why the others wait.

Pure: the supervisor gathers the facts (queued jobs, states of their dependencies, running
count, breaker, clock) and applies the plan. `zen queue` shows the same plan to humans.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

from zen.core.breaker import breaker
from zen.core.events import EventType

__all__ = ["Decision", "DepState", "Queued", "backoff_s", "breaker", "early_failure", "find_cycle", "plan",
           "retries_done"]

# dependency states that can never turn into "harvested with exit 0"
_DEAD = frozenset({"failed", "cancelled"})


@dataclass(frozen=True)
class Queued:
    id: str
    name: str
    priority: int
    created_at: str
    depends_on: tuple[str, ...] = ()
    automatic: bool = False          # a retry, or spawned by an agent rather than a human
    retry_at: float | None = None    # epoch seconds; None = no backoff pending


@dataclass(frozen=True)
class DepState:
    state: str
    exit_code: int | None = None


@dataclass(frozen=True)
class Decision:
    job: str
    action: str   # "start" | "wait" | "fail"
    why: str


def order(queued: Iterable[Queued]) -> list[Queued]:
    """Priority 1 first, then the oldest."""
    return sorted(queued, key=lambda q: (q.priority, q.created_at, q.id))


def _fmt(ts: float) -> str:
    return datetime.fromtimestamp(ts, UTC).strftime("%H:%M:%SZ")


def plan(queued: Iterable[Queued], deps: Mapping[str, DepState], *, running: int, max_concurrent: int,
         breaker_until: float | None, now: float) -> list[Decision]:
    out: list[Decision] = []
    for q in order(queued):
        decision = _blocked(q, deps, breaker_until, now)
        if decision is None:
            if running < max_concurrent:
                running += 1
                decision = Decision(q.id, "start", "next in line")
            else:
                decision = Decision(q.id, "wait", f"waiting for a slot ({running} of {max_concurrent} running)")
        out.append(decision)
    return out


def _blocked(q: Queued, deps: Mapping[str, DepState], breaker_until: float | None, now: float) -> Decision | None:
    for dep in q.depends_on:
        st = deps.get(dep)
        if st is None:
            return Decision(q.id, "fail", f"dependency {dep} does not exist")
        if st.state in _DEAD:
            return Decision(q.id, "fail", f"dependency {dep} {st.state}")
        if st.state == "harvested" and st.exit_code not in (0, None):
            return Decision(q.id, "fail", f"dependency {dep} exited with code {st.exit_code}")
        if st.state != "harvested":
            return Decision(q.id, "wait", f"waiting for dependency {dep} ({st.state})")
    if q.retry_at is not None and q.retry_at > now:
        return Decision(q.id, "wait", f"backoff until {_fmt(q.retry_at)}")
    if q.automatic and breaker_until is not None and breaker_until > now:
        return Decision(q.id, "wait", f"circuit breaker open until {_fmt(breaker_until)}")
    return None


def backoff_s(attempt: int, *, base_s: float, factor: float, cap_s: float) -> float:
    """Delay before retry number `attempt` (1 = the first retry)."""
    return float(min(cap_s, base_s * factor ** max(0, attempt - 1)))


def find_cycle(graph: Mapping[str, Iterable[str]]) -> list[str] | None:
    """A dependency cycle in `graph` (node -> its dependencies) as a path, or None."""
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        stack.append(node)
        for dep in graph.get(node, ()):
            if state.get(dep) == 1:
                return [*stack[stack.index(dep):], dep]
            if state.get(dep) is None:
                found = visit(dep)
                if found:
                    return found
        stack.pop()
        state[node] = 2
        return None

    for node in list(graph):
        if state.get(node) is None:
            found = visit(node)
            if found:
                return found
    return None


def retries_done(events: Iterable[Mapping[str, object]]) -> int:
    """How many retries of a failed start the timeline has scheduled."""
    return sum(1 for e in events if e.get("type") == EventType.RETRY_SCHEDULED)


# what, after the last agent.spawned, shows the agent got past its start
_PAST_START = frozenset({EventType.TURN_WAITING, EventType.INPUT_SENT, EventType.JOB_CANCELLED,
                         EventType.JOB_TIMEOUT, EventType.AGENT_EXITED})


def early_failure(events: Sequence[Mapping[str, object]], exit_code: int | None, signal: int | None) -> str | None:
    """Why a start failed, when the agent died with an error before finishing its first turn
    (then it counts as a failed start, which may be retried); None for any other end."""
    if exit_code in (0, None) and signal is None:
        return None
    spawned = max((i for i, e in enumerate(events) if e.get("type") == EventType.AGENT_SPAWNED), default=-1)
    if spawned < 0 or {e.get("type") for e in events[spawned + 1:]} & _PAST_START:
        return None
    how = f"code {exit_code}" if exit_code is not None else f"signal {signal}"
    return f"agent exited with {how} before its first turn"

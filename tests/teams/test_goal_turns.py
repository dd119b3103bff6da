"""Which wait ends a goal's turn (zen.orchestration.loop.goals): the supervisor's judge on timelines as
agents leave them. An agent whose hooks report its turns (Claude's Stop, the simulated agent's)
ends a turn only by its hook: a silence zen read off the terminal before the turn even started
(a loaded machine holding the agent still) is not one, or the goal would count a turn without
the agent's report in it. An agent without such hooks (a plain command) ends a turn by silence."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.helpers import wait_until
from zen.core.events import EventType as E
from zen.core.ids import iso, make_job_id, utcnow
from zen.core.model import Task
from zen.orchestration.loop.goals import GoalKeeper
from zen.store.home import Home
from zen.store.jobs import JobStore

BLOCKER = "the staging database refuses connections"


def goal_job(zh: Path, agent: str) -> tuple[GoalKeeper, JobStore, str]:
    home = Home(zh)
    store = JobStore(home)
    job = make_job_id(f"goal {agent}")
    task = Task(id=job, name="goal", prompt="reach the goal", agent=agent, goal="until-done", lane="app",
                created_at=iso(utcnow()),
                **({"command": ["sh"]} if agent == "cmd" else {}))
    assert store.create(task)
    store.append(job, E.AGENT_SPAWNED, session=f"zen-{job}", target="%1", pid=1, argv=["x"])
    return GoalKeeper(home, store, tmux=None, clock=lambda: 1_800_000_000.0), store, job  # type: ignore[arg-type]


def goal_events(store: JobStore, job: str) -> list[dict[str, Any]]:
    return [e for e in store.events(job) if e["type"].startswith("goal.")]


def test_a_silence_before_a_hooked_agents_turn_starts_is_not_the_end_of_its_turn(zh: Path) -> None:
    keeper, store, job = goal_job(zh, "sim")
    store.append(job, E.TURN_WAITING, reason="idle", by="activity")     # slow to start: silent 2 s
    keeper.after_turn(job)
    assert goal_events(store, job) == []
    store.append(job, E.TURN_WORKING, actor="hook", hook="UserPromptSubmit")
    store.append(job, E.TEAM_REPORT, actor="agent", status="blocked", blocker=BLOCKER)
    keeper.after_turn(job)
    assert goal_events(store, job) == []                                # still inside its turn
    store.append(job, E.TURN_WAITING, actor="hook", reason="idle", hook="Stop")
    # the judge gives the Stop hook's usage a moment to follow (goals.USAGE_WAIT_S), then judges
    wait_until(lambda: keeper.after_turn(job) or goal_events(store, job), timeout=10, message="the turn judged")
    turn, held = goal_events(store, job)
    assert (turn["type"], turn["turn"], turn["blocker"]) == ("goal.turn", 1, BLOCKER)
    assert held["type"] == "goal.held"                                  # its blocker, counted once


@pytest.mark.parametrize("agent", ["claude", "codex", "gemini", "aider"])
def test_every_agent_whose_hooks_report_turns_ends_them_only_by_its_hook(zh: Path, agent: str) -> None:
    keeper, store, job = goal_job(zh, agent)
    store.append(job, E.TURN_WAITING, reason="idle", by="activity")
    keeper.after_turn(job)
    assert goal_events(store, job) == []


def test_a_command_without_hooks_ends_its_turn_by_silence(zh: Path) -> None:
    keeper, store, job = goal_job(zh, "cmd")
    store.append(job, E.TEAM_REPORT, actor="agent", status="blocked", blocker=BLOCKER)
    store.append(job, E.TURN_WAITING, reason="idle", by="activity")
    keeper.after_turn(job)
    assert [(e["type"], e.get("blocker")) for e in goal_events(store, job)] == [("goal.turn", BLOCKER),
                                                                                ("goal.held", None)]

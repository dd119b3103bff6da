"""The agent names, defined once in zen.core.agents and used by the task model, the adapter
registry and `zen dispatch --agent`."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from zen import agents
from zen.core.agents import AGENT_NAMES, DEFAULT_AGENT, AgentKind
from zen.core.model import Task


def _task(**kw: object) -> Task:
    return Task.model_validate({"id": "20260101T000000Z-n-0001", "name": "n", "prompt": "p", "lane": "l",
                                "created_at": "2026-01-01T00:00:00Z", **kw})


def test_the_names_are_the_kinds_in_order_and_unique() -> None:
    assert tuple(k.value for k in AgentKind) == AGENT_NAMES
    assert len(set(AGENT_NAMES)) == len(AGENT_NAMES)
    assert AGENT_NAMES == ("claude", "codex", "aider", "gemini", "sim", "cmd")


def test_the_default_agent_is_the_simulated_one() -> None:
    assert DEFAULT_AGENT is AgentKind.sim
    assert DEFAULT_AGENT in AGENT_NAMES  # a StrEnum compares as its name


def test_the_model_re_exports_the_same_kind() -> None:
    from zen.core import model  # the historical import path stays valid

    assert model.AgentKind is AgentKind


@pytest.mark.parametrize("name", AGENT_NAMES)
def test_every_name_is_a_valid_task_agent_and_has_an_adapter(name: str) -> None:
    extra = {"command": ["true"]} if name == "cmd" else {}  # the one agent that needs its argv
    assert _task(agent=name, **extra).agent is AgentKind(name)
    assert agents.get_adapter(name).name == name


def test_an_unknown_agent_is_refused_by_the_model_and_the_registry() -> None:
    with pytest.raises(ValidationError):
        _task(agent="cursor")
    with pytest.raises(ValidationError, match="needs a command"):
        _task(agent="cmd")
    with pytest.raises(Exception, match="unknown agent 'cursor'"):
        agents.get_adapter("cursor")


def test_the_registry_accepts_an_agent_kind_and_any_case() -> None:
    assert agents.get_adapter(AgentKind.codex).name == "codex"
    assert agents.get_adapter(" Claude ").name == "claude"

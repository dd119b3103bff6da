"""The task file and the job snapshot: what is accepted, what is refused, and with which sentence."""

from __future__ import annotations

import json
from typing import Any

import pytest
from pydantic import ValidationError

from zen.core.model import TASK_VERSION, AgentKind, JobSnapshot, JobStatus, Task


def task(**over: Any) -> dict[str, Any]:
    base: dict[str, Any] = {"id": "20261129T101500Z-fix-login-3fa9", "name": "fix-login", "prompt": "Fix it.",
                            "lane": "app", "agent": "claude", "created_at": "2026-11-29T10:15:00.123Z"}
    base.update(over)
    return {k: v for k, v in base.items() if v is not None}


def test_a_task_takes_the_documented_defaults() -> None:
    t = Task.model_validate(task())
    assert t.zen == TASK_VERSION and t.priority == 3 and t.depends_on == [] and t.max_retries == 0
    assert t.timeout == "30m" and t.timeout_s == 1800.0 and t.created_by == "human" and t.parent is None


def test_the_agent_names_are_the_documented_ones() -> None:
    assert {a.value for a in AgentKind} == {"claude", "codex", "aider", "gemini", "sim", "cmd"}
    with pytest.raises(ValidationError, match="agent"):
        Task.model_validate(task(agent="copilot"))


@pytest.mark.parametrize(("over", "message"), [
    ({"zen": 2}, "version 2 is not supported"),
    ({"prompt": "  \n"}, "the prompt is empty"),
    ({"name": "Fix Login"}, "must be lower-case letters"),
    ({"name": "-x"}, "must be lower-case letters"),
    ({"priority": 0}, "priority"),
    ({"priority": 6}, "priority"),
    ({"max_retries": -1}, "max_retries"),
    ({"max_retries": 21}, "max_retries"),
    ({"timeout": "0s"}, "timeout must be positive"),
    ({"timeout": "soon"}, "not a duration"),
    ({"colour": "blue"}, "colour"),
    ({"agent": "cmd"}, "agent 'cmd' needs a command"),
    ({"repo": "/src/app"}, "either a lane or a repo, not both"),
    ({"lane": None}, "names no lane or repo"),
    ({"agent": "cmd", "command": "echo 'unclosed"}, "cannot be split like a shell would"),
])
def test_bad_tasks_are_refused_with_a_sentence(over: dict[str, Any], message: str) -> None:
    with pytest.raises(ValidationError, match=message):
        Task.model_validate(task(**over))


def test_a_command_string_is_split_like_a_shell_would() -> None:
    t = Task.model_validate(task(agent="cmd", command="python -c 'print(1 + 1)'"))
    assert t.command == ["python", "-c", "print(1 + 1)"]
    t = Task.model_validate(task(agent="cmd", command=["sh", "-c", "echo hi"]))
    assert t.command == ["sh", "-c", "echo hi"]


def test_a_repo_instead_of_a_lane() -> None:
    t = Task.model_validate(task(lane=None, repo="/src/app"))
    assert t.repo == "/src/app" and t.lane is None


@pytest.mark.parametrize(("timeout", "seconds"), [("1h30m", 5400.0), (90, 90.0), ("2.5s", 2.5)])
def test_timeout_in_seconds(timeout: str | float, seconds: float) -> None:
    assert Task.model_validate(task(timeout=timeout)).timeout_s == seconds


def test_a_task_survives_a_round_trip_through_json() -> None:
    t = Task.model_validate(task(priority=1, depends_on=["docs"], timeout="1h"))
    assert Task.model_validate(json.loads(t.model_dump_json())) == t


def test_live_and_final_states_partition_the_machine() -> None:
    live = {s for s in JobStatus if s.live}
    final = {s for s in JobStatus if s.final}
    assert live == {JobStatus.starting, JobStatus.working, JobStatus.waiting, JobStatus.paused}
    assert final == {JobStatus.harvested, JobStatus.failed, JobStatus.cancelled}
    assert not live & final
    assert set(JobStatus) - live - final == {JobStatus.queued, JobStatus.exited}


def test_states_compare_as_their_names() -> None:
    assert JobStatus("waiting") is JobStatus.waiting and JobStatus.waiting == "waiting"
    assert f"{JobStatus.harvested}" == "harvested"


def test_a_snapshot_starts_queued_and_keeps_fields_it_does_not_know() -> None:
    snap = JobSnapshot(job="j")
    assert snap.state is JobStatus.queued and snap.revision == 0 and snap.seq == 0 and snap.v == 1
    newer = JobSnapshot.model_validate({"job": "j", "state": "working", "lease": "abc"})
    assert newer.state is JobStatus.working
    assert json.loads(newer.model_dump_json())["lease"] == "abc"


def test_a_snapshot_refuses_an_unknown_state() -> None:
    with pytest.raises(ValidationError):
        JobSnapshot.model_validate({"job": "j", "state": "sleeping"})

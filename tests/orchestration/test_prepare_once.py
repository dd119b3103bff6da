"""A dispatch prepares its task once (issue 34): the fast lane (enqueue) hands the fields it
prepared to the model's lane (dispatch) when it declines a task, instead of both preparing it
(reading the lane and resolving its base in git twice)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from zen.cli.submit import submit
from zen.orchestration.intake import dispatch as dispatch_mod
from zen.orchestration.intake import enqueue as enqueue_mod
from zen.orchestration.read.query import pending_tasks
from zen.store.home import Home


@pytest.fixture
def prepares(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    calls: list[str] = []
    real = enqueue_mod.prepare

    def counting(cfg: Any, fields: dict[str, Any]) -> dict[str, Any]:
        calls.append(str(fields.get("name")))
        return real(cfg, fields)

    monkeypatch.setattr(enqueue_mod, "prepare", counting)
    monkeypatch.setattr(dispatch_mod, "prepare", counting)
    return calls


def test_a_task_the_fast_lane_declines_is_prepared_once(lane: Path, home: Path, prepares: list[str],
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    h = Home(home)
    assert submit(h, "first task", name="first") == 0
    assert prepares == ["first"]                       # the fast lane published it
    prepares.clear()
    assert submit(h, "second task", name="second", depends_on=["first"]) == 0   # the model's lane
    assert prepares == ["second"]
    second = next(t for t in pending_tasks(h) if t.name == "second")
    first = next(t for t in pending_tasks(h) if t.name == "first")
    assert list(second.depends_on) == [first.id]
    assert capsys.readouterr().out.split()[-1] == second.id


def test_the_model_lane_alone_still_prepares_its_task(lane: Path, home: Path, prepares: list[str]) -> None:
    h = Home(home)
    assert submit(h, "a task", name="alone", json_out=True) == 0
    assert prepares == ["alone"]

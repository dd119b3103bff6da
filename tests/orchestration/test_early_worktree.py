"""A task just claimed has its `git worktree add` begun before its record is written (the
supervisor's intake hands it to Starter.prestart), so that git checks files out while the record's
fsyncs run. A head start the pass's plan does not use is taken back: no worktree or branch is left
for a job that did not start."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tests.helpers import wait_until
from zen.adapters.tmux import Tmux
from zen.core.clock import SYSTEM
from zen.core.ids import iso, make_job_id, utcnow
from zen.core.model import Task
from zen.orchestration.loop.starter import Starter
from zen.store.config import Config
from zen.store.jobs import JobStore
from zen.store.layout import Home


def _task(name: str, **extra: object) -> Task:
    fields: dict[str, object] = {"lane": "app", **extra}
    return Task(id=make_job_id(name), name=name, prompt="p", agent="cmd", command=["true"],
                created_at=iso(utcnow()), **fields)


@pytest.fixture
def starter(home: Path, lane: Path, tmp_path: Path) -> Starter:
    h = Home(home)
    cfg = Config.load(h)
    return Starter(h, JobStore(h), Tmux("zen-unused", tmp_path / "tmux.conf"), SYSTEM, config=lambda: cfg)


def _branches(repo: Path) -> str:
    return subprocess.run(["git", "-C", str(repo), "branch", "--list", "zen/*"], capture_output=True, text=True,
                          check=True).stdout


def test_a_head_start_the_plan_does_not_use_is_taken_back(starter: Starter, lane: Path) -> None:
    task = _task("held")
    starter.prestart(task, running=0)
    assert task.id in starter.early
    wait_until((starter.home.worktree(task.id) / "CHANGELOG.md").exists, message="git checked out")
    assert f"zen/{task.id}" in _branches(lane)
    starter.drop_early()
    assert not starter.home.worktree(task.id).exists() and _branches(lane) == ""
    assert starter.early == {}


def test_no_head_start_without_a_free_slot_or_for_a_task_that_may_not_start_here(starter: Starter,
                                                                                  lane: Path) -> None:
    slots = int(starter.config().get("supervisor", "max_concurrent_tasks"))
    starter.prestart(_task("full"), running=slots)                            # no free slot
    starter.prestart(_task("after", depends_on=[make_job_id("first")]), running=0)   # waits on another job
    starter.prestart(_task("ray", executor="ray"), running=0)                 # runs on a cluster
    starter.prestart(_task("gone", lane="no-such-lane"), running=0)           # its lane does not resolve
    assert starter.early == {} and _branches(lane) == ""
    first = _task("first")
    for _ in range(2):                                                        # once per task
        starter.prestart(first, running=0)
    assert list(starter.early) == [first.id]
    starter.drop_early()

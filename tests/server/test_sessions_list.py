"""GET /api/v1/agent/sessions against a real `zen serve`: the server keeps each job's answer until
its timeline moves (zen/server/context.py), so what it lists must follow every change at once:
a new event, a new job, a job removed, a directory that is not a job. Each row must also be the
same session the job's own endpoint shows."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from typing import Any

import pytest

from tests.server.served import Served, serving
from zen.core.ids import iso, make_job_id, utcnow
from zen.core.model import Task
from zen.store.home import Home
from zen.store.jobs import JobStore


@pytest.fixture(scope="module")
def listed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    with serving(tmp_path_factory.mktemp("listed"), supervise=False) as s:
        yield s


def _job(store: JobStore, name: str, *, waiting: bool = True) -> str:
    task = Task(id=make_job_id(name), name=name, prompt=f"list {name}", lane="app", agent="sim", created_at=iso(utcnow()))
    store.create(task)
    if waiting:
        store.append(task.id, "worktree.created", path=f"/w/{name}", branch=f"zen/{task.id}", base_commit="0" * 40)
        store.append(task.id, "agent.spawned", session=f"zen-{task.id}", target="%1")
        store.append(task.id, "turn.waiting", reason="idle")
    return task.id


def _listed(s: Served, **params: str) -> list[dict[str, Any]]:
    r = s.get("/api/v1/agent/sessions", params=params)
    assert r.status_code == 200, r.text
    body = r.json()
    assert set(body) == {"sessions", "supervisor", "kill_switch"}, body
    return list(body["sessions"])


def _states(s: Served, **params: str) -> dict[str, str]:
    return {row["job"]: row["state"] for row in _listed(s, **params)}


def test_the_list_follows_every_change_of_the_jobs_at_once(listed: Served) -> None:
    store = JobStore(Home(listed.home))
    a, b = _job(store, "alpha"), _job(store, "beta")
    q = _job(store, "gamma", waiting=False)
    rows = _listed(listed)
    assert [row["job"] for row in rows] == sorted([a, b, q])  # oldest first, as JobStore.ids
    for row in rows:  # the same document the job's own endpoint gives
        assert row == listed.snap(row["job"])
    assert _states(listed) == {a: "waiting", b: "waiting", q: "queued"}
    assert set(_states(listed, live="true")) == {a, b}

    # no wait between the change and the next request: a cached answer must not outlive it
    store.append(a, "turn.working")
    assert _states(listed)[a] == "working"
    store.append(a, "turn.waiting", reason="idle")
    store.append(b, "turn.working")
    assert _states(listed) == {a: "waiting", b: "working", q: "queued"}
    assert _listed(listed)[0] == listed.snap(a)

    c = _job(store, "delta")
    assert _states(listed)[c] == "waiting"

    # a directory with a timeline but no task.yaml is not a job (JobStore.ids skips it too)
    stray = listed.home / "jobs" / make_job_id("stray")
    stray.mkdir()
    (stray / "events.jsonl").write_text(json.dumps({"seq": 1, "type": "job.queued", "job": stray.name}) + "\n")
    assert stray.name not in _states(listed)
    shutil.rmtree(stray)

    shutil.rmtree(store.dir(b))  # as `zen gc` removes a finished job
    assert _states(listed) == {a: "waiting", q: "queued", c: "waiting"}

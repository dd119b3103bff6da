"""Leases live exactly as long as their job: released the moment the supervisor records the end,
renewed while the job lives, reconciled when a supervisor starts."""

from __future__ import annotations

import json
import os
import signal
from pathlib import Path

from tests.coord.util import make_job, set_coordinator, set_state
from tests.helpers import wait_until, zen
from tests.supervisor.util import dispatch_sim, events, snap, wait_event, wait_state
from zen.coord import leases
from zen.core.ids import parse_iso


def _lease_files(home: Path) -> list[dict]:
    return [json.loads(p.read_text()) for p in sorted((home / "coord" / "app" / "leases").glob("*.json"))]


def _holder(zh: Path, tmp_path: Path, name: str = "holder") -> str:
    job = dispatch_sim(zh, tmp_path, name, [{"write": {"path": f"{name}.txt", "content": "x\n"}},
                                            {"wait": True}], "--lane", "app")
    wait_event(zh, job, "lock.acquired", path=f"{name}.txt", timeout=60)
    wait_state(zh, job, "waiting", timeout=30)
    return job


def _ts(ev: dict) -> float:
    return parse_iso(ev["ts"]).timestamp()


def test_a_killed_holders_lease_is_released_within_a_second_of_its_recorded_exit(zh: Path, sups,
                                                                                  tmp_path: Path) -> None:
    sups.start()
    job = _holder(zh, tmp_path)
    pid = next(e for e in events(zh, job) if e["type"] == "agent.spawned")["pid"]
    os.killpg(os.getpgid(pid), signal.SIGKILL)
    exited = wait_event(zh, job, "agent.exited", timeout=30)
    released = wait_event(zh, job, "lock.released", timeout=5)
    assert released["path"] == f"{'holder'}.txt" and released["why"] == "job exited"
    assert 0 <= _ts(released) - _ts(exited) <= 1.0, (exited["ts"], released["ts"])
    assert _lease_files(zh) == []
    # the file is free: another job's write to it passes
    other = dispatch_sim(zh, tmp_path, "taker", [{"write": {"path": "holder.txt", "content": "y\n"}},
                                                 {"wait": True}], "--lane", "app")
    wait_event(zh, other, "lock.acquired", path="holder.txt", timeout=60)
    assert zen("cancel", other).returncode == 0


def test_cancel_and_finish_release_at_once(zh: Path, sups, tmp_path: Path) -> None:
    sups.start()
    a, b = _holder(zh, tmp_path, "first"), _holder(zh, tmp_path, "second")
    assert zen("cancel", a).returncode == 0
    assert [x["job"] for x in _lease_files(zh)] == [b]            # when cancel returns, it is gone
    assert zen("finish", b).returncode == 0
    assert _lease_files(zh) == []
    for job in (a, b):
        [released] = [e for e in events(zh, job) if e["type"] == "lock.released"]
        ended = next(e for e in events(zh, job) if e["type"] == "agent.exited")
        harvested = next(e for e in events(zh, job) if e["type"] in ("harvest.done", "harvest.failed"))
        # released once the end is recorded and before the harvest (under load the supervisor may
        # record something else of the job in between, so not necessarily the very next event)
        assert ended["seq"] < released["seq"] < harvested["seq"]


def test_leases_are_renewed_while_the_job_lives(zh: Path, sups, tmp_path: Path) -> None:
    set_coordinator(zh, lock_timeout="3s", scan_interval="0.2s")
    sups.start()
    job = _holder(zh, tmp_path)
    first = _lease_files(zh)[0]
    later = wait_until(lambda: [x for x in _lease_files(zh) if x["revision"] >= first["revision"] + 2],
                       timeout=20, message="two renewals")[0]
    assert later["expires"] > first["expires"] and later["created"] == first["created"]
    assert snap(zh, job).state.value == "waiting"
    assert zen("cancel", job).returncode == 0


def test_a_restarted_supervisor_reconciles_leases_of_jobs_that_ended_while_it_was_down(
        zh: Path, sups, tmp_path: Path) -> None:
    proc = sups.start()
    job = _holder(zh, tmp_path)
    assert sups.stop(proc) == 0                          # agents keep running without it
    pid = next(e for e in events(zh, job) if e["type"] == "agent.spawned")["pid"]
    os.killpg(os.getpgid(pid), signal.SIGKILL)
    # a leftover of a crash: the lease of a job whose end was recorded but whose release was not
    ghost = "20261201T000000Z-ghost-0001"
    make_job(zh, ghost)
    leases.acquire(zh, "app", ghost, "ghost.txt")
    set_state(zh, ghost, "cancelled")
    assert len(_lease_files(zh)) == 2
    sups.start()
    wait_until(lambda: _lease_files(zh) == [], timeout=30, message="the leases to be reconciled")
    assert wait_event(zh, job, "lock.released", timeout=5)["why"] == "job exited"
    ghost_ev = [e for e in events(zh, ghost) if e["type"] == "lock.released"]
    assert ghost_ev and ghost_ev[-1]["why"] == "job ended"

"""pause / resume / cancel / finish bookkeeping in-process (zen.orchestration.job.pause and control):
what each records on the job's timeline, the state it leaves, and the one-line refusals; pause and
resume on a real agent process in a tmux pane on the home's private server."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import one_line, tune, wait_until
from zen.adapters import procs
from zen.adapters.tmux import Tmux
from zen.core.ids import iso, utcnow
from zen.core.model import Task
from zen.errors import NotFound, ZenError
from zen.orchestration.intake.dispatch import dispatch
from zen.orchestration.job import control
from zen.orchestration.job.pause import pause, resume
from zen.store.home import Home
from zen.store.jobs import JobStore

JOB = "20270101T000000Z-fix-login-3fa9"


def make_job(h: Home, job: str = JOB, name: str = "fix-login") -> JobStore:
    store = JobStore(h)
    store.create(Task.model_validate({"id": job, "name": name, "prompt": "Fix it", "lane": "app",
                                      "created_at": iso(utcnow())}))
    return store


def types(store: JobStore, job: str = JOB) -> list[str]:
    return [e["type"] for e in store.events(job)]


def refused(fn: Any, *args: Any, **kw: Any) -> str:
    with pytest.raises(ZenError) as exc:
        fn(*args, **kw)
    assert one_line(str(exc.value)), str(exc.value)
    return str(exc.value)


@pytest.fixture
def running(home: Path, tmp_path: Path) -> tuple[Home, JobStore, int]:
    """A job whose agent (a shell with a sleeping child) runs in a tmux pane: (home, store, pane pid)."""
    tune(home, **{"kill_grace: 5s": "kill_grace: 0.5s"})   # a cancel here need not wait the full grace
    h = Home(home)
    store = make_job(h)
    tmux = Tmux.for_home(h)
    session = f"zen-{JOB}"
    info = tmux.start_pane(session, tmp_path, ["sh", "-c", "sleep 60 & wait"], {"PATH": "/usr/bin:/bin"},
                           tmp_path / "pane.log")
    store.append(JOB, "worktree.created", path=str(tmp_path), branch=f"zen/{JOB}", base_commit="0" * 40)
    store.append(JOB, "agent.spawned", session=session, pid=info.pid)
    wait_until(lambda: procs.descendants(info.pid), timeout=10, message="the agent's child")
    return h, store, info.pid


# -- pause and resume ---------------------------------------------------------------------------

def test_pause_stops_every_process_below_the_pane_and_records_it(running: tuple[Home, JobStore, int]) -> None:
    h, store, pid = running
    out = pause(h, "fix-login")
    assert out.job == JOB and out.state == "paused"
    [ev] = [e for e in store.events(JOB) if e["type"] == "job.paused"]
    assert ev["seq"] == out.seq and ev["actor"] == "human" and ev["by"] == "human" and ev["pid"] == pid
    kids = procs.descendants(pid)
    assert kids and all(procs.state(k) == "T" for k in kids)
    assert store.snapshot(JOB).state.value == "paused"


def test_resume_continues_them_returns_the_state_before_and_says_how_long(running: tuple[Home, JobStore, int]) -> None:
    h, store, pid = running
    before = store.snapshot(JOB).state.value
    pause(h, JOB)
    out = resume(h, JOB, by="dashboard")
    assert out.state == before and out.paused_s >= 0.0
    ev = store.events(JOB)[-1]
    assert ev["type"] == "job.resumed" and ev["by"] == "dashboard" and ev["paused_s"] == out.paused_s
    wait_until(lambda: all(procs.state(k) != "T" for k in procs.descendants(pid)), timeout=5,
               message="the agent's processes to run again")


def test_pausing_twice_is_refused_and_records_one_pause(running: tuple[Home, JobStore, int]) -> None:
    h, store, _ = running
    pause(h, JOB)
    msg = refused(pause, h, JOB)
    assert "already paused" in msg and f"zen resume {JOB}" in msg
    assert types(store).count("job.paused") == 1


def test_two_humans_pausing_at_once_record_one_pause(running: tuple[Home, JobStore, int]) -> None:
    h, store, _ = running
    errors: list[str] = []
    barrier = threading.Barrier(3)

    def go() -> None:
        barrier.wait()
        try:
            pause(h, JOB)
        except ZenError as exc:
            errors.append(str(exc))

    threads = [threading.Thread(target=go) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert types(store).count("job.paused") == 1
    assert len(errors) == 2 and all("already paused" in e for e in errors)


def test_a_pause_and_resume_cycle_can_repeat(running: tuple[Home, JobStore, int]) -> None:
    h, store, _ = running
    for _ in range(3):
        pause(h, JOB)
        resume(h, JOB)
    t = types(store)
    assert t.count("job.paused") == 3 and t.count("job.resumed") == 3
    assert store.snapshot(JOB).state.value != "paused"


def test_resume_of_a_job_that_is_not_paused_is_refused(running: tuple[Home, JobStore, int]) -> None:
    h, store, _ = running
    state = store.snapshot(JOB).state.value
    assert refused(resume, h, JOB) == f"job {JOB} is {state}, not paused"
    assert "job.resumed" not in types(store)


def test_a_queued_job_has_nothing_to_pause(home: Path) -> None:
    h = Home(home)
    make_job(h)
    assert refused(pause, h, JOB) == f"job {JOB} is queued, so there is no running agent to pause"


def test_a_live_job_without_a_pane_is_refused_and_records_nothing(home: Path) -> None:
    h = Home(home)
    store = make_job(h)
    store.append(JOB, "worktree.created", path="/w", branch=f"zen/{JOB}", base_commit="0" * 40)
    store.append(JOB, "agent.spawned", session="zen-gone", pid=1)
    msg = refused(pause, h, JOB)
    assert "has no running agent in tmux" in msg
    assert "job.paused" not in types(store)


def test_an_unknown_job_is_refused_naming_what_was_asked(home: Path) -> None:
    with pytest.raises(NotFound) as exc:
        pause(Home(home), "no-such-job")
    assert one_line(str(exc.value)) and "no-such-job" in str(exc.value)


# -- cancel and finish --------------------------------------------------------------------------

def test_cancelling_a_queued_job_records_it_and_starts_nothing(home: Path) -> None:
    h = Home(home)
    store = make_job(h)
    out = control.cancel(h, "fix-login", "not needed")
    assert (out.job, out.state, out.started) == (JOB, "cancelled", False)
    ev = next(e for e in store.events(JOB) if e["type"] == "job.cancelled")
    assert ev["actor"] == "human" and ev["reason"] == "not needed"
    assert store.snapshot(JOB).state.value == "cancelled"


def test_a_cancel_without_a_reason_says_a_human_did_it(home: Path) -> None:
    h = Home(home)
    store = make_job(h)
    control.cancel(h, JOB)
    assert next(e for e in store.events(JOB) if e["type"] == "job.cancelled")["reason"] == "cancelled by a human"


def test_cancelling_twice_is_refused_and_records_one_cancel(home: Path) -> None:
    h = Home(home)
    store = make_job(h)
    control.cancel(h, JOB)
    assert refused(control.cancel, h, JOB) == f"job {JOB} is already cancelled"
    assert types(store).count("job.cancelled") == 1


def test_a_task_still_in_the_spool_is_taken_in_and_cancelled(lane: Path, home: Path) -> None:
    h = Home(home)
    task = dispatch(h, {"prompt": "Never mind this", "name": "never-mind"})
    out = control.cancel(h, "never-mind")
    assert out.job == task.id and out.state == "cancelled"
    assert not (home / "spool" / "new" / f"{task.id}.yaml").exists()
    store = JobStore(h)
    assert types(store, task.id)[:2] == ["task.received", "job.queued"]
    assert store.snapshot(task.id).state.value == "cancelled"


def test_cancelling_a_name_nothing_has_is_refused(home: Path) -> None:
    with pytest.raises(NotFound) as exc:
        control.cancel(Home(home), "ghost")
    assert one_line(str(exc.value)) and "ghost" in str(exc.value)


def test_finish_of_a_queued_job_says_to_cancel_it_instead(home: Path) -> None:
    h = Home(home)
    store = make_job(h)
    assert refused(control.finish, h, JOB) == f"job {JOB} has not started yet (zen cancel {JOB} drops it)"
    assert "finish.requested" not in types(store)


def test_finish_of_an_ended_job_is_refused(home: Path) -> None:
    h = Home(home)
    make_job(h)
    control.cancel(h, JOB)
    assert refused(control.finish, h, JOB) == f"job {JOB} is already cancelled"


def test_harvest_before_any_worktree_says_there_is_nothing_to_harvest(home: Path) -> None:
    h = Home(home)
    make_job(h)
    msg = refused(control.harvest_now, h, JOB)
    assert "has no worktree yet (it is queued)" in msg


def test_clean_of_a_job_without_a_worktree_says_so(home: Path) -> None:
    h = Home(home)
    make_job(h)
    assert refused(control.clean, h, JOB) == f"job {JOB} has no worktree to remove"


def test_clean_keeps_a_live_jobs_worktree_and_says_why(running: tuple[Home, JobStore, int], tmp_path: Path) -> None:
    h, store, _ = running
    state = store.snapshot(JOB).state.value
    assert refused(control.clean, h, JOB) == f"job {JOB} is {state}; finish or cancel it first"
    assert tmp_path.is_dir()


def test_cancel_of_a_running_agent_stops_it_and_records_the_exit_once(running: tuple[Home, JobStore, int]) -> None:
    h, store, pid = running
    out = control.cancel(h, JOB, "stop now")
    assert out.state == "cancelled" and out.started
    t = types(store)
    assert t.count("job.cancelled") == 1 and t.count("agent.exited") == 1
    assert t.index("job.cancelled") < t.index("agent.exited")
    assert procs.state(pid) is None or not procs.descendants(pid)
    assert store.snapshot(JOB).state.value == "cancelled"


def test_a_paused_agent_can_be_cancelled(running: tuple[Home, JobStore, int]) -> None:
    h, store, _ = running
    pause(h, JOB)
    out = control.cancel(h, JOB)
    assert out.state == "cancelled"
    assert types(store).count("agent.exited") == 1

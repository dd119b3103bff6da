"""An agent's end, recorded once (zen.orchestration.job.control): which timelines still owe an exit,
the exit status tmux, the pane's wrapper or the kernel gives, `append_exit_once` across retries and racing
recorders, and `settle_exit` on a real agent in tmux whose work is harvested once."""

from __future__ import annotations

import os
import signal
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import git, wait_until
from zen.adapters import procs
from zen.adapters.tmux import PaneInfo, Tmux
from zen.core.ids import iso, utcnow
from zen.core.model import Task
from zen.orchestration.context import JobContext
from zen.orchestration.job import panes, settle
from zen.store.home import Home
from zen.store.jobs import JobStore

JOB = "20270101T000000Z-fix-login-3fa9"


def ev(etype: str, **kw: Any) -> dict[str, Any]:
    return {"type": etype, **kw}


def info(dead: bool = True, code: int | None = None, sig: int | None = None) -> PaneInfo:
    return PaneInfo("%1", "s", dead, code, sig, 42, "0,0")


def make_job(h: Home) -> JobStore:
    store = JobStore(h)
    store.create(Task.model_validate({"id": JOB, "name": "fix-login", "prompt": "Fix it", "lane": "app",
                                      "created_at": iso(utcnow())}))
    return store


def exits(store: JobStore) -> list[dict[str, Any]]:
    return [e for e in store.events(JOB) if e["type"] == "agent.exited"]


# -- what the timeline owes ---------------------------------------------------------------------

@pytest.mark.parametrize(("events", "recorded"), [
    ([], True),                                                              # nothing spawned
    ([ev("task.received"), ev("job.queued")], True),
    ([ev("agent.spawned")], False),
    ([ev("agent.spawned"), ev("agent.exited")], True),
    ([ev("agent.spawned"), ev("agent.exited"), ev("retry.scheduled"), ev("agent.spawned")], False),
    ([ev("agent.spawned"), ev("agent.exited"), ev("agent.spawned"), ev("turn.waiting"), ev("agent.exited")], True),
])
def test_an_exit_is_owed_for_the_current_spawn_only(events: list[dict[str, Any]], recorded: bool) -> None:
    assert settle.exit_recorded(events) is recorded


# -- the exit status ----------------------------------------------------------------------------

@pytest.mark.parametrize(("text", "code", "sig"), [("0\n", 0, None), ("3", 3, None), ("137\n", None, 9),
                                                   ("143", None, 15), ("128", 128, None), ("200", 200, None)])
def test_the_wrappers_exit_file_fills_a_blank_tmux_status(home: Path, text: str, code: int | None,
                                                          sig: int | None) -> None:
    h = Home(home)
    make_job(h)
    panes.exit_file(h, JOB).write_text(text)
    got = panes.with_exit_status(h, JOB, info(dead=True))
    assert got is not None and (got.exit_code, got.signal) == (code, sig)


def test_tmuxs_own_status_wins_over_the_exit_file(home: Path) -> None:
    h = Home(home)
    make_job(h)
    panes.exit_file(h, JOB).write_text("3\n")
    known = info(dead=True, code=0)
    assert panes.with_exit_status(h, JOB, known) is known


@pytest.mark.parametrize("content", [None, "", "not a number\n"])
def test_no_readable_exit_file_leaves_the_status_unknown(home: Path, content: str | None) -> None:
    h = Home(home)
    make_job(h)
    if content is not None:
        panes.exit_file(h, JOB).write_text(content)
    blank = info(dead=True)
    assert panes.with_exit_status(h, JOB, blank) is blank
    assert panes.with_exit_status(h, JOB, None) is None


@pytest.fixture
def zombie() -> Iterator[Callable[[int | None], int]]:
    """A child process that ended (by a signal, or with a code) and is not reaped yet: what tmux
    3.3a can leave a dead pane's process as."""
    made: list[int] = []

    def make(code: int | None) -> int:
        pid = os.fork()
        if pid == 0:  # the child: wait to be killed, or end with `code`
            if code is None:
                time.sleep(60)
            os._exit(code or 0)
        made.append(pid)
        if code is None:
            os.kill(pid, signal.SIGKILL)
        wait_until(lambda: procs.state(pid) == "Z", timeout=10, message="the child to end")
        return pid

    yield make
    for pid in made:
        os.waitpid(pid, 0)


@pytest.mark.parametrize(("code", "want"), [(None, (None, 9)), (3, (3, None)), (0, (0, None))])
def test_the_kernel_tells_an_unreaped_agents_status_when_nothing_else_does(
        home: Path, zombie: Callable[[int | None], int], code: int | None, want: tuple[Any, ...]) -> None:
    """An agent killed by a signal writes no exit file; unreaped by tmux, its pane's status is
    blank: the wait status in /proc still says how it ended (it said nothing before)."""
    h = Home(home)
    make_job(h)
    pid = zombie(code)
    assert procs.exit_status(pid) == want
    blank = PaneInfo("%1", "s", True, None, None, pid, "0,0")
    got = panes.with_exit_status(h, JOB, blank)
    assert got is not None and (got.exit_code, got.signal) == want and got.settled
    alive = PaneInfo("%1", "s", False, None, None, pid, "0,0")
    assert panes.with_exit_status(h, JOB, alive) is alive      # a live pane has no status yet
    assert procs.exit_status(os.getpid()) is None                # a running process tells nothing


@pytest.mark.parametrize(("line", "want"), [
    ("s\t%3\t1\t2\t\t99\t4,5\t", ("%3", True, 2, None, 99)),
    ("s\t%3\t1\t\t9\t99\t4,5\t", ("%3", True, None, 9, 99)),
    ("s\t%3\t1\t\t\t99\t4,5\t137", ("%3", True, None, 9, 99)),     # unreaped: the wrapper's word
    ("s\t%3\t1\t\t\t99\t4,5\t5", ("%3", True, 5, None, 99)),
    ("s\t%3\t0\t2\t9\t99\t4,5\t137", ("%3", False, None, None, 99)),  # alive: no status at all
])
def test_a_pane_line_parses_to_its_status(line: str, want: tuple[Any, ...]) -> None:
    p = PaneInfo.parse(line)
    assert p is not None and (p.pane_id, p.dead, p.exit_code, p.signal, p.pid) == want
    assert p.settled is (p.dead and (p.exit_code is not None or p.signal is not None))


def test_a_line_that_is_not_a_pane_is_none() -> None:
    assert PaneInfo.parse("") is None and PaneInfo.parse("a\tb\tc") is None


# -- recording it once --------------------------------------------------------------------------

def test_the_exit_is_recorded_once_per_spawn_and_again_after_a_respawn(home: Path) -> None:
    h = Home(home)
    store = make_job(h)
    store.append(JOB, "agent.spawned", session="s", pid=1)
    first = settle.append_exit_once(store, JOB, info(code=1))
    assert first is not None and (first["exit_code"], first["signal"]) == (1, None)
    assert settle.append_exit_once(store, JOB, info(code=0)) is None
    store.append(JOB, "agent.spawned", session="s", pid=2)
    again = settle.append_exit_once(store, JOB, None, actor="human", why="cancel")
    assert again is not None and again["exit_code"] is None and again["actor"] == "human" and again["why"] == "cancel"
    assert len(exits(store)) == 2


def test_racing_recorders_write_one_exit(home: Path) -> None:
    h = Home(home)
    store = make_job(h)
    store.append(JOB, "agent.spawned", session="s", pid=1)
    barrier = threading.Barrier(5)

    def go(i: int) -> None:
        barrier.wait()
        settle.append_exit_once(store, JOB, info(code=i))

    threads = [threading.Thread(target=go, args=(i,)) for i in range(5)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(exits(store)) == 1


def test_an_end_is_pending_until_the_exit_and_the_harvest_are_on_record(home: Path, tmp_path: Path) -> None:
    h = Home(home)
    store = make_job(h)
    wt = tmp_path / "wt"
    wt.mkdir()
    store.append(JOB, "worktree.created", path=str(wt), branch=f"zen/{JOB}", base_commit="0" * 40)
    store.append(JOB, "agent.spawned", session="s", pid=1)
    assert settle.end_pending(store.events(JOB), store.snapshot(JOB)) is True
    settle.append_exit_once(store, JOB, info(code=0))
    assert settle.end_pending(store.events(JOB), store.snapshot(JOB)) is True     # harvest still due
    wt.rmdir()
    assert settle.end_pending(store.events(JOB), store.snapshot(JOB)) is False    # nothing left to harvest


# -- settle_exit on a real agent ----------------------------------------------------------------

def test_settle_exit_records_the_agents_status_harvests_its_work_and_closes_the_session(lane: Path, home: Path,
                                                                                      tmp_path: Path) -> None:
    h = Home(home)
    store = make_job(h)
    base = git(lane, "rev-parse", "HEAD")
    wt = tmp_path / "wt"
    git(lane, "worktree", "add", "-q", "-b", f"zen/{JOB}", str(wt), base)
    store.append(JOB, "worktree.created", path=str(wt), branch=f"zen/{JOB}", base_commit=base)
    tmux = Tmux.for_home(h)
    session = f"zen-{JOB}"
    started = tmux.start_pane(session, wt, ["sh", "-c", "echo done > result.txt; exit 3"],
                              {"PATH": "/usr/bin:/bin"}, store.paths(JOB).pane_log,
                              exit_path=panes.exit_file(h, JOB))
    store.append(JOB, "agent.spawned", session=session, pid=started.pid)
    dead = wait_until(lambda: (p := tmux.pane(session)) is not None and p.dead and p, timeout=10,
                      message="the agent to exit")
    ctx = JobContext.load(h, JOB)
    rec = settle.settle_exit(ctx, tmux, dead, "supervisor")
    assert rec is not None and rec["exit_code"] == 3
    assert settle.settle_exit(ctx, tmux, dead, "supervisor") is None             # once
    types = [e["type"] for e in store.events(JOB)]
    assert types.count("agent.exited") == 1 and types.count("harvest.done") == 1
    snap = store.snapshot(JOB)
    assert snap.state.value == "harvested" and snap.exit_code == 3
    assert git(lane, "show", f"{snap.review_branch}:result.txt") == "done"
    assert not tmux.has_session(session)

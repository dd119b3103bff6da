"""The flocks of a home are taken in the order zen/store/layout.py writes down (LOCK_ORDER).

A real dispatch → intake → spawn → end → harvest of a job whose agent committed work, driven
through the supervisor loop in-process (test_settle_reads' real worktree, test_replay's scripted
tmux): every flock taken is recorded with the locks the same thread already held, and each lock
taken while another is held must come after it in LOCK_ORDER. Two processes that both follow
one order can never deadlock on each other.
"""

from __future__ import annotations

import fcntl
import os
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.supervisor.test_settle_reads import WorktreeReplay
from zen.orchestration.job.spawn import session_name
from zen.store import layout


class LockLog:
    """Every flock taken (by its file name, the home's own names), with what the thread held."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, root: Path) -> None:
        self.root = str(root)
        self.held: dict[int, list[tuple[int, str]]] = {}
        self.nested: set[tuple[str, str]] = set()
        self.taken: set[str] = set()
        real_flock, real_close = fcntl.flock, os.close

        def flock(fd: Any, op: int) -> None:
            real_flock(fd, op)
            name = self._name(fd)
            if name is None:
                return
            mine = self.held.setdefault(threading.get_ident(), [])
            if op & fcntl.LOCK_UN:
                mine[:] = [h for h in mine if h[0] != fd]
                return
            self.taken.add(name)
            self.nested.update((outer, name) for _, outer in mine if outer != name)
            mine.append((fd, name))

        def close(fd: int) -> None:
            for mine in self.held.values():
                mine[:] = [h for h in mine if h[0] != fd]
            real_close(fd)

        monkeypatch.setattr(fcntl, "flock", flock)
        monkeypatch.setattr(os, "close", close)

    def _name(self, fd: Any) -> str | None:
        try:
            path = os.readlink(f"/proc/self/fd/{fd if isinstance(fd, int) else fd.fileno()}")
        except (OSError, ValueError):
            return None
        if not path.startswith(self.root + "/"):
            return None
        return layout.lock_name(path[len(self.root) + 1:])


@pytest.fixture
def wr(lane: Path, home: Path) -> Iterator[WorktreeReplay]:
    yield WorktreeReplay(home, lane)


def test_every_lock_of_a_dispatch_to_harvest_is_taken_in_the_written_order(
        wr: WorktreeReplay, monkeypatch: pytest.MonkeyPatch) -> None:
    locks = LockLog(monkeypatch, wr.root)
    job = wr.dispatch("ordered")
    wr.tick()
    wr.commit_in(job)
    wr.tmux.die(session_name(job), exit_code=0)
    wr.tick()
    assert wr.state(job) == "harvested"
    order = list(layout.LOCK_ORDER)
    assert locks.taken <= set(order), f"locks with no place in layout.LOCK_ORDER: {sorted(locks.taken - set(order))}"
    # the path took the per-job locks of its end, nested
    assert {"job/.control.lock", "job/.autoharvest.lock", "job/.harvest.lock", "job/.lock"} <= locks.taken
    wrong = sorted((outer, inner) for outer, inner in locks.nested if order.index(outer) > order.index(inner))
    assert not wrong, f"locks taken against layout.LOCK_ORDER (held, then taken): {wrong}"
    assert ("job/.control.lock", "job/.lock") in locks.nested      # the check sees real nesting


def test_the_order_names_each_lock_of_the_layout_once() -> None:
    assert len(set(layout.LOCK_ORDER)) == len(layout.LOCK_ORDER)
    assert layout.LOCK_ORDER[0] == f"{layout.CONTROL}/{layout.SUPERVISOR_LOCK}"
    assert layout.lock_name(f"{layout.JOBS}/20260101-000000-abcd-x/{layout.CONTROL_LOCK}") == \
        f"job/{layout.CONTROL_LOCK}"

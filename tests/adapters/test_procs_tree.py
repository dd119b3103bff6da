"""procs: the process tree below a pane's process, and stopping / continuing it, on real
processes of this machine (/proc), each test killing what it started."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
from collections.abc import Callable, Iterator

import pytest

from tests.helpers import wait_until
from zen.adapters import procs

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads Linux's /proc")


@pytest.fixture
def spawn() -> Iterator[Callable[[str], subprocess.Popen[bytes]]]:
    started: list[subprocess.Popen[bytes]] = []

    def start(script: str) -> subprocess.Popen[bytes]:
        p = subprocess.Popen(["sh", "-c", script], stdin=subprocess.DEVNULL, start_new_session=True)
        started.append(p)
        return p

    yield start
    for p in started:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(p.pid, signal.SIGCONT)
            os.killpg(p.pid, signal.SIGKILL)
        p.wait(timeout=10)


def below(pid: int, n: int) -> list[int]:
    return wait_until(lambda: d if len(d := procs.descendants(pid)) >= n else None, timeout=10,
                      message=f"{n} processes below {pid}")


def test_ppid_is_read_past_a_command_name_with_spaces_and_parentheses() -> None:
    assert procs._ppid_of("123 (my (odd) name) S 45 123 123 0") == 45
    assert procs._ppid_of("garbage") is None and procs._ppid_of("1 (x) S notanumber") is None


def test_ancestors_of_this_process_reach_the_first_one() -> None:
    up = procs.ancestors(os.getpid())
    assert up and up[0] == os.getppid()
    assert len(up) == len(set(up))                        # no loops
    assert procs.ancestors(2**22 + 12345) == []            # no such process


def test_descendants_list_parents_before_their_children(spawn: Callable[[str], subprocess.Popen[bytes]]) -> None:
    p = spawn('sh -c "sleep 30; true" & sleep 30 & wait')
    pids = below(p.pid, 3)
    kids = procs.children_map()
    direct = set(kids.get(p.pid, []))
    assert len(direct) == 2
    for pid in pids:
        if pid not in direct:                              # a grandchild comes after its parent
            parent = next(d for d in direct if pid in kids.get(d, []))
            assert pids.index(parent) < pids.index(pid)
    assert p.pid not in pids


def test_descendants_in_a_given_map() -> None:
    kids = {1: [2, 3], 2: [4], 3: [5], 4: [6]}
    assert procs.descendants_in(kids, 1) == [2, 3, 4, 5, 6]
    assert procs.descendants_in(kids, 4) == [6] and procs.descendants_in(kids, 99) == []


def test_stop_below_stops_every_process_below_but_not_the_top(spawn: Callable[[str], subprocess.Popen[bytes]]) -> None:
    p = spawn('sh -c "sleep 30; true" & sleep 30 & wait')
    pids = below(p.pid, 3)
    stopped = procs.stop_below(p.pid)
    assert set(pids) <= set(stopped)

    def all_stopped() -> bool:  # or say how each one is, and what is below the top now
        states = {x: procs.state(x) for x in stopped}
        assert all(v == "T" for v in states.values()), f"{states}; below now: {procs.descendants(p.pid)}"
        return True

    wait_until(all_stopped, timeout=10, message="all stopped")
    assert procs.state(p.pid) != "T"
    resumed = procs.continue_below(p.pid)
    assert set(resumed) == set(stopped)
    wait_until(lambda: all(procs.state(x) in ("S", "R") for x in stopped), timeout=10, message="all running again")


def test_stop_below_a_process_with_nothing_below_it_stops_nothing(spawn: Callable[[str], subprocess.Popen[bytes]]) -> None:
    p = spawn("exec sleep 30")
    wait_until(lambda: procs.state(p.pid) == "S", timeout=10, message="asleep")
    assert procs.stop_below(p.pid) == [] and procs.state(p.pid) == "S"
    assert procs.continue_below(p.pid) == []


def test_state_of_a_process_that_is_gone_is_none(spawn: Callable[[str], subprocess.Popen[bytes]]) -> None:
    p = spawn("exit 0")
    p.wait(timeout=10)
    assert procs.state(p.pid) is None and procs._ticks(p.pid) == 0 and procs.descendants(p.pid) == []


def test_busy_below_counts_what_the_agent_started_not_the_agent_itself(
        spawn: Callable[[str], subprocess.Popen[bytes]]) -> None:
    # the pane's wrapper (p) runs the agent (its child), which runs a busy tool (a grandchild)
    p = spawn('sh -c "yes > /dev/null; true" & wait')
    [agent] = wait_until(lambda: procs.children_map().get(p.pid), timeout=10, message="the agent")
    spin = wait_until(lambda: procs.children_map().get(agent) or None, timeout=10, message="the tool")
    procs._recent = None
    got = wait_until(lambda: b if (b := procs.busy_below(p.pid)) and max(b.values()) > 0 else None,
                     timeout=10, message="the tool's CPU ticks")
    assert agent not in got and set(spin) <= set(got)
    first = got[spin[0]]
    procs._recent = None
    wait_until(lambda: procs.busy_below(p.pid).get(spin[0], 0) > first, timeout=10, message="more ticks")

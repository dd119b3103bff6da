"""A silent `cmd` agent is `waiting` only when it really waits for input (issue 15).

An agent with no hook of its own is judged by its output; silence alone used to call it waiting,
though a long silent step (a sleep, a child it waits for) is work. Now the supervisor asks /proc
what the pane's processes are blocked on once the silence has lasted idle_after: reading the
terminal is waiting, sleeping on anything else is working. Real tmux, the real CLI, idle_after
0.5 s.
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

import pytest

from tests.helpers import wait_until, zen
from tests.supervisor.util import dispatch_cmd, events, review_show, snap, wait_event, wait_state
from zen.orchestration.loop.supervisor import SWEEP_S
from zen.orchestration.loop.watcher import BUSY_SAMPLE_S

SLEEP_S = 4
# from the end of the sleep to `waiting`: the next sweep (an asleep agent has no timer of its own),
# a CPU sample, and room for a loaded machine
LATE_S = SWEEP_S + BUSY_SAMPLE_S + 1.5


def _ts(ev: dict[str, object]) -> float:
    return datetime.fromisoformat(str(ev["ts"]).replace("Z", "+00:00")).timestamp()


@pytest.mark.parametrize("step", [
    f"sleep {SLEEP_S}",                                            # a child the agent waits for
    f"python3 -c 'import time; time.sleep({SLEEP_S})'",            # a silent step of its own
    f"sleep {SLEEP_S} | cat",                                      # a pipe that stays empty
])
def test_a_silent_sleeping_cmd_agent_works_until_it_reads_its_terminal(zh: Path, lane: Path, sup, step: str) -> None:
    job = dispatch_cmd(f"echo started; {step}; date +%s.%N > .zen-tmp/slept; read answer; "
                       "echo \"$answer\" > answer.txt", "asleep")
    log = zh / "jobs" / job / "pane.log"
    wait_until(lambda: log.exists() and "started" in log.read_text(), timeout=20)
    started = datetime.now().timestamp()
    slept = Path(str(snap(zh, job).worktree)) / ".zen-tmp" / "slept"
    # well past idle_after (0.5 s) and the CPU sample, still inside the silent step: working
    wait_until(lambda: datetime.now().timestamp() - started >= 2.0, timeout=5)
    assert not slept.exists(), "the silent step ended before the test could look (a loaded machine?)"
    assert snap(zh, job).state.value == "working"
    r = zen("send", job, "too early")
    assert r.returncode == 1 and "not waiting" in r.stderr       # it is not waiting for input

    # the step ends, the agent reads its terminal: waiting (idle), soon after, and not before
    ended = float(wait_until(lambda: slept.exists() and slept.read_text().strip(), timeout=20))
    s = wait_state(zh, job, "waiting", timeout=LATE_S + 5)
    assert s.reason == "idle"
    waits = [e for e in events(zh, job) if e["type"] == "turn.waiting"]
    assert len(waits) == 1 and ended <= _ts(waits[0]) <= ended + LATE_S, (ended, waits)

    r = zen("send", job, "forty-two")
    assert r.returncode == 0, r.stderr
    wait_state(zh, job, "harvested", timeout=20)
    assert review_show(lane, job, "answer.txt") == "forty-two"


def test_a_cmd_agent_reading_its_terminal_waits_at_idle_after(zh: Path, sup) -> None:
    """The other side: nothing but a read of the terminal after the output, so waiting at
    idle_after as before (the asleep look costs it no time)."""
    job = dispatch_cmd("echo ready; date +%s.%N > .zen-tmp/ready; read x", "reads")
    ready = Path(str(wait_state(zh, job, "working", "waiting").worktree)) / ".zen-tmp" / "ready"
    at = float(wait_until(lambda: ready.exists() and ready.read_text().strip(), timeout=20))
    ev = wait_event(zh, job, "turn.waiting", timeout=10)
    assert ev["reason"] == "idle" and _ts(ev) - at <= 0.5 + BUSY_SAMPLE_S + 1.0, _ts(ev) - at

"""Control actions on one job are serialised (issue 15): sends, finishes and cancels racing each
other and the supervisor's settling of the ended agent act one at a time, under the job's control
lock, so the timeline reads as one valid story and state.json is never left behind it."""

from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path

import pytest

from tests.helpers import ZEN, one_line, wait_until, zen
from tests.supervisor.util import dispatch_cmd, events, gap_free, wait_state
from zen.core import states
from zen.orchestration.job import control
from zen.store.home import Home

STOPS = ("finish.requested", "job.cancelled")


def _race(argvs: list[list[str]]) -> list[subprocess.CompletedProcess[str]]:
    """Start every command at once (each a real `zen` process) and wait for all."""
    procs = [subprocess.Popen([*ZEN, *a], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                              env=os.environ.copy()) for a in argvs]
    out = []
    for a, p in zip(argvs, procs, strict=True):
        stdout, stderr = p.communicate(timeout=60)
        out.append(subprocess.CompletedProcess(a, p.returncode, stdout, stderr))
    return out


def test_sends_finishes_and_cancels_racing_on_one_job_act_one_at_a_time(zh: Path, sup) -> None:
    for round_ in range(3):
        job = dispatch_cmd('while read x; do echo "got $x"; done; exit 0', f"raced-{round_}")
        wait_state(zh, job, "waiting")
        argvs = [["send", "--force", job, f"hello {i}"] for i in range(5)]
        argvs += [["cancel", job], ["finish", job], ["cancel", job]]
        results = _race(argvs[round_:] + argvs[:round_])  # a different command first each round
        for r in results:
            assert r.returncode in (0, 1), r.stderr
            assert "Traceback" not in r.stderr and (r.returncode == 0 or one_line(r.stderr)), r.stderr
        s = wait_state(zh, job, "cancelled", "harvested")
        evs = events(zh, job)
        kinds = [e["type"] for e in evs]
        # one stop won; the others found the job over and said so
        assert sum(kinds.count(k) for k in STOPS) == 1, kinds
        stopped = sum(1 for r in results if r.args[0] in ("cancel", "finish") and r.returncode == 0)
        assert stopped == 1, [(r.args, r.stderr) for r in results]
        assert all("already" in r.stderr for r in results if r.args[0] in ("cancel", "finish") and r.returncode)
        stop_at = next(i for i, k in enumerate(kinds) if k in STOPS)
        # nothing typed into an agent being stopped, or stopped already
        assert "input.sent" not in kinds[stop_at:], kinds
        sent = sum(1 for r in results if r.args[0] == "send" and r.returncode == 0)
        assert kinds.count("input.sent") == sent
        assert kinds.count("agent.exited") == 1 and kinds.count("harvest.done") == 1, kinds
        assert gap_free(zh, job)
        # state.json caught up with the timeline, and says what replaying it says
        state = json.loads((zh / "jobs" / job / "state.json").read_text())
        assert state["seq"] == evs[-1]["seq"] and state["state"] == s.state.value
        assert states.replay(job, evs).state is s.state


def test_a_command_waits_for_the_action_in_progress_and_says_when_it_waited_too_long(zh: Path, sup) -> None:
    job = dispatch_cmd("while read x; do echo \"got $x\"; done", "held")
    wait_state(zh, job, "waiting")
    home = Home(zh)
    with control.serialised(home, job):
        # another process's send waits for the action in progress...
        pending = subprocess.Popen([*ZEN, "send", "--force", job, "after"], stdout=subprocess.PIPE,
                                   stderr=subprocess.PIPE, text=True)
        time.sleep(0.5)
        assert pending.poll() is None and "input.sent" not in [e["type"] for e in events(zh, job)]
        # ...and one that cannot wait that long says so in one sentence
        with pytest.raises(control.JobBusy, match=f"job {job} is busy"), control.serialised(home, job, wait_s=0.2):
            pass
    _, err = pending.communicate(timeout=30)
    assert pending.returncode == 0, err
    wait_until(lambda: "input.sent" in [e["type"] for e in events(zh, job)], timeout=10)
    assert zen("cancel", job).returncode == 0

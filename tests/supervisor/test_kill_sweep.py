"""`zen kill-switch --stop-agents` ends every process a job started, those that detached from its
pane too (issue 32 item 3, finding C3: a `setsid -f sleep` started by a job outlived it, and a helper
watching control/KILL could have released it)."""

from __future__ import annotations

import os
from pathlib import Path

from tests.helpers import wait_until, zen
from tests.supervisor.util import dispatch_cmd, wait_event
from zen.adapters import procs


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(") ")[1][0] != "Z"
    except OSError:
        return False


def test_the_kill_switch_stops_what_a_job_detached_from_its_pane(zh: Path, sup) -> None:
    job = dispatch_cmd("setsid -f sleep 300; nohup sleep 301 >/dev/null 2>&1 & read x", "detacher")
    wait_event(zh, job, "agent.spawned", timeout=30)

    def detached() -> list[int] | None:
        found = [p for p in procs.with_env("ZEN_JOB_ID", {job})
                 if Path(f"/proc/{p}/cmdline").read_bytes().startswith(b"sleep\0")]
        return found if len(found) == 2 else None

    sleepers = wait_until(detached, timeout=20, message="the job's two detached sleeps")
    r = zen("kill-switch", "--reason", "test", "--stop-agents")
    assert r.returncode == 0, r.stderr
    wait_until(lambda: not any(_alive(p) for p in sleepers), timeout=10, message="the detached sleeps ended")
    assert os.getpid() not in procs.with_env("ZEN_JOB_ID", {job})
    zen("kill-switch", "--release")

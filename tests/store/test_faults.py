"""zen.store.faults: ZEN_CRASH_AT kills the process at exactly the named step, as kill -9 would
(no cleanup, no exit code of its own), and does nothing anywhere else. The crash tests of issue
15 rely on both halves, so each is checked in a real child process."""

from __future__ import annotations

import os
import signal
import subprocess
import sys

import pytest

from zen.store import faults

CHILD = """
import sys
from zen.store.faults import crash_point
print("before", flush=True)
crash_point(sys.argv[1])
print("after", flush=True)
"""


def _run(step: str, crash_at: str | None) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != faults.ENV}
    if crash_at is not None:
        env[faults.ENV] = crash_at
    return subprocess.run([sys.executable, "-c", CHILD, step], env=env, capture_output=True, text=True,
                          timeout=30)


def test_the_named_step_kills_the_process_at_once() -> None:
    r = _run("spawn.intended", "spawn.intended")
    assert r.returncode == -signal.SIGKILL
    assert r.stdout == "before\n"                  # nothing after the step ran


@pytest.mark.parametrize("crash_at", [None, "", "spawn.spawned", "SPAWN.INTENDED"])
def test_any_other_setting_leaves_the_step_alone(crash_at: str | None) -> None:
    r = _run("spawn.intended", crash_at)
    assert r.returncode == 0 and r.stdout == "before\nafter\n"


def test_the_steps_are_distinct_and_in_the_order_a_task_meets_them() -> None:
    assert len(set(faults.STEPS)) == len(faults.STEPS)
    assert faults.STEPS[0] == "intake.linked" and faults.STEPS[-1] == "spawn.spawned"
    intake = [s for s in faults.STEPS if s.startswith("intake.")]
    assert faults.STEPS[: len(intake)] == tuple(intake)   # every intake step before any spawn step


def test_in_this_process_an_unset_variable_is_a_no_op(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(faults.ENV, raising=False)
    for step in faults.STEPS:
        faults.crash_point(step)                  # still alive

"""Spawn exactly once (issue 15): a supervisor killed at any instant of intake and spawn, then
restarted, runs every task's agent once per attempt, records one `agent.spawned`, and leaves a
gap-free timeline.

Each agent appends its job id to a file outside its worktree when it starts, so a second agent for
one attempt (the old bug: the restart killed the first and started it again) shows as a second
line however the timeline reads. The crash points are zen.store.faults' (ZEN_CRASH_AT=<step>, a
SIGKILL of the supervisor exactly there); the random loop kills the real process with SIGKILL at
random moments while tasks flow.
"""

from __future__ import annotations

import os
import random
import shlex
import signal
import time
from pathlib import Path

import pytest

from tests.helpers import wait_until, zen
from tests.supervisor.util import (
    dispatch_cmd,
    events,
    gap_free,
    review_show,
    snap,
    types,
    wait_state,
)
from zen.orchestration.intake.enqueue import enqueue
from zen.store import faults
from zen.store.home import Home


def _agent(runs: Path, gate: Path | None = None) -> str:
    """An agent that says it ran (its job id into `runs`), waits for `gate` if given, leaves a file."""
    wait = f"while [ ! -e {shlex.quote(str(gate))} ]; do sleep 0.05; done; " if gate else ""
    return f'echo "$ZEN_JOB_ID" >> {shlex.quote(str(runs))}; {wait}echo made > made.txt; exit 0'


def _runs(runs: Path) -> list[str]:
    return runs.read_text().split() if runs.exists() else []


@pytest.mark.parametrize("step", faults.STEPS)
def test_a_crash_at_each_step_of_intake_and_spawn_runs_the_agent_once(step: str, zh: Path, lane: Path, sups,
                                                                      tmp_path: Path) -> None:
    runs, gate = tmp_path / "runs.log", tmp_path / "go"
    job = dispatch_cmd(_agent(runs, gate), "crash-" + step.replace(".", "-").replace("_", "-"))
    crashed = sups.start(env={faults.ENV: step}, wait=False)
    assert crashed.wait(timeout=30) == -signal.SIGKILL, f"the supervisor never reached {step}"
    sups.start()
    # the agent runs (started now, or adopted: it ran through the crash) and is watched
    wait_until(lambda: snap(zh, job).state.value in ("working", "waiting") and _runs(runs), timeout=20,
               message=f"job {job} to run after a crash at {step}")
    assert _runs(runs) == [job]
    gate.touch()
    s = wait_state(zh, job, "harvested")
    assert s.exit_code == 0 and review_show(lane, job, "made.txt") == "made"
    kinds = types(zh, job)
    assert _runs(runs) == [job], "a second agent ran for one attempt"
    assert kinds.count("task.received") == 1 and kinds.count("worktree.created") == 1, kinds
    assert kinds.count("agent.spawned") == 1 and kinds.count("agent.exited") == 1, kinds
    assert kinds.count("harvest.done") == 1 and gap_free(zh, job)
    spawned = next(e for e in events(zh, job) if e["type"] == "agent.spawned")
    # the agent tmux started before the crash was adopted, not replaced
    assert spawned.get("adopted", False) is (step == "tmux.agent")
    assert kinds.index("spawn.intent") < kinds.index("agent.spawned")
    assert not list((zh / "spool" / "new").iterdir()) and [p.stem for p in (zh / "spool" / "cur").iterdir()] == [job]


def test_a_handoff_a_machine_crash_emptied_is_written_again_before_the_agent_starts(zh: Path, sups,
                                                                                   tmp_path: Path) -> None:
    """handoff.md and prompt.txt are written without fsync (made again from the task by any
    later start): a crash of the machine right after them leaves them empty, and the resumed
    start writes them again before its agent reads them."""
    runs = tmp_path / "runs.log"
    job = dispatch_cmd('grep -q "Handoff:" "$ZEN_HANDOFF" && test -s "$ZEN_PROMPT_FILE" && '
                       + _agent(runs), "emptied-handoff")
    crashed = sups.start(env={faults.ENV: "spawn.prepared"}, wait=False)
    assert crashed.wait(timeout=30) == -signal.SIGKILL
    paths = Home(zh).job(job)
    for path in (paths.handoff, paths.prompt):
        assert path.stat().st_size > 0
        path.write_bytes(b"")                      # what a power loss can leave of an unsynced file
    sups.start()
    s = wait_state(zh, job, "harvested")
    assert s.exit_code == 0 and _runs(runs) == [job]
    assert "# Handoff:" in paths.handoff.read_text() and paths.prompt.read_text().strip()


def test_a_crash_inside_the_publish_of_task_yaml_still_runs_the_task(zh: Path, sups, tmp_path: Path) -> None:
    """Found by the random loop: killed between linking task.yaml and removing its temp file, the
    job directory holds task.yaml and `.task.yaml.<random>` and no timeline. That is a record cut
    short (run it), not a job that lost its timeline (quarantined, never run again)."""
    runs = tmp_path / "runs.log"
    job = dispatch_cmd(_agent(runs), "publish-cut-short")
    claimed = zh / "spool" / "cur" / f"{job}.yaml"
    os.rename(zh / "spool" / "new" / f"{job}.yaml", claimed)
    record = zh / "jobs" / job
    record.mkdir(parents=True)
    (record / "task.yaml").write_bytes(claimed.read_bytes())
    (record / ".task.yaml.k3j9_x1q").write_bytes(claimed.read_bytes())
    (record / ".lock").touch()
    sups.start()
    wait_state(zh, job, "harvested")
    assert _runs(runs) == [job] and types(zh, job)[:2] == ["task.received", "job.queued"]
    assert not list((zh / "spool" / "quarantine").glob("*"))


def _enqueue(home: Path, runs: Path, name: str, linger: float) -> str:
    """Queue a task as `zen dispatch` does (in-process: the loop needs them fast)."""
    script = _agent(runs).replace("echo made", f"sleep {linger}; echo made")
    task = enqueue(Home(home), {"prompt": f"run {name}", "name": name, "agent": "cmd",
                                "command": ["sh", "-c", script]})
    assert task is not None
    return str(task["id"])


@pytest.mark.slow
def test_kill_9_at_random_moments_loses_and_doubles_nothing(zh: Path, lane: Path, sups, tmp_path: Path) -> None:
    """42 kill -9 of the real supervisor at random moments while tasks flow in (one a cycle,
    some agents still running when it dies); then every task ran once, was harvested once, and
    every timeline is gap-free."""
    rng = random.Random(15)
    runs = tmp_path / "runs.log"
    jobs: list[str] = []
    for cycle in range(42):
        jobs.append(_enqueue(zh, runs, f"loop-{cycle}", rng.choice((0, 0, 0.3))))
        proc = sups.start()  # then killed at a random moment of its recovery and work
        time.sleep(rng.uniform(0.0, 0.5))
        sups.kill9(proc)
    sups.start()
    for job in jobs:
        wait_state(zh, job, "harvested", timeout=60)
    ran = _runs(runs)
    assert sorted(ran) == sorted(jobs), "an agent ran twice, or never"
    for job in jobs:
        kinds = types(zh, job)
        assert kinds.count("task.received") == 1 and kinds.count("worktree.created") == 1, kinds
        assert kinds.count("agent.spawned") == 1 and kinds.count("harvest.done") == 1, kinds
        assert gap_free(zh, job), job
    assert sorted(p.stem for p in (zh / "spool" / "cur").iterdir()) == sorted(jobs)
    assert not list((zh / "spool" / "new").iterdir()) and not list((zh / "spool" / "quarantine").glob("*"))
    assert zen("doctor").returncode == 0

"""A burst of tasks (issue 21): dispatched at once, every one reaches `working` with exactly one
agent.spawned, its timeline in order, the spawns overlapped (real tmux on zen's private socket)."""

from __future__ import annotations

import itertools
import subprocess
from pathlib import Path

from tests.helpers import make_repo, wait_until, zen
from tests.supervisor.util import events, gap_free, snap
from zen.core.ids import parse_iso
from zen.store.home import Home

N = 24
ORDER = ["task.received", "job.queued", "preflight.passed", "worktree.created", "agent.spawned"]


def _span(home: Path, job: str) -> tuple[float, float]:
    """When the job's spawn began (its worktree was created) and when its agent ran."""
    at = {e["type"]: parse_iso(e["ts"]).timestamp() for e in events(home, job)}
    return at["worktree.created"], at["agent.spawned"]


def test_a_burst_all_reach_working_with_one_spawn_each(zh: Path, sups) -> None:
    cfg = zh / "zen.yaml"
    cfg.write_text(cfg.read_text().replace("max_concurrent_tasks: 5", f"max_concurrent_tasks: {N + 1}"))
    jobs = []
    for i in range(N):   # all in the spool before the supervisor starts: one plan starts them all
        r = zen("dispatch", f"burst {i}", "--name", f"burst-{i}", "--cmd", "sh -c 'read x'")
        assert r.returncode == 0, r.stderr
        jobs.append(r.stdout.strip())
    sups.start()

    def all_working() -> bool:
        states = {j: snap(zh, j).state.value for j in jobs}
        odd = {j: (s, [e.get("reason") for e in events(zh, j) if e["type"] in ("job.failed", "retry.scheduled")])
               for j, s in states.items() if s not in ("queued", "starting", "working", "waiting")}
        assert not odd, odd
        return all(s in ("working", "waiting") for s in states.values())

    wait_until(all_working, timeout=90, message=f"all {N} jobs working")
    for job in jobs:
        kinds = [e["type"] for e in events(zh, job)]
        assert kinds.count("agent.spawned") == 1, kinds
        assert [k for k in kinds if k in ORDER] == ORDER, kinds
        assert gap_free(zh, job)
    sessions = subprocess.run(["tmux", "-L", Home(zh).tmux_socket, "list-sessions", "-F", "#{session_name}"],
                              capture_output=True, text=True, check=True).stdout.split()
    assert {f"zen-{j}" for j in jobs} <= set(sessions)
    # overlapped: some job's spawn began before an earlier one's agent ran
    spans = sorted(_span(zh, j) for j in jobs)
    assert any(b[0] < a[1] for a, b in itertools.pairwise(spans)), spans


def test_a_start_that_fails_in_a_burst_fails_that_job_alone(zh: Path, sups, tmp_path: Path) -> None:
    cfg = zh / "zen.yaml"
    cfg.write_text(cfg.read_text().replace("max_concurrent_tasks: 5", "max_concurrent_tasks: 8"))
    other = make_repo(tmp_path / "other")
    assert zen("lane", "add", "other", str(other)).returncode == 0
    jobs = []
    for i in range(6):
        r = zen("dispatch", f"fine {i}", "--name", f"fine-{i}", "--lane", "app", "--cmd", "sh -c 'read x'")
        assert r.returncode == 0, r.stderr
        jobs.append(r.stdout.strip())
    r = zen("dispatch", "orphan", "--name", "orphan", "--lane", "other", "--cmd", "sh -c 'read x'")
    assert r.returncode == 0, r.stderr
    orphan = r.stdout.strip()
    removed = zen("lane", "remove", "other")   # its task is queued already: its start fails
    assert removed.returncode == 0, removed.stderr
    sups.start()
    failed = wait_until(lambda: snap(zh, orphan).state.value == "failed" and snap(zh, orphan), timeout=60,
                        message="the orphan's start to fail")
    assert "no longer in zen.yaml" in (failed.reason or "")
    wait_until(lambda: all(snap(zh, j).state.value in ("working", "waiting") for j in jobs), timeout=60,
               message="the others working")
    assert "agent.spawned" not in [e["type"] for e in events(zh, orphan)]
    for job in jobs:
        assert [e["type"] for e in events(zh, job)].count("agent.spawned") == 1

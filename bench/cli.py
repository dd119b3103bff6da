"""Whole-process start of the read and dispatch commands with 1,000 jobs in the home (issue 21):
`zen status`, `zen show JOB` and `zen dispatch` p50, each over p50 of `python -c pass` measured
interleaved in the same run (target <= 4x)."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.common import PY, bench_env, interleaved, make_home, p50, row, wall, zen_bin

JOBS = 1000
LIVE = 50          # working or waiting; the rest finished (harvested, failed, cancelled)
RUNS = 15
TARGET = 4.0


def seed(home: Path, n: int = JOBS, live: int = LIVE) -> list[str]:
    """`n` job records made through the store, as the supervisor leaves them: most finished, some live."""
    from datetime import UTC, datetime, timedelta

    from zen.core.ids import iso, make_job_id
    from zen.core.model import Task
    from zen.store.home import Home
    from zen.store.jobs import JobStore

    store = JobStore(Home(home))
    t0 = datetime(2026, 1, 1, tzinfo=UTC)
    ids = []
    for i in range(n):
        at = t0 + timedelta(seconds=i)
        job = make_job_id(f"seeded task {i}", now=at, rand=f"{i % 65536:04x}")
        store.create(Task(id=job, name=f"seeded-task-{i}", prompt=f"task {i}", lane="app", agent="sim",
                          created_at=iso(at)))
        store.append(job, "worktree.created", path=str(home / "worktrees" / job), branch=f"zen/{job}")
        store.append(job, "agent.spawned", session=f"zen-{i}", target=f"zen-{i}:0.0")
        if i < live:
            if i % 2:
                store.append(job, "turn.waiting", reason="idle")
        elif i % 20 == 0:
            store.append(job, "job.failed", reason="seeded failure")
        else:
            store.append(job, "agent.exited", exit_code=0)
            store.append(job, "harvest.done", branch=f"zen/review/{job}", commit="0" * 40)
        store.snapshot(job)
        ids.append(job)
    return ids


def run() -> list[dict]:
    with bench_env() as env:
        home, _repo, env = make_home(env)
        ids = seed(home)
        zbin = zen_bin().split()
        devnull_env = {**env, "COLUMNS": "200"}
        counter = iter(range(10**6))
        figures = [
            ("zen status", lambda: wall([*zbin, "status"], env=devnull_env)),
            ("zen show JOB", lambda: wall([*zbin, "show", ids[len(ids) // 2]], env=devnull_env)),
            ("zen dispatch", lambda: wall([*zbin, "dispatch", f"bench task {next(counter)}", "--lane", "app",
                                           "--agent", "sim"], env=devnull_env)),
        ]
        rows = []
        for name, measure in figures:
            base, cmd = interleaved(lambda: wall([PY, "-c", "pass"], env=env), measure, RUNS)
            ratio = p50(cmd) / p50(base)
            rows.append(row(f"{name} p50 / python -c pass ({JOBS} jobs)", ratio, "x", f"<= {TARGET:g}",
                            ratio <= TARGET, f"{name.split()[1]} {p50(cmd) * 1000:.0f} ms, python -c pass "
                            f"{p50(base) * 1000:.0f} ms, {RUNS} runs each, console script"))
        return rows


if __name__ == "__main__":
    from bench.run import print_rows

    print_rows(run())

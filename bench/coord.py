"""Coordinator benchmark (issue 19): what leases cost the guard hook.

- guard hook p50 with leases on / the same hook with leases off, interleaved in the same run: a
  home with 10 live jobs on lane `app` holding 200 leases between them (190 files, 10 globs), and
  job 0 editing a file it already holds (Edit: the lease lookup runs on every write; the common
  case once a job has touched its files). The only difference between the two homes is
  `coordinator.leases`. Target <= 1.1x.
- the same, for job 0's write to a file job 1 holds (the deny path: the holder named), reported.

`python bench/coord.py` prints the rows; bench/run.py imports run().
"""

from __future__ import annotations

import json
import resource
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.common import bench_env, interleaved, p50, p95, row, wall, zen, zen_bin  # noqa: E402

RUNS = 100
JOBS = 10
LEASES = 200
GLOBS = 10


def _home(env: dict[str, str], name: str, leases_on: bool) -> tuple[Path, dict[str, str]]:
    """A home with JOBS live jobs of lane app and LEASES leases (written as the guardian does)."""
    tmp = Path(env["BENCH_TMP"])
    home = tmp / name
    zen("init", str(home), env=env)
    cfg = home / "zen.yaml"
    cfg.write_text(cfg.read_text().replace("  leases: true", f"  leases: {'true' if leases_on else 'false'}"))
    jobs = [f"20261201T10{i:04d}Z-bench-{i:04x}" for i in range(JOBS)]
    for i, job in enumerate(jobs):
        d = home / "jobs" / job
        d.mkdir(parents=True)
        (d / "task.yaml").write_text(f"zen: 1\nid: {job}\nname: bench-{i}\nlane: app\n")
        (d / "state.json").write_text(json.dumps({"job": job, "name": f"bench-{i}", "seq": 0, "state": "working",
                                                  "lane": "app", "domain": "code"}))
        (home / "worktrees" / job / "src").mkdir(parents=True)
    py = ("import sys; from zen.coord import leases\n"
          "home, jobs, n, globs = sys.argv[1], sys.argv[2].split(','), int(sys.argv[3]), int(sys.argv[4])\n"
          "for k in range(n - globs):\n"
          "    leases.acquire(home, 'app', jobs[k % len(jobs)], f'src/m{k // len(jobs)}/f{k}.py')\n"
          "for k in range(globs):\n"
          "    leases.acquire(home, 'app', jobs[k % len(jobs)], f'pkg{k}/**')\n")
    subprocess.run([sys.executable, "-c", py, str(home), ",".join(jobs), str(LEASES), str(GLOBS)], env=env,
                   check=True, cwd=ROOT)
    henv = {**env, "ZEN_HOME": str(home), "ZEN_JOB_ID": jobs[0], "ZEN_WORKTREE": str(home / "worktrees" / jobs[0])}
    henv.pop("PYTHONDONTWRITEBYTECODE", None)
    henv["PYTHONPYCACHEPREFIX"] = str(tmp / "pycache")
    return home, henv


def _payload(wt: Path, rel: str) -> bytes:
    return json.dumps({"session_id": "bench", "transcript_path": str(wt / "t.jsonl"), "cwd": str(wt),
                       "permission_mode": "default", "hook_event_name": "PreToolUse", "tool_name": "Edit",
                       "tool_input": {"file_path": str(wt / rel), "old_string": "a", "new_string": "b"},
                       "tool_use_id": "toolu_bench"}).encode()


def _cpu(argv: list[str], env: dict[str, str], stdin: bytes, into: list[float]) -> float:
    """wall() of one run, its CPU time (user + system, less sensitive to a loaded machine) kept."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    took = wall(argv, env=env, stdin=stdin)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    into.append(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime)
    return took


def _pair(on: tuple[Path, dict[str, str]], off: tuple[Path, dict[str, str]], rel: str
          ) -> tuple[list[float], list[float], str, float]:
    argv = [*zen_bin().split(), "guard", "hook"]
    payloads = [_payload(Path(e["ZEN_WORKTREE"]), rel) for _, e in (on, off)]
    notes = []
    for (_, e), p in zip((on, off), payloads, strict=True):   # warm: the policy cache, the page cache
        r = subprocess.run(argv, input=p, env=e, capture_output=True)
        notes.append(f"exit {r.returncode}")
    cpu_off: list[float] = []
    cpu_on: list[float] = []
    xs, ys = interleaved(lambda: _cpu(argv, off[1], payloads[1], cpu_off),
                         lambda: _cpu(argv, on[1], payloads[0], cpu_on), RUNS)
    return xs, ys, "/".join(notes), p50(cpu_on) / p50(cpu_off)


def run() -> list[dict]:
    with bench_env() as env:
        on, off = _home(env, "on", True), _home(env, "off", False)
        held = sorted((on[0] / "coord" / "app" / "leases").glob("*.json"))
        assert len(held) == LEASES, len(held)
        own = "src/m0/f0.py"                      # job 0's (k = 0)
        other = "src/m0/f1.py"                    # job 1's (k = 1)
        xs, ys, rc, cpu = _pair(on, off, own)
        base, hk = p50(xs), p50(ys)
        ratio = hk / base
        dx, dy, drc, _ = _pair(on, off, other)
        rows = [
            row("guard hook p50, leases on / off", ratio, "x", "<= 1.1", ratio <= 1.1,
                f"Edit of a file the job holds: {hk * 1000:.1f} ms on (p95 {p95(ys) * 1000:.1f}) vs "
                f"{base * 1000:.1f} ms off; {JOBS} live jobs, {LEASES} leases ({GLOBS} globs), {RUNS} runs "
                f"each, interleaved; CPU time on / off {cpu:.3f}x; exits {rc}"),
            row("guard hook p50, a write to another job's file / leases off", p50(dy) / p50(dx), "x", "report", True,
                f"denied naming the holder: {p50(dy) * 1000:.1f} ms vs {p50(dx) * 1000:.1f} ms; exits {drc}"),
        ]
    return rows


if __name__ == "__main__":
    from bench.run import print_rows

    print_rows(run())

"""Guardian benchmarks (issue 3).

- hook p50 wall time as a ratio to `python -c pass` with the same interpreter, interleaved, in
  the same run: the hook runs through the console script exactly as agents run it (the settings
  file registers `<venv>/bin/zen guard hook`), with a typical Bash payload, a home, a job and its
  worktree. Target <= 3x.
- `zen guard check --batch` throughput over a few thousand mixed lines (commands and file
  tools, allowed and denied), one process. Target >= 5,000 commands/s.

`python bench/guard.py` prints the rows; bench/run.py imports run().
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.common import PY, bench_env, interleaved, p50, p95, row, wall, zen, zen_bin  # noqa: E402

RUNS = 40
BATCH_LINES = 4000

TYPICAL = [
    "git status", "ls -la src", "pytest -q tests/test_app.py", "rm -rf build dist",
    "grep -rn 'TODO' src | head -20", "cat package.json", "npm test", "git diff --stat",
    "rm -rf ~/.ssh", "sudo apt-get install jq", "git push --force origin main",
    "curl -s https://api.stripe.com/v1/charges", "find . -name '*.pyc' -delete",
    "python -c 'import shutil; shutil.rmtree(\"/etc\")'", "echo \"DROP TABLE users\" > notes.txt",
    "cd src && sed -i 's/foo/bar/g' app.py", "chmod 777 deploy.sh", "git commit -m 'rm -rf everything'",
    "bash -c 'rm -rf /'", "cat .env", "cat .env.example", "make -j4 && ./run-tests.sh",
]


def _setup(env: dict[str, str]) -> tuple[Path, Path, dict[str, str]]:
    tmp = Path(env["BENCH_TMP"])
    home = tmp / "zh"
    zen("init", str(home), env=env)
    job = "bench-job"
    (home / "jobs" / job).mkdir(parents=True)
    (home / "jobs" / job / "state.json").write_text(json.dumps({"job": job, "seq": 0, "domain": "code"}))
    wt = home / "worktrees" / job
    (wt / "src").mkdir(parents=True)
    henv = {**env, "ZEN_HOME": str(home), "ZEN_JOB_ID": job, "ZEN_WORKTREE": str(wt)}
    # as installed: bytecode cached (pip compiles it). A dev shell may set PYTHONDONTWRITEBYTECODE,
    # which recompiles every module of the hook on every call; keep the cache out of the tree.
    henv.pop("PYTHONDONTWRITEBYTECODE", None)
    henv["PYTHONPYCACHEPREFIX"] = str(tmp / "pycache")
    return home, wt, henv


def hook_rows(env: dict[str, str]) -> list[dict]:
    _home, wt, henv = _setup(env)
    payload = json.dumps({
        "session_id": "bench", "transcript_path": str(wt / "t.jsonl"), "cwd": str(wt),
        "permission_mode": "default", "hook_event_name": "PreToolUse", "tool_name": "Bash",
        "tool_input": {"command": "pytest -q tests/test_app.py && git status", "description": "run tests"},
        "tool_use_id": "toolu_bench"}).encode()
    hook_argv = [*zen_bin().split(), "guard", "hook"]
    warm = subprocess.run(hook_argv, input=payload, env=henv, capture_output=True)   # compiles the policy cache
    note_rc = f"exit {warm.returncode}" + (f": {warm.stderr.decode().strip()[:80]}" if warm.returncode else "")
    base_argv = [PY, "-c", "pass"]
    xs, ys = interleaved(lambda: wall(base_argv, env=henv),
                         lambda: wall(hook_argv, env=henv, stdin=payload), RUNS)
    base, hk = p50(xs), p50(ys)
    ratio = hk / base
    return [
        row("guard hook p50 / python -c pass", ratio, "x", "<= 3", ratio <= 3.0,
            f"hook {hk * 1000:.1f} ms (p95 {p95(ys) * 1000:.1f}), python -c pass {base * 1000:.1f} ms, "
            f"{RUNS} runs each, console script; hook {note_rc}"),
    ]


def batch_rows(env: dict[str, str]) -> list[dict]:
    home, wt, henv = _setup(env)
    henv = {k: v for k, v in henv.items() if k != "ZEN_JOB_ID"}
    lines = []
    for i in range(BATCH_LINES):
        if i % 10 == 9:
            target = wt / "src" / f"f{i}.py" if i % 20 == 9 else home / "policy" / "guardian.yaml"
            lines.append(json.dumps({"tool": "Write", "file_path": str(target), "cwd": str(wt)}))
        else:
            cmd = TYPICAL[i % len(TYPICAL)] + ("" if i < len(TYPICAL) else f" # {i}")
            lines.append(json.dumps({"command": cmd, "cwd": str(wt)}))
    f = Path(env["BENCH_TMP"]) / "batch.jsonl"
    f.write_text("\n".join(lines) + "\n")
    argv = [*zen_bin().split(), "guard", "check", "--batch", str(f)]
    subprocess.run(argv, env=henv, capture_output=True)          # warm: policy cache, page cache
    best = None
    out = b""
    for _ in range(3):
        t0 = time.perf_counter()
        r = subprocess.run(argv, env=henv, capture_output=True)
        took = time.perf_counter() - t0
        out = r.stdout
        best = took if best is None else min(best, took)
    answers = [json.loads(x) for x in out.splitlines()]
    ok_count = len(answers) == BATCH_LINES
    denied = sum(1 for a in answers if a.get("decision") != "allow")
    rate = BATCH_LINES / best if best else 0.0
    return [
        row("guard check --batch throughput", rate, "cmd/s", ">= 5000", rate >= 5000 and ok_count,
            f"{BATCH_LINES} mixed lines in {best:.2f} s (best of 3, whole process incl. start); "
            f"{denied} denied; {len(answers)} answers"),
    ]


def run() -> list[dict]:
    with bench_env() as env:
        rows = hook_rows(env)
    with bench_env() as env:
        rows += batch_rows(env)
    return rows


if __name__ == "__main__":
    from bench.run import print_rows

    print_rows(run())

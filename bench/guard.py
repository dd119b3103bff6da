"""Guardian benchmarks (issues 3 and 13).

- hook p50 wall time as a ratio to `python -c pass` with the same interpreter, interleaved, in
  the same run: the hook runs through the console script exactly as agents run it (the settings
  file registers `<venv>/bin/zen guard hook`), with a typical Bash payload, a home, a job and its
  worktree. With the resident guardian (`zen guard serve`, as the supervisor runs it): target
  <= 1.5x; alone (no server: the hook decides in-process), interleaved in the same loop: <= 3x.
- 100 concurrent hook calls of a harmless command on a loaded machine (two busy loops beside
  them): how many the hook blocks (its 2 s deadline) and the slowest, with the resident guardian
  (target: none blocked) and, in the same run, without it.
- `zen guard check --batch` throughput over a few thousand mixed lines (commands and file
  tools, allowed and denied), one process. Target >= 10,000 commands/s.

`python bench/guard.py` prints the rows; bench/run.py imports run().
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.common import PY, bench_env, p50, p95, row, wall, zen, zen_bin  # noqa: E402

RUNS = 40
BATCH_LINES = 4000
CONCURRENT = 100
HARMLESS = "pytest -q tests/test_app.py && git status"

TYPICAL = [
    "git status", "ls -la src", "pytest -q tests/test_app.py", "rm -rf build dist",
    "grep -rn 'TODO' src | head -20", "cat package.json", "npm test", "git diff --stat",
    "rm -rf ~/.ssh", "sudo apt-get install jq", "git push --force origin main",
    "curl -s https://api.stripe.com/v1/charges", "find . -name '*.pyc' -delete",
    "python -c 'import shutil; shutil.rmtree(\"/etc\")'", "echo \"DROP TABLE users\" > notes.txt",
    "cd src && sed -i 's/foo/bar/g' app.py", "chmod 777 deploy.sh", "git commit -m 'rm -rf everything'",
    "bash -c 'rm -rf /'", "cat .env", "cat .env.example", "make -j4 && ./run-tests.sh",
]


def _setup(env: dict[str, str], name: str = "zh") -> tuple[Path, Path, dict[str, str]]:
    tmp = Path(env["BENCH_TMP"])
    home = tmp / name
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


def _payload(wt: Path, command: str = HARMLESS) -> bytes:
    return json.dumps({
        "session_id": "bench", "transcript_path": str(wt / "t.jsonl"), "cwd": str(wt),
        "permission_mode": "default", "hook_event_name": "PreToolUse", "tool_name": "Bash",
        "tool_input": {"command": command, "description": "run tests"},
        "tool_use_id": "toolu_bench"}).encode()


@contextmanager
def _resident(home: Path, henv: dict[str, str]) -> Iterator[None]:
    """`zen guard serve` for `home` while the block runs (as the supervisor runs it)."""
    proc = subprocess.Popen([*zen_bin().split(), "guard", "serve", "--home", str(home)], env=henv,
                            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    sock = home / "control" / "guard.sock"
    try:
        deadline = time.monotonic() + 30
        while not sock.exists():
            if proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"zen guard serve did not start: {proc.stderr.read().decode()[:200]}")
            time.sleep(0.02)
        yield
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def hook_rows(env: dict[str, str]) -> list[dict]:
    home, wt, henv = _setup(env)
    _, alone_wt, alone_env = _setup(env, "zh-alone")
    payload, alone_payload = _payload(wt), _payload(alone_wt)
    hook_argv = [*zen_bin().split(), "guard", "hook"]
    warm = subprocess.run(hook_argv, input=alone_payload, env=alone_env, capture_output=True)   # compiles the policy cache
    note_rc = f"exit {warm.returncode}" + (f": {warm.stderr.decode().strip()[:80]}" if warm.returncode else "")
    base_argv = [PY, "-c", "pass"]
    base, served, alone = [], [], []
    with _resident(home, henv):
        for _ in range(RUNS):
            base.append(wall(base_argv, env=henv))
            served.append(wall(hook_argv, env=henv, stdin=payload))
            alone.append(wall(hook_argv, env=alone_env, stdin=alone_payload))
    b, s, a = p50(base), p50(served), p50(alone)
    return [
        row("guard hook p50 / python -c pass (resident guardian)", s / b, "x", "<= 1.5", s / b <= 1.5,
            f"hook {s * 1000:.1f} ms (p95 {p95(served) * 1000:.1f}), python -c pass {b * 1000:.1f} ms, "
            f"{RUNS} runs each, interleaved, console script"),
        row("guard hook p50 / python -c pass (no server)", a / b, "x", "<= 3", a / b <= 3.0,
            f"hook {a * 1000:.1f} ms (p95 {p95(alone) * 1000:.1f}), in-process decision; hook {note_rc}"),
    ]


def _burst(argv: list[str], env: dict[str, str], payload: bytes) -> tuple[int, float]:
    """CONCURRENT hook calls at once: (how many did not exit 0, the slowest in seconds). Each reads
    its input from a file, there at once, as an agent writes it at once (a pipe filled only after
    the hundredth start would count the bench's own spawning against the hook's deadline)."""
    source = Path(env["BENCH_TMP"]) / "payload.json"
    source.write_bytes(payload)
    t0 = time.perf_counter()
    procs = []
    for _ in range(CONCURRENT):
        with source.open("rb") as f:
            procs.append(subprocess.Popen(argv, env=env, stdin=f, stdout=subprocess.DEVNULL,
                                          stderr=subprocess.DEVNULL))
    blocked, slowest = 0, 0.0
    for p in procs:
        blocked += p.wait() != 0
        slowest = max(slowest, time.perf_counter() - t0)
    return blocked, slowest


def concurrent_rows(env: dict[str, str]) -> list[dict]:
    home, wt, henv = _setup(env)
    _, alone_wt, alone_env = _setup(env, "zh-alone")
    hook_argv = [*zen_bin().split(), "guard", "hook"]
    subprocess.run(hook_argv, input=_payload(alone_wt), env=alone_env, capture_output=True)
    hogs = [subprocess.Popen([PY, "-c", "while True: pass"]) for _ in range(2)]
    try:
        with _resident(home, henv):
            served = _burst(hook_argv, henv, _payload(wt))
        alone = _burst(hook_argv, alone_env, _payload(alone_wt))
    finally:
        for h in hogs:
            h.kill()
            h.wait()
    return [
        row(f"guard hook: {CONCURRENT} concurrent harmless calls blocked (resident guardian)", served[0], "calls",
            "0", served[0] == 0,
            f"slowest {served[1]:.2f} s, beside 2 busy loops; without the server in the same run: "
            f"{alone[0]} blocked, slowest {alone[1]:.2f} s"),
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
        row("guard check --batch throughput", rate, "cmd/s", ">= 10000", rate >= 10000 and ok_count,
            f"{BATCH_LINES} mixed lines in {best:.2f} s (best of 3, whole process incl. start, "
            f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f}); {denied} denied; "
            f"{len(answers)} answers"),
    ]


def run() -> list[dict]:
    with bench_env() as env:
        rows = hook_rows(env)
    with bench_env() as env:
        rows += concurrent_rows(env)
    with bench_env() as env:
        rows += batch_rows(env)
    return rows


if __name__ == "__main__":
    from bench.run import print_rows

    print_rows(run())

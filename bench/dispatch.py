"""`zen dispatch` figures (issue 21), each against `python -c pass` measured in the same run:

- one dispatch, whole process, p50 over p50 of `python -c pass` (target <= 4x);
- 100 dispatches from one shell loop while the supervisor runs and spawns what they queue:
  the loop's wall time over 100 x p50(`python -c pass`) (target <= 4: the issue's 8 s at this
  machine's 20 ms `python -c pass`).
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.common import PY, bench_env, interleaved, make_home, p50, row, wall, zen, zen_bin

RUNS = 25
LOOP = 100
TARGET = 4.0


def single() -> list[dict]:
    with bench_env() as env:
        _home, _repo, env = make_home(env)
        zbin = zen_bin().split()
        counter = iter(range(10**6))
        base, disp = interleaved(
            lambda: wall([PY, "-c", "pass"], env=env),
            lambda: wall([*zbin, "dispatch", f"bench task {next(counter)}", "--lane", "app"], env=env),
            RUNS,
        )
        ratio = p50(disp) / p50(base)
        return [row("zen dispatch p50 / python -c pass", ratio, "x", f"<= {TARGET:g}", ratio <= TARGET,
                    f"dispatch {p50(disp) * 1000:.0f} ms, python -c pass {p50(base) * 1000:.0f} ms")]


def loop() -> list[dict]:
    """One shell loop of LOOP dispatches of `cmd` agents, a supervisor running (5 at a time)."""
    with bench_env() as env:
        home, _repo, env = make_home(env)
        zen("supervise", "--detach", env=env)
        try:
            zbin = zen_bin()
            script = f'for i in $(seq {LOOP}); do {zbin} dispatch "loop $i" --cmd "sleep 600" >/dev/null || exit 1; done'
            base = [wall([PY, "-c", "pass"], env=env) for _ in range(15)]
            t0 = time.perf_counter()
            r = subprocess.run(["sh", "-c", script], env=env, capture_output=True, text=True)
            took = time.perf_counter() - t0
            base += [wall([PY, "-c", "pass"], env=env) for _ in range(15)]
            ok = r.returncode == 0 and len(list((home / "jobs").iterdir())) + len(list((home / "spool" / "new").iterdir())) >= LOOP
            ratio = took / (LOOP * p50(base))
            return [row(f"{LOOP} dispatches in one shell loop / {LOOP} x python -c pass", ratio, "x", f"<= {TARGET:g}",
                        ok and ratio <= TARGET, f"{took:.1f} s with the supervisor spawning; python -c pass "
                        f"{p50(base) * 1000:.0f} ms; {'all queued' if ok else 'FAILED: ' + r.stderr[-200:]}")]
        finally:
            zen("supervise", "--stop", env=env, check=False)
            from zen.store.home import Home

            subprocess.run(["tmux", "-L", Home(home).tmux_socket, "kill-server"], env=env, capture_output=True)


def run() -> list[dict]:
    return [*single(), *loop()]


if __name__ == "__main__":
    from bench.run import print_rows

    which = sys.argv[1:] or ["single", "loop"]
    rows = []
    for name in which:
        rows += globals()[name]()
    print_rows(rows)

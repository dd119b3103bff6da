"""The wall's cost (issue 31): what a command pays for running inside an agent's sandbox.

- zen's bubblewrap (aider's wall: the whole agent inside it): a command the agent runs inside the
  running sandbox vs the same command outside, p50 over interleaved rounds, each round a loop of
  20 `sh -c :` started by one shell (so what is timed is the command, not the sandbox's start).
  Target: p50 overhead <= 10 ms per command.
- the sandbox's own start (once per agent session): `bwrap ... true` vs `true`, reported.
- Claude Code's sandbox starts a bubblewrap for every Bash command: zen cannot change that cost;
  the same full-namespaces start above is its order of size, reported as such.

`python bench/sandbox.py` prints the rows; bench/run.py imports run().
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.common import interleaved, p50, row  # noqa: E402
from zen.adapters import sandbox  # noqa: E402

ROUNDS = 15
LOOP = 20


def _timed(argv: list[str]) -> float:
    t0 = time.perf_counter()
    subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    return time.perf_counter() - t0


def run() -> list[dict]:
    ok, why = sandbox.works()
    if not ok:
        return [row("command inside zen's sandbox", 0, "ms", "<= 10 ms", False, f"not measured: {why}")]
    with tempfile.TemporaryDirectory(prefix="zbs") as tmp:
        wt = Path(tmp) / "wt"
        wt.mkdir()
        wall = sandbox.Wall(worktree=wt, hide=(Path(tmp) / "hidden",), home=Path(tmp))
        (Path(tmp) / "hidden").mkdir()
        loop = f"i=0; while [ $i -lt {LOOP} ]; do sh -c :; i=$((i+1)); done"
        inside = sandbox.argv(wall, ["sh", "-c", loop])
        outside = ["sh", "-c", loop]
        start = sandbox.argv(wall, ["true"])
        # the loop inside pays the sandbox's start once: taken off with the start measured alongside
        a, b = interleaved(lambda: _timed(inside), lambda: _timed(outside), ROUNDS)
        s, t = interleaved(lambda: _timed(start), lambda: _timed(["true"]), ROUNDS)
    per_in = (p50(a) - p50(s)) / LOOP
    per_out = p50(b) / LOOP
    overhead_ms = (per_in - per_out) * 1000
    start_ms = (p50(s) - p50(t)) * 1000
    return [
        row("command inside zen's sandbox: overhead", overhead_ms, "ms", "<= 10 ms", overhead_ms <= 10,
            f"p50 per `sh -c :` inside a running sandbox {per_in * 1000:.2f} ms vs outside "
            f"{per_out * 1000:.2f} ms ({ROUNDS} interleaved rounds of {LOOP})"),
        row("zen's sandbox start (once per agent)", start_ms, "ms", "reported", True,
            f"bwrap with every namespace, no capabilities, p50 {p50(s) * 1000:.1f} ms vs `true` "
            f"{p50(t) * 1000:.1f} ms; Claude Code's sandbox pays a start of this order for every Bash command"),
    ]


if __name__ == "__main__":
    from bench.run import print_rows

    print_rows(run())

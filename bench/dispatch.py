"""`zen dispatch` whole-process wall time, p50 over p50 of `python -c pass` (target <= 15x)."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.common import PY, bench_env, interleaved, make_home, p50, row, wall, zen_bin

RUNS = 25


def run() -> list[dict]:
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
        return [row("zen dispatch p50 / python -c pass", ratio, "x", "<= 15", ratio <= 15,
                    f"dispatch {p50(disp) * 1000:.0f} ms, python -c pass {p50(base) * 1000:.0f} ms")]


if __name__ == "__main__":
    from bench.run import print_rows

    print_rows(run())

"""`zen dispatch` whole-process wall time, p50 over p50 of `python -c pass` (target <= 15x)."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.common import PY, bench_env, interleaved, make_repo, p50, row, wall, zen, zen_bin

RUNS = 25


def run() -> list[dict]:
    with bench_env() as env:
        tmp = Path(env["BENCH_TMP"])
        home = tmp / "home"
        zen("init", str(home), env=env)
        env = env | {"ZEN_HOME": str(home)}
        repo = make_repo(tmp / "repo", env)
        zen("lane", "add", "app", str(repo), env=env)
        cfg = home / "zen.yaml"
        cfg.write_text(cfg.read_text().replace("max_queue_size: 100", "max_queue_size: 100000"))
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

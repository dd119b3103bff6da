"""Anomaly detection on generated fleets (issue 38): the share of ordinary turns flagged (target
<= 1%) and the share of injected anomalies flagged within the turn they start in (target 100%),
over FLEETS fleets of 50 jobs each (tests/insight/fleets.py), plus the detector's time per 1,000
turns."""

from __future__ import annotations

import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.common import row

FLEETS = 20


def run() -> list[dict]:
    from tests.insight.fleets import KINDS, fleet, inject
    from zen.observe.anomalies import baselines, detect, fold_turns

    turns_seen = flagged_turns = injected = caught = 0
    spent = 0.0
    for seed in range(100, 100 + FLEETS):
        f = fleet(50, seed)
        t0 = time.perf_counter()
        turns = {j: fold_turns(j, evs) for j, evs in f.items()}
        base = baselines(turns)
        found = detect(turns, base)
        spent += time.perf_counter() - t0
        turns_seen += sum(len(t) for t in turns.values())
        flagged_turns += len({(x.job, x.turn) for x in found})
        rng = random.Random(seed)
        for kind in KINDS:
            job = rng.choice(list(f))
            events, _ = inject(f[job], kind, rng)
            mine = fold_turns(job, events)
            hits = detect({job: mine}, base, only_last=True)
            injected += 1
            caught += any(x.what == kind and x.turn == mine[-1].n for x in hits)
    rate = 100.0 * flagged_turns / max(turns_seen, 1)
    recall = 100.0 * caught / max(injected, 1)
    per_k = 1000.0 * spent / max(turns_seen, 1) * 1000.0
    return [
        row("anomalies: ordinary turns flagged", rate, "%", "<= 1%", rate <= 1.0,
            f"{flagged_turns} of {turns_seen} turns in {FLEETS} generated fleets of 50 jobs"),
        row("anomalies: injected flagged in their turn", recall, "%", "100%", caught == injected,
            f"{caught} of {injected} (tool loop, deny burst, cost spike, edit churn, tool calls)"),
        row("anomalies: fold + baselines + detect", per_k, "ms", "per 1k turns", True,
            "pure, over the folded turns"),
    ]


if __name__ == "__main__":
    from bench.run import print_rows

    print_rows(run())

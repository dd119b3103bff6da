"""`make bench`: run every benchmark, print a table, write bench/results.json and the same rows as
a Markdown table in bench/results.md (what README's Performance section shows).

Each figure is a ratio to a baseline measured in the same run, or a rate reported as is; a
missed target is reported, never hidden (exit 0 either way: CI does not run benchmarks)."""

from __future__ import annotations

import importlib
import json
import os
import sys
import time
import traceback
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

MODULES = [
    "bench.guard",
    "bench.sandbox",
    "bench.coord",
    "bench.dispatch",
    "bench.cli",
    "bench.timeline",
    "bench.metrics",
    "bench.anomalies",
    "bench.supervisor",
    "bench.watch",
    "bench.server",
    "bench.web",
    "bench.ray",
]


def print_rows(rows: list[dict]) -> None:
    width = max((len(r["figure"]) for r in rows), default=10)
    print(f"{'figure':<{width}}  {'value':>10}  {'unit':<5} {'target':<12} pass  note")
    for r in rows:
        mark = "yes" if r["pass"] else "NO"
        print(f"{r['figure']:<{width}}  {r['value']:>10.3f}  {r['unit']:<5} {r['target']:<12} {mark:<5} {r.get('note', '')}")


def markdown(rows: list[dict], seconds: float) -> str:
    """The rows as a Markdown table, headed by when, where and under what load they were taken."""
    load = " / ".join(f"{x:.1f}" for x in os.getloadavg())
    head = (f"`make bench` of {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, {os.cpu_count()} cores, "
            f"load average at the end {load}, {seconds:.0f} s in all.\n\n")
    lines = ["| figure | measured | target | met | how |", "|---|---|---|---|---|"]
    for r in rows:
        value = f"{r['value']:,.0f}" if abs(r["value"]) >= 100 else f"{r['value']:.2f}"
        note = str(r.get("note", "")).replace("|", "\\|")
        lines.append(f"| {r['figure']} | {value} {r['unit']} | {r['target']} | {'yes' if r['pass'] else '**no**'} | {note} |")
    return head + "\n".join(lines) + "\n"


def main(argv: list[str]) -> int:
    only = set(argv)
    rows: list[dict] = []
    t0 = time.time()
    for name in MODULES:
        if only and name.split(".")[-1] not in only:
            continue
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as exc:
            rows.append({"figure": name, "value": 0, "unit": "", "target": "", "pass": False,
                         "note": f"not available: {exc}"})
            continue
        print(f"== {name}", flush=True)
        try:
            got = module.run()
        except Exception as exc:
            traceback.print_exc()
            got = [{"figure": name, "value": 0, "unit": "", "target": "", "pass": False, "note": f"error: {exc}"}]
        print_rows(got)
        rows.extend(got)
    print(f"\n== all ({time.time() - t0:.0f}s)")
    print_rows(rows)
    if only:  # a partial run must not replace the figures of a full one
        print("(a partial run: bench/results.json left as it was)")
        return 0
    (ROOT / "bench" / "results.json").write_text(json.dumps(rows, indent=2) + "\n")
    (ROOT / "bench" / "results.md").write_text(markdown(rows, time.time() - t0))
    print(f"wrote {ROOT / 'bench' / 'results.json'} and {ROOT / 'bench' / 'results.md'}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

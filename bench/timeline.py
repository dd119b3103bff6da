"""Timeline: events appended per second by one job (each one fsynced under the job lock), and
the replay time of a 100k-event timeline (what `zen doctor --rebuild` and a cold state.json cost).

Baseline: a bare fsynced append of the same bytes with no lock, no seq lookup and no JSON."""

from __future__ import annotations

import json
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.common import row


def run() -> list[dict]:
    from zen.core import states
    from zen.store import events

    rows = []
    with tempfile.TemporaryDirectory(prefix="zbt") as tmp:
        d = Path(tmp) / "job"
        d.mkdir()
        n = 400
        t0 = time.perf_counter()
        for i in range(n):
            events.append(d, "job", "usage", input_tokens=i)
        zen_rate = n / (time.perf_counter() - t0)
        raw = Path(tmp) / "raw.jsonl"
        line = b'{"v":1,"seq":1,"ts":"2026-11-29T10:00:00.000Z","job":"job","type":"usage","input_tokens":1}\n'
        fd = os.open(raw, os.O_WRONLY | os.O_APPEND | os.O_CREAT)
        t0 = time.perf_counter()
        for _ in range(n):
            os.write(fd, line)
            os.fsync(fd)
        raw_rate = n / (time.perf_counter() - t0)
        os.close(fd)
        rows.append(row("timeline append (fsync) events/s", zen_rate, "ev/s", "report", True,
                        f"bare fsynced write: {raw_rate:.0f}/s, ratio {raw_rate / zen_rate:.2f}x"))

        # a 100k-event timeline: write it fast (no fsync), then time a full replay
        big = Path(tmp) / "big"
        big.mkdir()
        types = ["turn.working", "output", "turn.waiting", "guard.allowed", "usage"]
        with (big / "events.jsonl").open("w") as f:
            for seq in range(1, 100_001):
                f.write(json.dumps({"v": 1, "seq": seq, "ts": "2026-11-29T10:00:00.000Z", "job": "big",
                                    "type": types[seq % 5], "actor": "supervisor", "input_tokens": 1}) + "\n")
        t0 = time.perf_counter()
        evs, _ = events.read_from(big / "events.jsonl", 0)
        snap = states.replay("big", evs)
        replay_s = time.perf_counter() - t0
        assert snap.seq == 100_000
        rows.append(row("timeline replay of 100k events", replay_s, "s", "report", True,
                        f"{100_000 / replay_s:.0f} events/s"))
    return rows


if __name__ == "__main__":
    from bench.run import print_rows

    print_rows(run())

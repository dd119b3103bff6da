"""The observatory: fleet metrics of 100 jobs with 1,000 API calls each (issue 16: <= 1 s), from
the published metrics.json snapshots and cold (folding every timeline), and the cost of taking
in one OTLP batch of 100 records.

Baselines, measured in the same run: for the fleet figures, parsing the same timelines' JSON
lines and nothing else (json.loads of every line), which any reader of the timelines pays; for
ingest, decoding the batch's JSON and appending its bytes to a file with one fsync (the least a
durable receiver does)."""

from __future__ import annotations

import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.common import p50, row

JOBS = 100
CALLS = 1000
BATCH = 100
RUNS = 5


def _events(i: int) -> list[tuple[str, dict]]:
    """One job's life: 1,000 API calls over 20 turns, with guard decisions, tool results and the
    transcript's usage at every Stop."""
    out: list[tuple[str, dict]] = [("agent.spawned", {"session": f"zen-{i}", "target": f"zen-{i}:0.0"})]
    for turn in range(20):
        for c in range(CALLS // 20):
            n = turn * 100 + c
            out.append(("api.request", {"source": "otel", "otel": f"s{i}:{n}", "model": "claude-sonnet-4-5",
                                        "input_tokens": 10 + c, "output_tokens": 200, "cache_read_input_tokens": 5000,
                                        "cache_creation_input_tokens": 300, "cache_creation_1h_input_tokens": 0,
                                        "cost_usd": 0.0057, "duration_ms": 800 + (n * 37) % 2000}))
            if c % 10 == 0:
                out.append(("guard.allowed", {"decision": "allow", "rule": "ok", "reason": "", "tool": "Bash",
                                              "command": "cat src/a.py > /tmp/x && rm -f old.txt"}))
                out.append(("tool.result", {"source": "otel", "otel": f"t{i}:{n}", "tool": "Bash",
                                            "success": True, "duration_ms": 40}))
        out.append(("turn.waiting", {"reason": "idle", "hook": "Stop"}))
        out.append(("usage", {"source": "transcript", "ledger": "claude-s", "n": turn + 1, "api_calls": 50,
                              "input_tokens": 1725, "output_tokens": 10000, "cache_read_input_tokens": 250000,
                              "cache_creation_input_tokens": 15000, "cost_usd": 0.285}))
        out.append(("input.sent", {"text": "go on", "chars": 5}))
    out.append(("agent.exited", {"exit_code": 0, "signal": None}))
    return out


def _seed(home: Path) -> list[str]:
    from zen.core.events import Actor
    from zen.core.model import Task
    from zen.store.events import append_many
    from zen.store.jobs import JobStore
    from zen.store.layout import Home

    store = JobStore(Home(home))
    ids = []
    for i in range(JOBS):
        job = f"20261201T0000{i:02d}Z-bench-{i:04x}"
        store.create(Task(id=job, name=f"bench-{i}", prompt="p", lane=f"lane{i % 4}", agent="claude",
                          created_at="2026-12-01T00:00:00.000Z"))
        append_many(store.dir(job), job, [(t, Actor.SUPERVISOR, f) for t, f in _events(i)])
        store.snapshot(job)
        ids.append(job)
    return ids


def _fleet_rows(home: Path, ids: list[str]) -> list[dict]:
    from zen.observe import snapshot
    from zen.observe.report import fleet_report
    from zen.store.events import read_from
    from zen.store.layout import Home

    h = Home(home)
    parse, cold, warm = [], [], []
    for _ in range(RUNS):
        t0 = time.perf_counter()
        for job in ids:
            with h.job(job).events.open("rb") as f:
                for line in f:
                    json.loads(line)
        parse.append(time.perf_counter() - t0)
        for job in ids:
            h.job(job).metrics.unlink(missing_ok=True)
        t0 = time.perf_counter()
        report = fleet_report(h)
        cold.append(time.perf_counter() - t0)
        for job in ids:
            snapshot.refresh(h.job(job).dir, job)
        t0 = time.perf_counter()
        report = fleet_report(h, by="lane")
        warm.append(time.perf_counter() - t0)
    assert report.total["api_calls"] == JOBS * CALLS, report.total["api_calls"]
    events = sum(len(read_from(h.job(j).events, 0)[0]) for j in ids)
    note = f"{events} events; parsing their JSON alone: {p50(parse) * 1000:.0f} ms"
    return [
        row(f"fleet metrics, {JOBS} jobs x {CALLS:,} API calls, from metrics.json", p50(warm), "s", "<= 1",
            p50(warm) <= 1.0, f"{p50(warm) / p50(parse):.2f}x parsing the timelines; {note}"),
        row(f"fleet metrics, {JOBS} jobs x {CALLS:,} API calls, cold / parsing the timelines", p50(cold) / p50(parse),
            "x", "<= 3", p50(cold) / p50(parse) <= 3.0, f"cold {p50(cold):.2f} s (every timeline folded); {note}"),
    ]


def _batch(n0: int) -> bytes:
    recs = []
    for k in range(BATCH):
        n = n0 + k
        recs.append({"timeUnixNano": str(1764410400000000000 + n), "body": {"stringValue": "claude_code.api_request"},
                     "attributes": [{"key": a, "value": {"stringValue": str(v)}} for a, v in (
                         ("event.name", "api_request"), ("session.id", "s"), ("event.sequence", n),
                         ("model", "claude-sonnet-4-5-20250929"), ("input_tokens", 12), ("output_tokens", 300),
                         ("cache_read_tokens", 4000), ("cache_creation_tokens", 100), ("cost_usd", 0.0057),
                         ("duration_ms", 1500))]})
    return json.dumps({"resourceLogs": [{"resource": {"attributes": [
        {"key": "service.name", "value": {"stringValue": "claude-code"}},
        {"key": "zen.job", "value": {"stringValue": "ingest"}}]},
        "scopeLogs": [{"logRecords": recs}]}]}).encode()


def _ingest_rows(tmp: Path) -> list[dict]:
    from zen.observe.ingest import Ingest
    from zen.store.events import append
    from zen.store.layout import Home

    home = Home(tmp / "ih")
    (home.jobs / "ingest").mkdir(parents=True)
    append(home.job("ingest").dir, "ingest", "task.received", task={})
    ingest = Ingest(home)
    raw = tmp / "raw.jsonl"
    base, ours = [], []
    for r in range(RUNS * 4):
        body = _batch(r * BATCH)
        t0 = time.perf_counter()
        json.loads(body)
        fd = os.open(raw, os.O_WRONLY | os.O_APPEND | os.O_CREAT)
        os.write(fd, body + b"\n")
        os.fsync(fd)
        os.close(fd)
        base.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        got = ingest.payload(json.loads(body))
        ours.append(time.perf_counter() - t0)
        assert got.accepted == BATCH
    ratio = p50(ours) / p50(base)
    served = _served(home, RUNS * 4)
    http = p50(served) / p50(base)
    return [row(f"OTLP ingest of one batch ({BATCH} api_request records) / decode + fsynced append", ratio, "x",
                "<= 5", ratio <= 5.0, f"ingest {p50(ours) * 1000:.1f} ms per batch "
                f"({BATCH / p50(ours):.0f} records/s), baseline {p50(base) * 1000:.1f} ms"),
            row("the same batch POSTed to the supervisor's receiver (loopback HTTP, token checked) / "
                "decode + fsynced append", http, "x", "<= 8", http <= 8.0,
                f"{p50(served) * 1000:.1f} ms per batch, answered after the fsync")]


def _served(home: Any, runs: int) -> list[float]:
    """POST /v1/logs to a running receiver, one batch at a time, as an exporter does."""
    import httpx

    from zen.observe import telemetry
    from zen.observe.receiver import Receiver

    home.control.mkdir(parents=True, exist_ok=True)
    out = []
    with Receiver(home) as rx, httpx.Client() as client:
        url = f"http://127.0.0.1:{rx.port}/v1/logs"
        headers = {"Content-Type": "application/json",
                   "Authorization": f"Bearer {telemetry.job_token(rx.secret, 'ingest')}"}
        for r in range(runs):
            body = _batch((1000 + r) * BATCH)
            t0 = time.perf_counter()
            got = client.post(url, content=body, headers=headers)
            out.append(time.perf_counter() - t0)
            assert got.status_code == 200, got.text
    return out


def run() -> list[dict]:
    with tempfile.TemporaryDirectory(prefix="zbm") as tmp:
        home = Path(tmp) / "home"
        (home / "jobs").mkdir(parents=True)
        (home / "zen.yaml").write_text("zen: 1\n")
        ids = _seed(home)
        return _fleet_rows(home, ids) + _ingest_rows(Path(tmp))


if __name__ == "__main__":
    from bench.run import print_rows

    print_rows(run())

"""OTLP payloads into the jobs' timelines: per job, each record once (a retried batch, or the same
batch after a restart of the receiver, adds nothing), records of unknown jobs left out, every line
valid against the event catalogue, and the metrics of the job exactly the corpus's figures."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.observe.test_golden import CORPUS, EXPECTED, assert_figures
from zen.core.events import validate
from zen.observe import snapshot
from zen.observe.ingest import Ingest
from zen.observe.metrics import figures
from zen.store import events
from zen.store.layout import Home


def _home(tmp_path: Path, *jobs: str) -> Home:
    home = Home(tmp_path / "zh")
    for job in jobs:
        d = home.job(job).dir
        d.mkdir(parents=True)
        events.append(d, job, "task.received", task={"name": job, "agent": "claude", "lane": "app"})
    return home


def _payload(name: str) -> object:
    return json.loads((CORPUS / "otlp" / name).read_bytes())


def test_batches_reach_their_jobs_once(tmp_path: Path) -> None:
    home = _home(tmp_path, "J1")             # J2 has no record here: its records are left out
    ingest = Ingest(home)
    first = ingest.payload(_payload("batch1.json"))
    assert (first.accepted, first.duplicates) == (4, 0)          # 2 calls, 1 tool, 1 error; prompt ignored
    second = ingest.payload(_payload("batch2.json"))
    assert (second.accepted, second.duplicates) == (1, 1)       # record 4 again, record 6 new
    assert second.ignored >= 1                                   # J2's record
    again = Ingest(home).payload(_payload("batch2.json"))        # after a restart: still once
    assert again.accepted == 0 and again.duplicates == 2
    evs = list(events.read_events(home.job("J1").events))
    assert [e["seq"] for e in evs] == list(range(1, len(evs) + 1))
    assert all(validate(e) == [] for e in evs), [validate(e) for e in evs]
    assert {e["actor"] for e in evs[1:]} == {"telemetry"}
    got = figures([snapshot.current(home.job("J1").dir, "J1")])
    want = EXPECTED["otlp"]["J1"]
    assert_figures(got, want)
    assert got["tool_calls"] == want["tool_calls"]
    assert got["api_latency_ms"]["count"] == len(want["api_ms"])
    assert got["unpriced_models"] == [""]                        # record 6 named no model


@pytest.mark.parametrize("body", [{}, [], {"resourceLogs": "x"}, {"resourceLogs": [{"scopeLogs": [None]}]}])
def test_odd_payloads_are_ignored_not_fatal(tmp_path: Path, body: object) -> None:
    got = Ingest(_home(tmp_path, "J1")).payload(body)
    assert got.accepted == 0

"""The dashboard's Metrics tab, `zen metrics` and `zen status` are one fold (issue 34): on a recorded fleet
(sim jobs run by a real supervisor to the end, their timelines written by the real code), the
figures the tab reads over HTTP are those of `zen metrics --json`, in total and per job.

They were not: the tab counted by its own rules (only Write/Edit as file writes, the guardian's
denials as tool calls, the fleet turn p50 as the median of the jobs' medians)."""

from __future__ import annotations

import json
from typing import Any

from tests.server.served import Served

EDITS: list[dict[str, Any]] = [
    {"say": "Editing."},
    {"write": {"path": "a.txt", "content": "a\n"}},
    {"bash": "cat a.txt > b.txt && sed -i s/a/b/ b.txt && rm -f b.txt"},
    {"say": "Done."},
]
ASKS: list[dict[str, Any]] = [
    {"say": "Reading first."},
    {"ask": "Which port?"},
    {"write": {"path": "port.txt", "content": "8080\n"}},
    {"sleep": 0.4},
    {"exit": 0},
]
DENIED: list[dict[str, Any]] = [
    {"bash": "cat ~/.ssh/id_rsa"},
    {"write": {"path": "d.txt", "content": "d\n"}},
    {"exit": 0},
]
NOT_FIGURES = {"scope", "since", "until", "job", "state", "name", "lane_name", "agent", "domain", "models",
               "reconciliation", "limits", "tasks_queued", "active_sessions", "tasks_in_progress"}


def _cli(served: Served, *args: str) -> dict[str, Any]:
    return dict(json.loads(served.zen_ok("metrics", *args, "--json")))


def _same(dashboard: dict[str, Any], cli: dict[str, Any]) -> None:
    for key, value in cli.items():
        if key not in NOT_FIGURES:
            assert dashboard[key] == value, (key, dashboard[key], value)


def test_the_metrics_tab_shows_what_zen_metrics_says(served: Served) -> None:
    edits = served.dispatch_sim("edits", EDITS)
    asks = served.dispatch_sim("asks", ASKS)
    denied = served.dispatch_sim("denied", DENIED)
    served.wait_state(asks, "waiting")
    r = served.call("POST", f"/api/v1/agent/sessions/{asks}/input", json={"text": "8080"})
    assert r.status_code == 200, r.text
    for job in (edits, asks, denied):
        served.wait_state(job, "harvested", timeout=60)

    fleet = served.get("/api/v1/agent/metrics").json()
    cli = _cli(served)
    _same(fleet["total"], cli)
    assert fleet["active_sessions"] == cli["active_sessions"] == 0
    assert fleet["tasks_in_progress"] == cli["tasks_in_progress"]
    rows = {row["job"]: row for row in fleet["jobs"]}
    for job in (edits, asks, denied):
        one = _cli(served, job)
        _same(served.get(f"/api/v1/agent/sessions/{job}/metrics").json(), one)
        _same(rows[job], one)

    # zen status's usage line is the same fold's headline of the fleet
    status = json.loads(served.zen_ok("status", "--json"))
    tokens = sum(cli[k] for k in ("input_tokens", "output_tokens", "cache_read_input_tokens",
                                  "cache_creation_input_tokens"))
    assert status["usage"] == {"tokens": tokens, "cost_usd": cli["cost_usd"], "api_calls": cli["api_calls"],
                               "api_errors": cli["api_errors"]}

    # the figures are what the jobs did, not two equal wrongs: a shell command's writes count
    # (the redirection and sed -i), a denied call is no tool call that ran, and the fleet's
    # turn latency is over every turn of every job
    e = rows[edits]
    assert (e["file_reads"], e["file_writes"], e["file_deletes"]) == (1, 3, 1)
    assert e["file_operations"] == {"read": 1, "write": 3, "delete": 1}
    d = rows[denied]
    assert d["guard_denied"] >= 1 and d["tool_calls"] == d["guard_allowed"] == 1
    t = fleet["total"]
    assert t["file_writes"] == sum(row["file_writes"] for row in rows.values())
    assert t["turn_latency_ms"]["count"] == t["turns"] == sum(row["turns"] for row in rows.values())
    assert t["turn_latency_p50_s"] == cli["turn_latency_ms"]["p50"] / 1000.0

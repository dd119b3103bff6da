"""`zen metrics` on a real home: a sim job run by a real supervisor, no telemetry at all, so the
figures come from what zen saw itself (guard decisions, turns, wall time) and the sim's
Claude-shaped transcript; metrics.json is published, rebuilt by `zen doctor --rebuild`, and
compacted by `zen gc`; `zen show` and `zen status` carry the headline."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.helpers import zen, zen_json
from tests.supervisor.util import dispatch_sim, wait_state

SCRIPT: list[dict[str, Any]] = [
    {"say": "Looking at the code."},
    {"write": {"path": "notes.md", "content": "plan\n"}},
    {"bash": "cat notes.md > copy.md && rm -f copy.md"},
    {"say": "Done."},
]


def _run(zh: Path, tmp: Path, name: str = "metered") -> str:
    job = dispatch_sim(zh, tmp, name, SCRIPT)
    wait_state(zh, job, "harvested", timeout=60)
    return job


def test_metrics_of_a_job_with_no_telemetry(zh: Path, sup: Any, tmp_path: Path) -> None:
    job = _run(zh, tmp_path)
    m = zen_json("metrics", job)
    assert m["scope"] == "job" and m["job"] == job and m["state"] == "harvested"
    # the sim's transcript: two assistant messages, each one API call with usage
    assert m["api_calls"] == 2 and m["api_errors"] == 0 and m["input_tokens"] > 0
    assert m["usage_sources"]["transcript_or_rollout"] == 1
    # what zen saw itself: the Write and the Bash call the guardian let through
    assert m["guard"] == {"allowed": 2, "denied": 0} and m["tool_calls"] == 2
    assert m["file_operations"] == {"read": 1, "write": 2, "delete": 1}
    assert m["turns"] >= 1 and m["turn_latency_ms"]["count"] == m["turns"]
    assert m["wall_time_s"] > 0
    for name in ("api_calls", "api_errors", "input_tokens", "output_tokens", "cache_read_input_tokens",
                 "cache_creation_input_tokens", "cost_usd", "tool_calls", "turns"):
        assert name in m
    text = zen("metrics", job)
    assert text.returncode == 0 and "files       read 1  write 2  delete 1" in text.stdout


def test_fleet_figures_lanes_windows_and_the_published_snapshot(zh: Path, sup: Any, tmp_path: Path) -> None:
    a, b = _run(zh, tmp_path, "one"), _run(zh, tmp_path, "two")
    fleet = zen_json("metrics")
    assert fleet["scope"] == "fleet" and fleet["jobs"] == 2 and fleet["api_calls"] == 4
    assert fleet["active_sessions"] == 0 and fleet["tasks_in_progress"] == 0
    by = zen_json("metrics", "--by", "lane")
    assert by["groups"]["app"]["api_calls"] == 4
    assert zen_json("metrics", "--lane", "app", "--since", "1h")["api_calls"] == 4
    assert zen_json("metrics", "--lane", "nope")["jobs"] == 0
    # the supervisor published each job's metrics.json; a rebuild from the timeline gives the
    # same figures, folded up to the timeline's last event
    published = json.loads((zh / "jobs" / a / "metrics.json").read_text())
    assert published["job"] == a and published["seq"] > 0
    before = zen_json("metrics", a)
    (zh / "jobs" / a / "metrics.json").write_text("{garbled")
    assert zen("doctor", "--rebuild").returncode == 0
    rebuilt = json.loads((zh / "jobs" / a / "metrics.json").read_text())
    assert rebuilt["seq"] == zen_json("log", a)["events"][-1]["seq"]
    assert zen_json("metrics", a) | {"until": None} == before | {"until": None}
    # zen show and zen status carry the headline figures
    show = zen("show", b).stdout
    assert "usage    " in show and "2 API calls, 0 errors" in show
    assert zen_json("show", b)["metrics"]["api_calls"] == 2
    status = zen_json("status")
    assert status["usage"]["api_calls"] == 4 and status["usage"]["cost_usd"] > 0
    assert "usage: " in zen("status").stdout


def test_gc_compacts_history_past_the_retention_and_keeps_totals(zh: Path, sup: Any, tmp_path: Path) -> None:
    job = _run(zh, tmp_path)
    before = zen_json("metrics", job)
    cfg = zh / "zen.yaml"
    cfg.write_text(cfg.read_text().replace("history_retention: 7d", "history_retention: 0s"))
    r = zen("gc", "--json")
    assert r.returncode == 0, r.stderr
    [entry] = [e for e in json.loads(r.stdout) if e["job"] == job]
    assert entry["history_compacted"] >= 1 and entry["ledgers_removed"] is True
    after = zen_json("metrics", job)
    for k in ("api_calls", "input_tokens", "cost_usd", "file_operations", "guard", "turns"):
        assert after[k] == before[k], k
    assert after["turn_latency_ms"]["count"] == 0           # the samples went, the totals stayed
    assert zen_json("metrics", job, "--since", "1h")["api_calls"] == 0
    assert not (zh / "jobs" / job / "observe").exists()


def test_bad_options_say_so_in_one_line(zh: Path) -> None:
    for args, words in ((["--since", "soon"], "--since"), (["--by", "color"], "--by"),
                        (["nosuchjob"], "nosuchjob")):
        r = zen("metrics", *args)
        assert r.returncode in (1, 2) and words in r.stderr and "Traceback" not in r.stderr
        assert len(r.stderr.strip().splitlines()) == 1


def test_metrics_of_an_agent_with_no_telemetry_and_no_transcript(zh: Path, sup: Any) -> None:
    """A `cmd` agent reports nothing itself: the figures are what zen saw (its turns, its wall
    time), and the job counts in the fleet, with no API figures invented."""
    # it waits 1.5 s for a line that does not come (bash's read -t): a turn that ends waiting (a
    # silent sleep would be work, tests/supervisor/test_asleep.py)
    r = zen("dispatch", "quiet work", "--agent", "cmd", "--cmd",
            "sh -c 'echo working; bash -c \"read -t 1.5 x\"; echo done'", "--lane", "app", "--json")
    assert r.returncode == 0, r.stderr
    job = json.loads(r.stdout)["id"]
    wait_state(zh, job, "harvested", timeout=60)
    m = zen_json("metrics", job)
    assert m["usage_sources"] == {"otel": 0, "transcript_or_rollout": 0, "none": 1}
    assert m["api_calls"] == 0 and m["cost_usd"] == 0 and m["api_latency_ms"]["count"] == 0
    assert m["wall_time_s"] >= 1.5 and m["turns"] >= 1
    assert "reconciliation" not in m and "limits" not in m
    assert zen_json("metrics")["jobs"] == 1
    text = zen("metrics", job)
    assert text.returncode == 0 and "Traceback" not in text.stderr

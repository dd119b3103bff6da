"""Reading token usage and cost from a Claude Code transcript: each API response counted once."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from zen.agents import usage
from zen.store import events

pytestmark = pytest.mark.claude

PRICES = {"default": {"input": 3.0, "output": 15.0, "cache_write": 3.75, "cache_read": 0.30},
          "claude-haiku": {"input": 1.0, "output": 5.0, "cache_write": 1.25, "cache_read": 0.10}}


def _line(msg_id: str, req: str, model: str = "claude-sonnet-4-5", **tokens: int) -> str:
    u = {"input_tokens": 10, "output_tokens": 5, "cache_creation_input_tokens": 100,
         "cache_read_input_tokens": 1000, **tokens}
    return json.dumps({"type": "assistant", "requestId": req, "uuid": f"u-{msg_id}-{len(tokens)}",
                       "message": {"id": msg_id, "model": model, "role": "assistant",
                                   "content": [{"type": "text", "text": "x"}], "usage": u}})


def test_each_response_counts_once_even_when_split_over_lines() -> None:
    lines = [
        json.dumps({"type": "user", "message": {"role": "user", "content": "hi"}}),
        _line("msg_1", "req_1", output_tokens=1),     # written mid-stream
        _line("msg_1", "req_1"),                      # same response, next content block
        _line("msg_2", "req_2"),
        '{"type": "assistant", "message": {"id": "msg_3", "usa',   # torn last line
    ]
    totals = usage.summarize(lines, PRICES)
    assert totals["messages"] == 2
    assert totals["input_tokens"] == 20 and totals["output_tokens"] == 10
    assert totals["cache_creation_input_tokens"] == 200 and totals["cache_read_input_tokens"] == 2000
    assert totals["cost_usd"] == pytest.approx((20 * 3 + 10 * 15 + 200 * 3.75 + 2000 * 0.3) / 1e6)
    assert totals["model"] == "claude-sonnet-4-5"


def test_prices_by_model_name_prefix_else_default_and_errors_cost_nothing() -> None:
    lines = [_line("m1", "r1", model="claude-haiku-4-5", cache_creation_input_tokens=0,
                   cache_read_input_tokens=0),
             json.dumps({"type": "assistant", "isApiErrorMessage": True,
                         "message": {"id": "m2", "model": "<synthetic>", "usage": {"input_tokens": 99}}})]
    totals = usage.summarize(lines, PRICES)
    assert totals["messages"] == 1
    assert totals["cost_usd"] == pytest.approx((10 * 1.0 + 5 * 5.0) / 1e6)
    assert usage.price_for("gpt-x", PRICES) == PRICES["default"]


def test_record_appends_deltas_so_the_timeline_sums_to_the_transcript(tmp_path: Path) -> None:
    home = tmp_path / "zh"
    job_dir = home / "jobs" / "j1"
    job_dir.mkdir(parents=True)
    (home / "zen.yaml").write_text("zen: 1\nprices:\n  default: {input: 3.0, output: 15.0, "
                                   "cache_write: 3.75, cache_read: 0.3}\n")
    events.append(job_dir, "j1", "task.received")
    transcript = tmp_path / "t.jsonl"
    transcript.write_text(_line("m1", "r1") + "\n")
    first = usage.record(job_dir, "j1", str(transcript))
    assert first is not None and first["input_tokens"] == 10
    assert usage.record(job_dir, "j1", str(transcript)) is None      # nothing new: no event
    with transcript.open("a") as f:
        f.write(_line("m1", "r1") + "\n" + _line("m2", "r2", input_tokens=7) + "\n")
    second = usage.record(job_dir, "j1", str(transcript))
    assert second is not None and second["input_tokens"] == 7 and second["output_tokens"] == 5
    evs = [e for e in events.read_events(job_dir / "events.jsonl") if e["type"] == "usage"]
    assert sum(e["input_tokens"] for e in evs) == 17
    assert sum(e["cost_usd"] for e in evs) == pytest.approx(
        usage.summarize(transcript.read_text().splitlines(), PRICES)["cost_usd"])
    assert usage.record(job_dir, "j1", str(tmp_path / "missing.jsonl")) is None


def test_zen_hook_stop_records_turn_waiting_then_usage_from_the_transcript(home: Path, tmp_path: Path) -> None:
    from tests.helpers import zen

    job_dir = home / "jobs" / "j2"
    job_dir.mkdir(parents=True)
    events.append(job_dir, "j2", "task.received")
    transcript = tmp_path / "t.jsonl"
    transcript.write_text(_line("m1", "r1") + "\n" + _line("m1", "r1") + "\n")
    payload = json.dumps({"hook_event_name": "Stop", "transcript_path": str(transcript),
                          "last_assistant_message": "Done."})
    env = {"ZEN_HOME": str(home), "ZEN_JOB_ID": "j2"}
    assert zen("hook", "Stop", input=payload, env=env).returncode == 0
    assert zen("hook", "SessionEnd", input=payload.replace('"Stop"', '"SessionEnd"'), env=env).returncode == 0
    evs = list(events.read_events(job_dir / "events.jsonl"))
    types = [e["type"] for e in evs]
    assert types[:3] == ["task.received", "turn.waiting", "usage"]
    used = [e for e in evs if e["type"] == "usage"]
    assert len(used) == 1       # SessionEnd found nothing new
    assert used[0]["input_tokens"] == 10 and used[0]["cost_usd"] > 0
    assert used[0]["model"] == "claude-sonnet-4-5"


def test_record_waits_for_the_turns_last_message_to_reach_the_transcript(tmp_path: Path) -> None:
    """Claude Code writes the transcript asynchronously; at Stop the last answer may still be on
    its way. record() waits (briefly) for the message Stop reported."""
    import threading

    job_dir = tmp_path / "zh" / "jobs" / "j3"
    job_dir.mkdir(parents=True)
    events.append(job_dir, "j3", "task.received")
    transcript = tmp_path / "t.jsonl"
    transcript.write_text(_line("m1", "r1") + "\n")
    late = json.loads(_line("m2", "r2"))
    late["message"]["content"] = [{"type": "text", "text": "All done."}]

    def write_late() -> None:
        with transcript.open("a") as f:
            f.write(json.dumps(late) + "\n")

    timer = threading.Timer(0.4, write_late)
    timer.start()
    try:
        ev = usage.record(job_dir, "j3", str(transcript), last_message="All done.")
    finally:
        timer.join()
    assert ev is not None and ev["input_tokens"] == 20     # both responses, in one event

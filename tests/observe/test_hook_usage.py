"""The Stop / SessionEnd hooks record usage from Claude Code's transcript, once per response."""

from __future__ import annotations

import json
from pathlib import Path

from zen.store import events


def _line(msg_id: str, req: str, model: str = "claude-sonnet-4-5", **tokens: int) -> str:
    u = {"input_tokens": 10, "output_tokens": 5, "cache_creation_input_tokens": 100,
         "cache_read_input_tokens": 1000, **tokens}
    return json.dumps({"type": "assistant", "requestId": req, "uuid": f"u-{msg_id}-{len(tokens)}",
                       "message": {"id": msg_id, "model": model, "role": "assistant",
                                   "content": [{"type": "text", "text": "x"}], "usage": u}})

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
    assert used[0]["model"] == "claude-sonnet-4-5" and used[0]["api_calls"] == 1


def test_stop_failure_says_at_once_that_an_api_error_ended_the_turn(home: Path, tmp_path: Path) -> None:
    """Claude Code fires StopFailure instead of Stop when an API error ends the turn: the job is
    waiting now, with the error, and the usage of the calls that went through is recorded."""
    from tests.helpers import zen

    job_dir = home / "jobs" / "j4"
    job_dir.mkdir(parents=True)
    events.append(job_dir, "j4", "task.received")
    transcript = tmp_path / "t.jsonl"
    transcript.write_text(_line("m1", "r1") + "\n")
    payload = json.dumps({"hook_event_name": "StopFailure", "transcript_path": str(transcript),
                          "error": "overloaded", "error_details": "529 Overloaded",
                          "last_assistant_message": "API Error: 529 Overloaded"})
    env = {"ZEN_HOME": str(home), "ZEN_JOB_ID": "j4"}
    assert zen("hook", "StopFailure", input=payload, env=env).returncode == 0
    # the idle prompt Claude Code notifies a minute later says nothing new
    idle = json.dumps({"hook_event_name": "Notification", "notification_type": "idle_prompt"})
    assert zen("hook", "Notification", input=idle, env=env).returncode == 0
    evs = list(events.read_events(job_dir / "events.jsonl"))
    assert [e["type"] for e in evs] == ["task.received", "turn.waiting", "usage"]
    waiting = evs[1]
    assert (waiting["reason"], waiting["hook"], waiting["error"], waiting["actor"]) == (
        "idle", "StopFailure", "overloaded", "hook")
    assert evs[2]["api_calls"] == 1


def test_stop_waits_for_the_turns_last_message_to_reach_the_transcript(home: Path, tmp_path: Path) -> None:
    """Claude Code writes the transcript asynchronously; at Stop the last answer may still be on
    its way. The hook waits (briefly) for the message Stop reported."""
    import threading

    from tests.helpers import zen

    job_dir = home / "jobs" / "j3"
    job_dir.mkdir(parents=True)
    events.append(job_dir, "j3", "task.received")
    transcript = tmp_path / "t.jsonl"
    transcript.write_text(_line("m1", "r1") + "\n")
    late = json.loads(_line("m2", "r2"))
    late["message"]["content"] = [{"type": "text", "text": "All done."}]

    def write_late() -> None:
        with transcript.open("a") as f:
            f.write(json.dumps(late) + "\n")

    payload = json.dumps({"hook_event_name": "Stop", "transcript_path": str(transcript),
                          "last_assistant_message": "All done."})
    timer = threading.Timer(0.4, write_late)
    timer.start()
    try:
        r = zen("hook", "Stop", input=payload, env={"ZEN_HOME": str(home), "ZEN_JOB_ID": "j3"})
    finally:
        timer.join()
    assert r.returncode == 0
    used = [e for e in events.read_events(job_dir / "events.jsonl") if e["type"] == "usage"]
    assert len(used) == 1 and used[0]["input_tokens"] == 20 and used[0]["api_calls"] == 2

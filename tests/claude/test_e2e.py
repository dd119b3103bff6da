"""zen with the real Claude Code in tmux in a worktree, driven as a user would drive it, against the
scripted Messages API on loopback."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.claude.fakeapi import FakeAPI, bash, text
from tests.claude.zenrun import Job, dispatch, supervisor, transcript_of
from tests.helpers import wait_until, zen

pytestmark = pytest.mark.claude

# A turn ends when Claude Code's Stop hook reaches zen: well under the 2 s idle fallback
HOOK_LATENCY_S = 1.5


@pytest.fixture
def running(claude_lane: Path, claude_home: Path, tmp_path: Path) -> Iterator[Path]:
    """A zen home with lane 'app' trusted by Claude Code and `zen supervise` running."""
    with supervisor(claude_home, tmp_path / "supervisor.log"):
        yield claude_home


def _ts(ev: dict) -> float:
    from datetime import datetime

    return datetime.fromisoformat(ev["ts"].replace("Z", "+00:00")).timestamp()


def test_stop_hook_ends_the_turn_and_zen_send_starts_the_next(running: Path, api: FakeAPI) -> None:
    api.script = [text("First turn done."), text("Second turn done.")]
    job = Job(running, dispatch("Say something", "--lane", "app", "--name", "turns"))

    job.wait_event("agent.spawned", timeout=60)
    first_waiting = job.wait_event("turn.waiting", timeout=90, actor="hook")
    assert first_waiting["reason"] == "idle"
    assert job.state()["state"] == "waiting"
    # the Stop hook, not the output-idle fallback, ended the turn, soon after the last answer
    latency = _ts(first_waiting) - api.script_requests()[-1].at
    print(f"turn.waiting {latency:.2f}s after the turn's last API answer")
    assert latency < HOOK_LATENCY_S

    r = zen("send", job.id, "Now the second turn, please.")
    assert r.returncode == 0, r.stderr
    sent = job.wait_event("input.sent", after_seq=first_waiting["seq"], timeout=30)
    working = job.wait_event("turn.working", after_seq=sent["seq"], timeout=60, actor="hook")
    again = job.wait_event("turn.waiting", after_seq=working["seq"], timeout=60, actor="hook")
    assert again["reason"] == "idle"
    # the stand-in got the typed text as a new user turn, and answered it
    wait_until(lambda: api.answered() == 2, timeout=10, message="both scripted steps answered")
    last_user = api.script_requests()[-1].messages[-1]
    assert "Now the second turn, please." in str(last_user["content"])


def test_usage_and_cost_reach_the_timeline_once_per_message(running: Path, api: FakeAPI) -> None:
    u = {"input_tokens": 1000, "output_tokens": 200, "cache_creation_input_tokens": 3000,
         "cache_read_input_tokens": 10000}
    api.script = [bash("echo a > a.txt", usage=u), text("Done.", usage=u), text("Again.", usage=u)]
    job = Job(running, dispatch("Usage please", "--lane", "app", "--name", "usage"))
    first = job.wait_event("usage", timeout=90)
    # two responses in the first turn, each counted once even though the transcript repeats them
    assert first["input_tokens"] == 2000 and first["output_tokens"] == 400
    assert first["cache_creation_input_tokens"] == 6000 and first["cache_read_input_tokens"] == 20000
    # zen.yaml default prices: 3 / 15 / 3.75 / 0.30 USD per million tokens
    per_msg = (1000 * 3 + 200 * 15 + 3000 * 3.75 + 10000 * 0.30) / 1e6
    assert first["cost_usd"] == pytest.approx(2 * per_msg)
    assert first["model"]

    waiting = job.wait_event("turn.waiting", timeout=30, actor="hook")
    assert zen("send", job.id, "once more").returncode == 0
    second = job.wait_event("usage", after_seq=max(first["seq"], waiting["seq"]), timeout=60)
    assert second["input_tokens"] == 1000 and second["cost_usd"] == pytest.approx(per_msg)

    state = job.state()
    usage = state.get("usage") or {}
    assert usage.get("input_tokens") == 3000
    assert usage.get("cost_usd") == pytest.approx(3 * per_msg)
    transcript = transcript_of(job)
    assert transcript is not None and transcript.is_file()

"""zen with the real Gemini CLI in tmux in a worktree, driven as a user would drive it, against
the scripted Gemini API on loopback."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.agents.realagent import Job, agent_home, dispatch, stays_waiting, supervisor
from tests.gemini.fakeapi import GeminiAPI, say, shell, tool, user_texts
from tests.helpers import git, wait_until, zen

pytestmark = pytest.mark.agents


@pytest.fixture
def running(gemini_lane: Path, gemini_home: Path, tmp_path: Path) -> Iterator[Path]:
    with supervisor(gemini_home, tmp_path / "supervisor.log"):
        yield gemini_home


def gemini_job(home: Path, prompt: str, name: str, lane: str = "app") -> Job:
    return Job(home, dispatch("gemini", prompt, "--lane", lane, "--name", name))


def test_guardian_denies_rm_rf_home_the_written_file_is_harvested_and_usage_is_shown(
        gemini_lane: Path, gemini_home: Path, api: GeminiAPI, isolated_env: Path, tmp_path: Path,
        needs_gemini: Path) -> None:
    # edits run without Gemini's own prompt (auto_edit); zen's guardian still sees every call
    agent_home(gemini_home, "gemini", str(needs_gemini), approval_mode="auto_edit")
    keep = isolated_env / "keep.txt"
    keep.write_text("the user's own file\n")
    u = {"input_tokens": 1000, "cached_tokens": 400, "output_tokens": 50, "reasoning_tokens": 10}
    api.script = [shell("rm -rf ~", usage=u), tool("write_file", file_path="{cwd}/out.txt", content="hello\n", usage=u),
                  say("All done.", usage=u)]
    with supervisor(gemini_home, tmp_path / "supervisor.log"):
        job = gemini_job(gemini_home, "Tidy up and greet", "guarded")
        job.wait_event("turn.waiting", timeout=90, reason="idle")
        # the first turn.waiting can be Gemini CLI's start-up silence before its first call (a loaded
        # machine): the calls may still be on their way, so wait for them as long as for a turn
        denied = job.wait_event("guard.denied", timeout=90)
        assert "rm -rf ~" in str(denied) and denied.get("rule"), denied
        assert keep.read_text() == "the user's own file\n"
        allowed = job.wait_event("guard.allowed", timeout=90)
        assert "out.txt" in str(allowed)
        told = api.output_for(0)
        assert told is not None and "zen guardian" in told, told

        assert zen("harvest", job.id).returncode == 0, job.explain()
        assert git(gemini_lane, "show", f"zen/review/{job.id}:out.txt") == "hello"
        assert git(gemini_lane, "status", "--porcelain") == ""

        used = job.wait_event("usage", timeout=20)
        assert used["input_tokens"] == 3 * 600 and used["cache_read_input_tokens"] == 3 * 400
        assert used["output_tokens"] == 3 * 60 and used["api_calls"] == 3
        assert used["source"] == "chat" and Path(used["chat"]).name.startswith("session-")
        shown = zen("show", job.id)
        assert shown.returncode == 0 and "input_tokens=1800" in shown.stdout, shown.stdout
        # the user's settings file is as it was; zen's hooks live in the job's own Gemini home
        assert "zen" not in (isolated_env / ".gemini" / "settings.json").read_text()


def test_a_turn_ends_waiting_stays_so_send_starts_the_next_and_finish_exits_0(running: Path, api: GeminiAPI) -> None:
    api.script = [say("First turn done."), say("Second turn done.")]
    job = gemini_job(running, "Say something", "turns")
    first = job.wait_event("turn.waiting", timeout=90, reason="idle")
    assert job.state()["state"] == "waiting"
    stays_waiting(job, first["seq"], 8)

    assert zen("send", job.id, "Now the second turn, please.").returncode == 0
    sent = job.wait_event("input.sent", after_seq=first["seq"], timeout=30)
    working = job.wait_event("turn.working", after_seq=sent["seq"], timeout=30)
    job.wait_event("turn.waiting", after_seq=working["seq"], timeout=60, reason="idle")
    try:
        wait_until(lambda: api.answered() == 2, timeout=10, message="both scripted steps answered")
    except AssertionError:
        raise AssertionError(f"{[(r.kind, r.step, user_texts(r.body)[-1:]) for r in api.requests]}") from None
    assert "Now the second turn, please." in user_texts(api.script_requests()[-1].body)

    r = zen("finish", job.id)
    assert r.returncode == 0, r.stderr + job.explain()
    exited = job.wait_event("agent.exited", timeout=60)
    assert exited["exit_code"] == 0 and not exited.get("signal"), exited
    wait_until(lambda: job.state()["state"] in ("exited", "harvested"), timeout=30, message="the job to end")


def test_gemini_own_approval_prompt_shows_as_waiting_for_approval(running: Path, api: GeminiAPI) -> None:
    api.script = [shell("echo hi > marker.txt"), say("Done.")]
    job = gemini_job(running, "Write a marker", "asks")
    approval = job.wait_event("turn.waiting", timeout=90, reason="approval")
    assert job.state()["reason"] == "approval"
    assert "Allow execution" in job.screen()
    assert job.of("guard.allowed")
    stays_waiting(job, approval["seq"], 5)
    assert not (running / "worktrees" / job.id / "marker.txt").exists()
    assert zen("cancel", job.id).returncode == 0
    job.wait_event("agent.exited", timeout=60)


def test_untrusted_lane_waits_at_the_trust_screen_and_zen_lane_trust_fixes_it(
        gemini_home: Path, untrusted_repo: Path, api: GeminiAPI, tmp_path: Path, isolated_env: Path) -> None:
    r = zen("lane", "add", "fresh", str(untrusted_repo))
    assert r.returncode == 0 and "Gemini CLI" in r.stderr, r.stderr
    api.script = [say("Hello from a trusted lane.")]
    with supervisor(gemini_home, tmp_path / "supervisor.log"):
        early = gemini_job(gemini_home, "Before trust", "early", lane="fresh")
        early.wait_event("turn.waiting", timeout=60, reason="dialog")
        assert "Do you trust the files in this folder?" in early.screen()
        stays_waiting(early, 0, 3)
        assert not api.script_requests()          # the prompt was never typed into the dialog
        assert not early.of("input.sent")

        r = zen("lane", "trust", "fresh")
        assert r.returncode == 0 and "Gemini CLI now trusts" in r.stdout, r.stdout
        folders = json.loads((isolated_env / ".gemini" / "trustedFolders.json").read_text())
        assert folders[str(untrusted_repo.resolve())] == "TRUST_FOLDER"

        later = gemini_job(gemini_home, "After trust", "later", lane="fresh")
        later.wait_event("turn.waiting", timeout=90, reason="idle")
        assert not [e for e in later.of("turn.waiting") if e.get("reason") == "dialog"]
        assert zen("cancel", early.id).returncode == 0

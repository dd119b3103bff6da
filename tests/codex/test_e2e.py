"""zen with the real Codex CLI in tmux in a worktree, driven as a user would drive it, against the
scripted Responses API on loopback (reference/real-codex.md)."""

from __future__ import annotations

import tomllib
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.agents.realagent import Job, dispatch, stays_waiting, supervisor
from tests.codex.fakeapi import CodexAPI, say, shell, user_texts
from tests.helpers import git, wait_until, zen

pytestmark = pytest.mark.agents


@pytest.fixture
def running(codex_lane: Path, codex_home: Path, tmp_path: Path) -> Iterator[Path]:
    """A zen home with lane 'app' trusted by Codex and `zen supervise` running."""
    with supervisor(codex_home, tmp_path / "supervisor.log"):
        yield codex_home


def codex_job(home: Path, prompt: str, name: str, lane: str = "app") -> Job:
    return Job(home, dispatch("codex", prompt, "--lane", lane, "--name", name))


def waited(job: Job, after_seq: int = 0, timeout: float = 90, **match: object) -> dict:
    """The next turn.waiting after `after_seq` (from Codex's Stop hook or its own state report)."""
    return job.wait_event("turn.waiting", after_seq=after_seq, timeout=timeout, **match)


def test_guardian_denies_rm_rf_home_the_written_file_is_harvested_and_usage_is_shown(
        running: Path, api: CodexAPI, codex_lane: Path, isolated_env: Path) -> None:
    keep = isolated_env / "keep.txt"
    keep.write_text("the user's own file\n")
    u = {"input_tokens": 1000, "cached_tokens": 400, "output_tokens": 50, "reasoning_tokens": 10}
    api.script = [shell("rm -rf ~", usage=u), shell("echo hello > out.txt", usage=u), say("All done.", usage=u)]
    job = codex_job(running, "Tidy up and greet", "guarded")

    waited(job, reason="idle")
    # the first turn.waiting can be Codex's start-up silence before its first call (a loaded
    # machine): the calls may still be on their way, so wait for them as long as for a turn
    denied = job.wait_event("guard.denied", timeout=90)
    assert "rm -rf ~" in str(denied) and denied.get("rule"), denied
    assert keep.read_text() == "the user's own file\n"           # the home is intact
    allowed = job.wait_event("guard.allowed", timeout=90)
    assert "echo hello" in str(allowed)
    # Codex was told: the guardian's reason came back to the model as the call's output
    told = api.output_for(0)
    assert told is not None and "zen guardian" in told, told
    assert "Blocked by hook" in job.screen() or "zen guardian" in job.screen()

    r = zen("harvest", job.id)
    assert r.returncode == 0, r.stderr + job.explain()
    assert git(codex_lane, "show", f"zen/review/{job.id}:out.txt") == "hello"
    assert git(codex_lane, "status", "--porcelain") == ""

    # three responses of the first turn, from the rollout's cumulative counters
    used = job.wait_event("usage", timeout=20)
    assert used["input_tokens"] == 3 * 600 and used["cache_read_input_tokens"] == 3 * 400
    assert used["output_tokens"] == 3 * 50 and used["api_calls"] == 3
    assert used["model"] == "gpt-5-codex" and used["cost_usd"] > 0
    assert Path(used["rollout"]).name.startswith("rollout-")
    shown = zen("show", job.id)
    assert shown.returncode == 0 and "input_tokens=1800" in shown.stdout, shown.stdout
    assert job.state()["usage"]["output_tokens"] == 150


def test_a_turn_ends_waiting_stays_so_send_starts_the_next_and_finish_exits_0(
        running: Path, api: CodexAPI, isolated_env: Path) -> None:
    api.script = [say("First turn done."), say("Second turn done.")]
    job = codex_job(running, "Say something", "turns")

    first = waited(job, reason="idle")
    assert job.state()["state"] == "waiting"
    # one scripted step answered: a session-title side request (Codex makes one best-effort, and
    # 0.171 makes none once an MCP server such as zen's team tools is configured) is answered as a
    # title and neither moves the script nor ends the real turn early
    assert api.answered() == 1 and "First turn done." in job.screen()
    stays_waiting(job, first["seq"], 8)

    r = zen("send", job.id, "Now the second turn, please.")
    assert r.returncode == 0, r.stderr
    sent = job.wait_event("input.sent", after_seq=first["seq"], timeout=30)
    working = job.wait_event("turn.working", after_seq=sent["seq"], timeout=30)
    again = waited(job, after_seq=working["seq"], timeout=60, reason="idle")
    wait_until(lambda: api.answered() == 2, timeout=10, message="both scripted steps answered")
    assert "Now the second turn, please." in user_texts(api.script_requests()[-1].body)
    used = job.wait_event("usage", after_seq=again["seq"] - 1, timeout=20)
    assert used["input_tokens"] > 0

    r = zen("finish", job.id)
    assert r.returncode == 0, r.stderr + job.explain()
    exited = job.wait_event("agent.exited", timeout=60)
    assert exited["exit_code"] == 0 and not exited.get("signal"), exited
    wait_until(lambda: job.state()["state"] in ("exited", "harvested"), timeout=30, message="the job to end")
    assert job.of("harvest.done")
    # --no-daemon: no background app-server was installed or left behind for a later job
    assert not (isolated_env / ".codex" / "packages" / "app-server-daemon").exists()


def test_codex_own_approval_prompt_shows_as_waiting_for_approval(running: Path, api: CodexAPI) -> None:
    # allowed by zen's guardian (a touch inside the worktree), but the call asks Codex to run it
    # outside its sandbox, which Codex puts to the human first
    api.script = [shell("touch marker.txt", sandbox_permissions="require_escalated",
                        justification="wants to leave the sandbox"),
                  say("Done.")]
    job = codex_job(running, "Touch it", "asks")

    approval = waited(job, reason="approval")
    assert job.state()["state"] == "waiting" and job.state()["reason"] == "approval"
    assert "Would you like to run the following command?" in job.screen()
    assert job.of("guard.allowed")
    # nothing said idle before it: the title side turn does not end the real turn
    early = [e for e in job.of("turn.waiting") if e["seq"] < approval["seq"]]
    assert not early, early
    stays_waiting(job, approval["seq"], 5)
    assert job.state()["reason"] == "approval"
    assert not (running / "worktrees" / job.id / "marker.txt").exists()

    r = zen("cancel", job.id, "--reason", "not needed")
    assert r.returncode == 0, r.stderr + job.explain()
    job.wait_event("agent.exited", timeout=60)


def test_untrusted_lane_waits_at_the_trust_screen_and_zen_lane_trust_fixes_it(
        codex_home: Path, codex_env: Path, untrusted_repo: Path, api: CodexAPI, tmp_path: Path) -> None:
    r = zen("lane", "add", "fresh", str(untrusted_repo))
    assert r.returncode == 0, r.stderr
    assert "Codex" in r.stderr and "zen lane trust fresh" in r.stderr, r.stderr

    api.script = [say("Hello from a trusted lane.")]
    with supervisor(codex_home, tmp_path / "supervisor.log"):
        early = codex_job(codex_home, "Before trust", "early", lane="fresh")
        waited(early, timeout=60, reason="dialog")
        assert early.state()["state"] == "waiting"
        assert "Trust this folder" in early.screen()
        assert not api.script_requests()

        before = tomllib.loads(codex_env.read_text())
        r = zen("lane", "trust", "fresh")
        assert r.returncode == 0, r.stderr
        assert "Codex now trusts" in r.stdout
        after = tomllib.loads(codex_env.read_text())
        assert after["projects"][str(untrusted_repo.resolve())] == {"trust_level": "trusted"}
        # the user's own settings are all still there, untouched
        for key in ("model", "model_provider", "model_providers", "check_for_update_on_startup"):
            assert after[key] == before[key], key

        later = codex_job(codex_home, "After trust", "later", lane="fresh")
        waited(later, reason="idle")
        assert not [e for e in later.of("turn.waiting") if e.get("reason") == "dialog"]
        assert early.state()["state"] == "waiting"
        assert zen("cancel", early.id).returncode == 0

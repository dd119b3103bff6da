"""zen with the real aider in tmux in a worktree, driven as a user would drive it, against a
scripted chat-completions server on loopback. aider has no pre-execution hook: its lane must
accept it (or zen sandboxes it), and its shell commands are off."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.agents.realagent import Job, agent_home, dispatch, stays_waiting, supervisor
from tests.aider.fakeapi import AiderAPI, new_file, say, shell, user_texts
from tests.helpers import git, wait_until, zen
from zen.agents.unguarded import sandbox_works

pytestmark = pytest.mark.agents


@pytest.fixture
def running(aider_lane: Path, aider_home: Path, tmp_path: Path) -> Iterator[Path]:
    with supervisor(aider_home, tmp_path / "supervisor.log"):
        yield aider_home


def aider_job(home: Path, prompt: str, name: str, lane: str = "app") -> Job:
    return Job(home, dispatch("aider", prompt, "--lane", lane, "--name", name))


def test_shell_commands_are_not_run_the_edit_is_harvested_and_usage_is_shown(
        aider_lane: Path, aider_home: Path, api: AiderAPI, isolated_env: Path, tmp_path: Path,
        needs_aider: Path) -> None:
    agent_home(aider_home, "aider", str(needs_aider), yes_always=True)   # answers "create out.txt?"
    keep = isolated_env / "keep.txt"
    keep.write_text("the user's own file\n")
    api.script = [shell("rm -rf ~"), new_file("out.txt", "hello")]
    with supervisor(aider_home, tmp_path / "supervisor.log"):
        job = aider_job(aider_home, "Tidy up", "noshell")
        job.wait_event("turn.waiting", timeout=90, reason="idle")
        assert keep.read_text() == "the user's own file\n"          # the suggestion was never run
        assert "Run shell command" not in job.screen()
        # the timeline says why: the agent has no hook and its lane keeps its shell commands off
        [passed] = job.of("preflight.passed")
        note = next(w for w in passed["warnings"] if w["check"] == "agent aider")
        assert "no pre-execution hook" in note["message"] and "shell commands are off" in note["message"]

        assert zen("send", job.id, "Now write out.txt").returncode == 0
        wait_until((aider_home / "worktrees" / job.id / "out.txt").exists, timeout=60,
                   message="aider to write out.txt")
        assert zen("harvest", job.id).returncode == 0, job.explain()
        assert git(aider_lane, "show", f"zen/review/{job.id}:out.txt") == "hello"
        # aider's own files stayed out of the review branch
        assert ".zen-tmp" not in git(aider_lane, "show", "--stat", f"zen/review/{job.id}")

        used = wait_until(lambda: job.of("usage"), timeout=30, message="usage")
        sent = [json.loads(line)["properties"] for line in
                (aider_home / "worktrees" / job.id / ".zen-tmp" / "aider-analytics.jsonl").read_text().splitlines()
                if '"message_send"' in line]
        assert sum(u["input_tokens"] for u in job.of("usage")) == sum(p["prompt_tokens"] for p in sent) > 0
        assert used[0]["source"] == "analytics"
        shown = zen("show", job.id)
        assert shown.returncode == 0 and "input_tokens=" in shown.stdout, shown.stdout


def test_a_turn_ends_waiting_stays_so_send_starts_the_next_and_finish_exits_0(running: Path, api: AiderAPI) -> None:
    api.script = [say("First turn done."), say("Second turn done.")]
    job = aider_job(running, "Say something", "turns")
    first = job.wait_event("turn.waiting", timeout=90, reason="idle")
    assert job.state()["state"] == "waiting"
    stays_waiting(job, first["seq"], 6)
    assert zen("send", job.id, "Now the second turn, please.").returncode == 0
    sent = job.wait_event("input.sent", after_seq=first["seq"], timeout=30)
    job.wait_event("turn.waiting", after_seq=sent["seq"], timeout=60, reason="idle")
    wait_until(lambda: api.answered() == 2, timeout=20, message="both scripted steps answered")
    assert "Now the second turn, please." in user_texts(api.script_requests()[-1].body)[-1]

    r = zen("finish", job.id)
    assert r.returncode == 0, r.stderr + job.explain()
    exited = job.wait_event("agent.exited", timeout=60)
    assert exited["exit_code"] == 0 and not exited.get("signal"), exited


def test_aiders_confirmation_shows_as_waiting_for_approval(running: Path, api: AiderAPI) -> None:
    api.script = [new_file("new.txt", "made")]
    job = aider_job(running, "Make a file", "asks")
    job.wait_event("turn.waiting", timeout=90, reason="approval")
    assert "(Y)es/(N)o" in job.screen()
    assert not (running / "worktrees" / job.id / "new.txt").exists()
    assert zen("cancel", job.id).returncode == 0
    job.wait_event("agent.exited", timeout=60)


def test_a_lane_that_does_not_accept_it_runs_it_in_the_sandbox_or_refuses(
        aider_home: Path, git_repo: Path, api: AiderAPI, tmp_path: Path) -> None:
    assert zen("lane", "add", "strict", str(git_repo), "--unguarded", "refuse").returncode == 0
    r = zen("preflight", "--lane", "strict")
    assert "aider" in r.stdout and "refused here" in r.stdout, r.stdout
    with supervisor(aider_home, tmp_path / "supervisor.log"):
        job = aider_job(aider_home, "Anything", "refused", lane="strict")
        failed = job.wait_event("preflight.failed", timeout=30)
        assert "refuses such agents" in json.dumps(failed)
        assert not api.script_requests()



@pytest.mark.skipif(not sandbox_works()[0], reason=f"zen's sandbox cannot run here: {sandbox_works()[1]} "
                    "(.ci/run installs bubblewrap)")
def test_on_a_lane_that_keeps_the_default_aider_runs_inside_zens_sandbox(
        aider_home: Path, git_repo: Path, api: AiderAPI, tmp_path: Path, needs_aider: Path) -> None:
    assert zen("lane", "add", "boxed", str(git_repo)).returncode == 0   # unguarded: sandbox, the default
    api.script = [say("Hello from the sandbox.")]
    with supervisor(aider_home, tmp_path / "supervisor.log"):
        job = aider_job(aider_home, "Say hello", "boxed", lane="boxed")
        spawned = job.wait_event("agent.spawned", timeout=60)
        argv = spawned["argv"]
        assert "bwrap" in [Path(a).name for a in argv] and str(needs_aider) in argv, spawned
        # its own network: the model's API is forwarded in, nothing else is there
        assert "--unshare-net" in argv and "--cap-drop" in argv and "--unshare-pid" in argv, spawned
        # it starts (with your git settings, read-only: it writes an identity into the repo when it
        # finds none), takes the prompt and ends its turn; its hook cannot reach zen from inside,
        # so the wait is read from its output
        job.wait_event("turn.waiting", timeout=90, reason="idle")
        wait_until(lambda: api.answered() == 1, timeout=20, message="the scripted answer")
        assert "Say hello" in user_texts(api.script_requests()[-1].body)[-1], job.explain()
        assert "Uncaught" not in job.screen(), job.screen()

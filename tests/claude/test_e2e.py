"""zen with the real Claude Code in tmux in a worktree, driven as a user would drive it, against the
scripted Messages API on loopback."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.claude.fakeapi import FakeAPI, bash, text, tool
from tests.claude.zenrun import Job, dispatch, supervisor, transcript_of
from tests.helpers import wait_until, zen
from zen.observe import prices as price_table

pytestmark = pytest.mark.claude

# A turn ends when Claude Code's Stop hook reaches zen: no later than the 2 s output-idle fallback would
HOOK_LATENCY_S = 2.0


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
    # (Claude Code may add a user message of its own after it, announcing the tools of an MCP
    # server that connected meanwhile, such as zen's: the turn is every user message after the
    # last answer)
    messages = api.script_requests()[-1].messages
    answered = max(i for i, m in enumerate(messages) if m["role"] == "assistant")
    new_turn = [str(m["content"]) for m in messages[answered + 1:] if m["role"] == "user"]
    assert new_turn and any("Now the second turn, please." in c for c in new_turn), new_turn


def test_usage_and_cost_reach_the_timeline_once_per_message(running: Path, api: FakeAPI) -> None:
    u = {"input_tokens": 1000, "output_tokens": 200, "cache_creation_input_tokens": 3000,
         "cache_read_input_tokens": 10000}
    api.script = [bash("echo a > a.txt", usage=u), text("Done.", usage=u), text("Again.", usage=u)]
    job = Job(running, dispatch("Usage please", "--lane", "app", "--name", "usage"))
    first = job.wait_event("usage", timeout=90)
    # two responses in the first turn, each counted once even though the transcript repeats them
    assert first["input_tokens"] == 2000 and first["output_tokens"] == 400
    assert first["cache_creation_input_tokens"] == 6000 and first["cache_read_input_tokens"] == 20000
    # priced at the dated table's rates for the model Claude Code asked for (5 m cache writes)
    assert first["model"] and first["api_calls"] == 2
    rates = price_table.lookup(first["model"]).rates
    per_msg = (1000 * rates.input + 200 * rates.output + 3000 * rates.cache_write
               + 10000 * rates.cache_read) / 1e6
    assert first["cost_usd"] == pytest.approx(2 * per_msg)

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


def _tool_results(transcript: Path) -> dict[str, dict]:
    """tool_use_id -> the tool_result block Claude Code recorded in its transcript."""
    from tests.claude.zenrun import transcript_lines

    out: dict[str, dict] = {}
    for line in transcript_lines(transcript):
        content = (line.get("message") or {}).get("content") if line.get("type") == "user" else None
        for block in content if isinstance(content, list) else []:
            if isinstance(block, dict) and block.get("type") == "tool_result":
                out[str(block.get("tool_use_id"))] = block
    return out


def _text(block: dict) -> str:
    c = block.get("content")
    if isinstance(c, list):
        return "\n".join(str(x.get("text", "")) for x in c if isinstance(x, dict))
    return str(c)


def test_guardian_blocks_a_dangerous_command_and_allows_a_harmless_one(
        running: Path, api: FakeAPI, tmp_path: Path) -> None:
    precious = tmp_path / "precious"
    precious.mkdir()
    (precious / "data.txt").write_text("keep me\n")
    api.script = [bash(f"rm -rf {precious}", "tidy up"), bash("echo hello > hello.txt", "say hello"),
                  text("Done.")]
    job = Job(running, dispatch("Tidy and greet", "--lane", "app", "--name", "guarded"))

    job.wait_event("turn.waiting", timeout=90, actor="hook")
    denied = job.wait_event("guard.denied", timeout=10)
    assert denied.get("rule"), denied
    assert str(precious) in str(denied)
    assert (precious / "data.txt").read_text() == "keep me\n"
    allowed = job.wait_event("guard.allowed", timeout=10)
    assert "echo hello" in str(allowed)
    assert (running / "worktrees" / job.id / "hello.txt").read_text() == "hello\n"
    # Claude was told the call was not run: an error tool_result, in its transcript and in the
    # next request it sent
    answer = api.tool_result_for(0)
    assert answer is not None and answer.get("is_error") is True, answer
    transcript = transcript_of(job)
    assert transcript is not None
    recorded = _tool_results(transcript)[api.tool_use_id(0)]
    assert recorded.get("is_error") is True
    assert "hook" in _text(recorded).lower() or "denied" in _text(recorded).lower()
    assert recorded is not None and _tool_results(transcript)[api.tool_use_id(1)].get("is_error") is not True


def test_write_and_edit_to_protected_paths_are_blocked(running: Path, api: FakeAPI,
                                                      claude_lane: Path) -> None:
    """Claude's own file tools (not only Bash) go through the guardian: Write and Edit of the
    project's Claude settings (the hook registration) and a Write into zen's policy/ are blocked,
    before Claude Code would even ask; an ordinary Write is not."""
    from tests.helpers import git

    committed = '{"env": {"PROJECT_SETTING": "1"}}\n'
    (claude_lane / ".claude").mkdir()
    (claude_lane / ".claude" / "settings.json").write_text(committed)
    git(claude_lane, "add", ".claude/settings.json")
    git(claude_lane, "commit", "-q", "-m", "project settings for Claude Code")
    policy_dir = running / "policy"
    policy_before = sorted(p.name for p in policy_dir.iterdir())
    api.script = [
        tool("Write", file_path="{cwd}/.claude/settings.local.json", content='{"disableAllHooks": true}\n'),
        tool("Read", file_path="{cwd}/.claude/settings.json"),
        tool("Edit", file_path="{cwd}/.claude/settings.json", old_string='"1"', new_string='"2"'),
        tool("Write", file_path=str(policy_dir / "extra.yaml"), content="zen: 1\n"),
        tool("Write", file_path="{cwd}/notes.md", content="# Notes\n"),
        text("Done."),
    ]
    job = Job(running, dispatch("Edit settings", "--lane", "app", "--name", "protect"))
    job.wait_event("turn.waiting", timeout=90, actor="hook")
    wt = running / "worktrees" / job.id
    assert not (wt / ".claude" / "settings.local.json").exists()
    assert (wt / ".claude" / "settings.json").read_text() == committed
    assert sorted(p.name for p in policy_dir.iterdir()) == policy_before
    denied = job.of("guard.denied")
    assert len(denied) == 3, job.explain()
    assert "settings.local.json" in str(denied[0]) and "settings.json" in str(denied[1])
    assert "extra.yaml" in str(denied[2])
    assert all(d.get("rule") for d in denied)
    for step in (0, 2, 3):
        res = api.tool_result_for(step)
        assert res is not None and res.get("is_error") is True, (step, res)
        assert "zen guardian" in res["text"]
    # an ordinary file in the worktree is fine
    assert (wt / "notes.md").read_text() == "# Notes\n"
    assert job.of("guard.allowed")


def test_harvest_puts_claudes_files_on_the_review_branch_and_finish_ends_it(
        running: Path, api: FakeAPI, claude_lane: Path) -> None:
    from tests.helpers import git

    api.script = [bash("mkdir -p docs && echo 'from claude' > docs/claude.txt", "write a doc"),
                  tool("Write", file_path="{cwd}/NOTES.md", content="# Notes by Claude\n"),
                  text("Wrote two files.")]
    job = Job(running, dispatch("Write docs", "--lane", "app", "--name", "harvestme"))
    job.wait_event("turn.waiting", timeout=90, actor="hook")

    r = zen("harvest", job.id)
    assert r.returncode == 0, r.stderr + job.explain()
    branch = f"zen/review/{job.id}"
    assert git(claude_lane, "show", f"{branch}:docs/claude.txt") == "from claude"
    assert git(claude_lane, "show", f"{branch}:NOTES.md") == "# Notes by Claude"
    done = job.wait_event("harvest.done", timeout=10)
    assert done["branch"] == branch
    # harvesting a live agent leaves it running, at its prompt
    assert job.state()["state"] == "waiting"
    # zen never touched the lane's own checkout
    assert git(claude_lane, "status", "--porcelain") == ""
    assert not (claude_lane / "NOTES.md").exists()

    r = zen("finish", job.id)
    assert r.returncode == 0, r.stderr + job.explain()
    exited = job.wait_event("agent.exited", timeout=60)
    assert exited["exit_code"] == 0, exited
    wait_until(lambda: job.state()["state"] in ("exited", "harvested"), timeout=30,
               message="the job to end")
    assert git(claude_lane, "show", f"{branch}:NOTES.md") == "# Notes by Claude"


def test_kill_switch_mid_session_denies_the_next_write_and_allows_a_read(
        running: Path, api: FakeAPI) -> None:
    api.script = [text("Ready."),
                  bash("echo changed > after-kill.txt", "write with the shell"),
                  tool("Write", file_path="{cwd}/after-kill-2.txt", content="changed\n"),
                  bash("cat README.md", "read something"),
                  text("Understood, observing only.")]
    job = Job(running, dispatch("Wait for me", "--lane", "app", "--name", "killme"))
    waiting = job.wait_event("turn.waiting", timeout=90, actor="hook")
    spawned = job.of("agent.spawned")

    r = zen("kill-switch", "--reason", "e2e test")
    assert r.returncode == 0, r.stderr
    assert (running / "control" / "KILL").exists()
    assert zen("send", job.id, "carry on").returncode == 0
    job.wait_event("turn.waiting", after_seq=waiting["seq"], timeout=60, actor="hook")

    wt = running / "worktrees" / job.id
    guard = {e.get("command") or str(e.get("path") or e.get("file_path") or e.get("reason")): e
             for e in job.events() if e["type"].startswith("guard.")}
    # the read runs, at the observe level the kill switch forces
    read_res = api.tool_result_for(3)
    assert read_res is not None and read_res.get("is_error") is not True, read_res
    assert "# sample" in read_res["text"]
    # the file tool is denied
    write_res = api.tool_result_for(2)
    assert write_res is not None and write_res.get("is_error") is True, write_res
    assert not (wt / "after-kill-2.txt").exists()
    # and so is the shell write: an output redirection writes a file
    shell_res = api.tool_result_for(1)
    assert not (wt / "after-kill.txt").exists(), (
        f"the kill switch let a shell redirection write a file: {guard.get('echo changed > after-kill.txt')}")
    assert shell_res is not None and shell_res.get("is_error") is True
    denied = job.of("guard.denied")
    assert len(denied) == 2 and all(d.get("level") in (None, "observe") for d in denied), job.explain()
    # nothing was restarted: still the one agent, the same session
    assert job.of("agent.spawned") == spawned
    assert "agent.exited" not in job.types()
    assert zen("kill-switch", "--release").returncode == 0


def test_untrusted_lane_is_flagged_shows_a_dialog_wait_and_zen_lane_trust_fixes_it(
        claude_home: Path, untrusted_repo: Path, api: FakeAPI, tmp_path: Path,
        isolated_env: Path) -> None:
    import json

    r = zen("lane", "add", "fresh", str(untrusted_repo))
    assert r.returncode == 0, r.stderr
    said = r.stdout + r.stderr
    assert "zen lane trust fresh" in said, said

    api.script = [text("Hello from a trusted lane.")]
    with supervisor(claude_home, tmp_path / "supervisor.log"):
        early = Job(claude_home, dispatch("Before trust", "--lane", "fresh", "--name", "early"))
        waiting = early.wait_event("turn.waiting", timeout=90, reason="dialog")
        assert early.state()["state"] == "waiting"
        assert "trust" in early.screen().lower()
        assert not api.script_requests()         # Claude never got past the dialog

        r = zen("lane", "trust", "fresh")
        assert r.returncode == 0, r.stderr
        projects = json.loads((isolated_env / ".claude.json").read_text())["projects"]
        assert projects[str(untrusted_repo.resolve())]["hasTrustDialogAccepted"] is True
        # what a returning user had in ~/.claude.json is still there
        assert json.loads((isolated_env / ".claude.json").read_text())["hasCompletedOnboarding"] is True
        r = zen("lane", "add", "fresh2", str(untrusted_repo))
        assert "zen lane trust" not in r.stdout + r.stderr

        later = Job(claude_home, dispatch("After trust", "--lane", "fresh", "--name", "later"))
        done = later.wait_event("turn.waiting", timeout=90, actor="hook")
        assert done["reason"] == "idle"
        assert "turn.waiting" not in [e["type"] for e in later.events() if e.get("reason") == "dialog"]
        # the early job still sits at its dialog, shown as waiting, not as working
        assert early.state()["state"] == "waiting"
        assert early.events()[-1]["seq"] >= waiting["seq"]
        assert zen("cancel", early.id).returncode == 0


def test_claude_and_sim_jobs_get_the_same_settings_file(running: Path, api: FakeAPI) -> None:
    """The file zen hands Claude Code with --settings is byte for byte the one the sim agent reads,
    so what the sim suite proves about hooks holds for Claude Code."""
    api.script = [text("Hi.")]
    claude_job = Job(running, dispatch("Hi", "--lane", "app", "--name", "cl"))
    r = zen("dispatch", "Hi", "--lane", "app", "--agent", "sim", "--name", "si", "--json")
    assert r.returncode == 0, r.stderr
    import json

    sim_job = Job(running, json.loads(r.stdout)["id"])
    claude_spawn = claude_job.wait_event("agent.spawned", timeout=60)
    sim_spawn = sim_job.wait_event("agent.spawned", timeout=60)
    claude_file = claude_job.dir / "claude-settings.json"
    sim_file = sim_job.dir / "claude-settings.json"
    # the same file but for what is each job's own (its worktree, handoff, private TMPDIR in the
    # sandbox section)
    claude_settings, sim_settings = json.loads(claude_file.read_text()), json.loads(sim_file.read_text())
    claude_box, sim_box = claude_settings.pop("sandbox"), sim_settings.pop("sandbox")
    assert claude_settings == sim_settings

    def own(box: dict, job: Job) -> str:
        tmp = box["filesystem"]["allowWrite"][-1]
        return json.dumps(box).replace(job.id, "JOB").replace(tmp, "TMP")

    assert own(claude_box, claude_job) == own(sim_box, sim_job)
    argv = claude_spawn["argv"]
    assert argv[argv.index("--settings") + 1] == str(claude_file)
    assert str(sim_file) in sim_spawn["argv"]
    # and Claude Code really ran the hooks from it: the guard and turn hooks reached the timeline
    claude_job.wait_event("turn.waiting", timeout=90, actor="hook")
    hooks = {e.get("hook") for e in claude_job.events() if e.get("actor") == "hook"}
    assert {"UserPromptSubmit", "Stop"} <= hooks
    registered = json.loads(claude_file.read_text())["hooks"]
    assert {"UserPromptSubmit", "Stop", "PreToolUse"} <= set(registered)


def test_zen_finish_ends_a_waiting_claude_cleanly_and_records_the_exit(running: Path, api: FakeAPI) -> None:
    api.script = [text("Nothing to do.")]
    job = Job(running, dispatch("Nothing", "--lane", "app", "--name", "finishme"))
    job.wait_event("turn.waiting", timeout=90, actor="hook")
    r = zen("finish", job.id)
    assert r.returncode == 0, r.stderr + job.explain()
    exited = job.wait_event("agent.exited", timeout=60)
    assert exited["exit_code"] == 0 and not exited.get("signal"), exited
    # Claude Code ended its own session (its SessionEnd hook ran), it was not killed
    assert any(e.get("hook") == "SessionEnd" for e in job.events()), job.explain()
    wait_until(lambda: job.state()["state"] in ("exited", "harvested"), timeout=30,
               message="the job to end")
    assert job.of("harvest.done")


def test_an_idle_claude_stays_waiting_after_its_stop_hook(running: Path, api: FakeAPI) -> None:
    import time

    api.script = [text("Idle now.")]
    job = Job(running, dispatch("Idle", "--lane", "app", "--name", "idle"))
    waiting = job.wait_event("turn.waiting", timeout=90, actor="hook")
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline:   # an absence over a window: poll it all the way
        flips = [e for e in job.events() if e["seq"] > waiting["seq"] and e["type"] == "turn.working"]
        assert not flips, f"an idle Claude was recorded as working: {flips}\n{job.screen()}"
        time.sleep(0.25)
    assert job.state()["state"] == "waiting"


def test_a_question_and_claudes_own_permission_prompt_show_as_waiting_with_their_reason(
        running: Path, api: FakeAPI, tmp_path: Path) -> None:
    outside = tmp_path / "outside.txt"
    outside.write_text("not in the worktree\n")
    api.script = [text("Which file should I change?"),
                  tool("Read", file_path=str(outside)),      # Claude Code asks before reading it
                  text("Read it.")]
    job = Job(running, dispatch("Ask first", "--lane", "app", "--name", "asks"))
    question = job.wait_event("turn.waiting", timeout=90, actor="hook")
    assert question["reason"] == "question"

    assert zen("send", job.id, "Read the file outside, please.").returncode == 0
    approval = job.wait_event("turn.waiting", after_seq=question["seq"], timeout=60, reason="approval")
    assert approval["actor"] == "hook" and approval.get("tool") == "Read"
    assert job.state()["state"] == "waiting"
    assert "outside.txt" in job.screen()

    # zen cancel stops it there and still records the exit and harvests
    r = zen("cancel", job.id, "--reason", "not needed")
    assert r.returncode == 0, r.stderr + job.explain()
    job.wait_event("agent.exited", timeout=60)
    assert job.of("job.cancelled")
    wait_until(lambda: job.state()["state"] in ("cancelled", "harvested"), timeout=30,
               message="the job to be cancelled")

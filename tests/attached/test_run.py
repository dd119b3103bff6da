"""`zen run claude ...` with a stand-in for Claude Code that follows the hooks of the settings file
zen gives it (tests/attached/fakeclaude.py): the attached job's record, its guardian, its leases,
the kill switch, its end. The real Claude Code does the same in test_claude.py."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

from tests.attached.conftest import calls, only_job, timeline, zen_run
from tests.helpers import ZEN, git, make_repo, wait_until, zen, zen_json


def test_a_plain_checkout_gets_the_guardian_and_the_job_ends_with_the_agents_exit_code(
        fake_home: Path, tmp_path: Path, isolated_env: Path) -> None:
    repo = make_repo(tmp_path / "checkout")
    (isolated_env / "keep.txt").write_text("mine\n")
    r = zen_run("claude", "-p", "tidy up", "--verbose", cwd=repo, exit_code=3, script=[
        {"tool": "Bash", "command": "rm -rf ~"},
        {"tool": "Write", "file_path": str(repo / "notes.txt"), "content": "written by the agent\n"}])
    assert r.returncode == 3, r.stderr

    said = calls(r.stdout)
    assert [c["allowed"] for c in said] == [False, True], said
    assert said[0]["reason"].startswith("zen guardian: ")
    assert (isolated_env / "keep.txt").read_text() == "mine\n"          # the home intact
    assert (repo / "notes.txt").read_text() == "written by the agent\n"  # the edit made

    job = only_job(fake_home)
    evs = timeline(fake_home, job)
    first = evs[0]
    assert first["type"] == "task.received" and first["kind"] == "attached" and first["cwd"] == str(repo)
    assert first["task"]["lane"] is None and first["task"]["repo"] == str(repo)
    denied = [e for e in evs if e["type"] == "guard.denied"]
    assert len(denied) == 1 and "rm -rf ~" in denied[0]["command"]
    assert [e["paths"] for e in evs if e["type"] == "files.changed"] == [["notes.txt"]]
    exited = [e for e in evs if e["type"] == "agent.exited"]
    assert len(exited) == 1 and exited[0]["exit_code"] == 3
    # turns by hooks, usage from the transcript the Stop hook named (two responses, each once)
    types = [e["type"] for e in evs]
    assert "turn.working" in types and "turn.waiting" in types
    usage = [e for e in evs if e["type"] == "usage"]
    assert sum(e["input_tokens"] for e in usage) == 200 and sum(e["api_calls"] for e in usage) == 2
    assert not any(e["type"] in ("worktree.created", "harvest.done") for e in evs)   # nothing harvested

    state = zen_json("show", job)["state"]
    assert state["state"] == "exited" and state["exit_code"] == 3 and state["executor"] == "attached"
    # zen status lists it, marked as attached
    row = next(j for j in zen_json("status")["jobs"] if j["job"] == job)
    assert row["executor"] == "attached"
    table = zen("status").stdout
    assert "runs on" in table and "attached" in next(ln for ln in table.splitlines() if job in ln)


def test_the_agents_own_arguments_pass_through_unchanged(fake_home: Path, git_repo: Path) -> None:
    args = ["-p", "say --lane x; and 'quotes'", "--lane", "not-zens", "--", "--name"]
    r = zen_run("claude", *args, cwd=git_repo)
    assert r.returncode == 0, r.stderr
    argv = json.loads(r.stdout.splitlines()[0])["argv"]
    assert argv[0] == "--settings" and argv[2:] == args
    settings = json.loads(Path(argv[1]).read_text())
    assert "guard hook" in settings["hooks"]["PreToolUse"][0]["hooks"][0]["command"]
    # the wall: Claude Code's sandbox, writable only in the checkout
    assert settings["sandbox"]["enabled"] is True
    assert str(git_repo) in settings["sandbox"]["filesystem"]["allowWrite"]


def test_a_lane_checkout_is_found_and_a_file_another_job_holds_is_refused(
        fake_home: Path, lane: Path, tmp_path: Path) -> None:
    # the holder: another session on the lane, which wrote a.txt first and is still at work
    go_on = tmp_path / "go-on"
    holder = subprocess.Popen(
        [*ZEN, "run", "--name", "holder", "claude", "-p", "edit a"], cwd=lane, stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        env={**os.environ, "FAKE_CLAUDE_SCRIPT": json.dumps([
            {"tool": "Write", "file_path": str(lane / "a.txt"), "content": "holder's\n"},
            {"tool": "Bash", "command": f"while [ ! -e {go_on} ]; do sleep 0.1; done"}])})
    try:
        def held() -> str | None:
            for j in zen_json("status")["jobs"]:
                if any(e["type"] == "lock.acquired" for e in timeline(fake_home, j["job"])):
                    return str(j["job"])
            return None
        holder_id = wait_until(held, timeout=60, message="the holder's lease on a.txt")
        sub = lane / "src"
        sub.mkdir(exist_ok=True)
        r = zen_run("claude", "-p", "edit", cwd=sub, script=[
            {"tool": "Write", "file_path": str(lane / "a.txt"), "content": "clash\n"},
            {"tool": "Write", "file_path": str(lane / "free.txt"), "content": "fine\n"}])
    finally:
        go_on.touch()
        holder.wait(timeout=60)
    assert r.returncode == 0, r.stderr
    said = calls(r.stdout)
    assert [c["allowed"] for c in said] == [False, True], said
    assert holder_id in said[0]["reason"]                          # the holder named
    assert (lane / "a.txt").read_text() == "holder's\n"
    job = next(j["job"] for j in zen_json("status")["jobs"] if j["job"] != holder_id)
    evs = timeline(fake_home, job)
    assert evs[0]["task"]["lane"] == "app" and evs[0]["task"]["domain"] == "code"
    conflict = [e for e in evs if e["type"] == "lock.conflict"]
    assert conflict and conflict[0]["holder"] == holder_id and conflict[0]["path"] == "a.txt"
    # its own lease ended with it, and so did the holder's
    assert [e["path"] for e in evs if e["type"] == "lock.released"] == ["free.txt"]
    assert zen_json("locks") == [] or not zen_json("locks").get("locks")


def test_under_the_kill_switch_the_attached_session_is_observe_only(fake_home: Path, git_repo: Path) -> None:
    r = zen("kill-switch", "--reason", "stop everything")
    assert r.returncode == 0, r.stderr
    r = zen_run("claude", "-p", "edit", cwd=git_repo, script=[
        {"tool": "Write", "file_path": str(git_repo / "b.txt"), "content": "no\n"},
        {"tool": "Read", "file_path": str(git_repo / "a.txt")}])
    assert r.returncode == 0, r.stderr
    assert [c["allowed"] for c in calls(r.stdout)] == [False, True]
    assert not (git_repo / "b.txt").exists()
    assert "kill switch" in r.stderr


def test_committed_work_counts_as_changed(fake_home: Path, git_repo: Path) -> None:
    r = zen_run("claude", "-p", "commit", cwd=git_repo, script=[
        {"tool": "Write", "file_path": str(git_repo / "c.txt"), "content": "c\n"}])
    assert r.returncode == 0, r.stderr
    before = git(git_repo, "rev-parse", "HEAD")
    # a second session commits the file the first left untracked, and edits a tracked one
    r = zen_run("claude", "-p", "commit", cwd=git_repo, script=[
        {"tool": "Bash", "command": "git add c.txt && git commit -qm c"},
        {"tool": "Write", "file_path": str(git_repo / "a.txt"), "content": "changed\n"}])
    assert r.returncode == 0, r.stderr
    assert git(git_repo, "rev-parse", "HEAD") != before
    jobs = sorted(zen_json("status")["jobs"], key=lambda j: j["created_at"])
    second = timeline(Path(fake_home), jobs[-1]["job"])
    assert [e["paths"] for e in second if e["type"] == "files.changed"] == [["a.txt", "c.txt"]]


def test_what_zen_run_refuses_is_said_in_one_sentence(fake_home: Path, git_repo: Path, tmp_path: Path) -> None:
    r = zen_run("vim", cwd=git_repo)
    assert r.returncode == 2 and "zen run starts claude, codex, gemini, aider" in r.stderr
    assert "Traceback" not in r.stderr
    other = make_repo(tmp_path / "other")
    assert zen("lane", "add", "app", str(other)).returncode == 0
    r = zen_run("--lane", "app", "claude", cwd=git_repo)
    assert r.returncode == 2 and "is not in lane app's checkout" in r.stderr, r.stderr
    r = zen_run("--lane", "nope", "claude", cwd=git_repo)
    assert r.returncode == 1 and "no lane named 'nope'" in r.stderr, r.stderr


def test_a_supervisor_starting_meanwhile_neither_settles_nor_harvests_an_attached_job(
        fake_home: Path, lane: Path, tmp_path: Path) -> None:
    from tests.claude.zenrun import supervisor

    go_on = tmp_path / "go-on"
    session = subprocess.Popen(
        [*ZEN, "run", "claude", "-p", "work"], cwd=lane, stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        env={**os.environ, "FAKE_CLAUDE_SCRIPT": json.dumps([
            {"tool": "Write", "file_path": str(lane / "a.txt"), "content": "mine\n"},
            {"tool": "Bash", "command": f"while [ ! -e {go_on} ]; do sleep 0.1; done"}])})
    try:
        job = wait_until(lambda: next((j["job"] for j in zen_json("status")["jobs"]), None), timeout=60,
                         message="the attached job")
        wait_until(lambda: any(e["type"] == "guard.allowed" for e in timeline(fake_home, job)), timeout=60,
                   message="the session's first write")
        # a supervisor that starts while the session runs: no pane of its own to find
        with supervisor(fake_home, tmp_path / "sup1.log"):
            wait_until(lambda: (fake_home / "logs" / "control.jsonl").is_file() and "supervisor.started"
                       in (fake_home / "logs" / "control.jsonl").read_text(), timeout=60, message="supervisor")
            assert zen_json("show", job)["state"]["state"] == "working"
    finally:
        go_on.touch()
        assert session.wait(timeout=60) == 0
    # and one that starts after it ended: nothing to harvest (the checkout is the user's)
    with supervisor(fake_home, tmp_path / "sup2.log"):
        wait_until(lambda: (fake_home / "logs" / "control.jsonl").read_text().count("supervisor.started") == 2,
                   timeout=60, message="the second supervisor")
    types = [e["type"] for e in timeline(fake_home, job)]
    assert types.count("agent.exited") == 1
    assert not {"harvest.done", "harvest.failed", "worktree.created", "job.queued"} & set(types), types
    assert (lane / "a.txt").read_text() == "mine\n"
    assert zen_json("show", job)["state"]["state"] == "exited"


def test_kill_switch_stop_agents_ends_an_attached_session_once_and_harvests_nothing(
        fake_home: Path, git_repo: Path, tmp_path: Path) -> None:
    never = tmp_path / "never"
    session = subprocess.Popen(
        [*ZEN, "run", "claude"], cwd=git_repo, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL, env={**os.environ, "FAKE_CLAUDE_SCRIPT": json.dumps([
            {"tool": "Bash", "command": f"while [ ! -e {never} ]; do sleep 0.1; done"}])})
    try:
        job = wait_until(lambda: next((j["job"] for j in zen_json("status")["jobs"]), None), timeout=60,
                         message="the attached job")
        wait_until(lambda: any(e["type"] == "guard.allowed" for e in timeline(fake_home, job)), timeout=60,
                   message="the session at work")
        r = zen("kill-switch", "--stop-agents", "--reason", "enough")
        assert r.returncode == 0, r.stderr
        code = session.wait(timeout=60)
    finally:
        never.touch()
        if session.poll() is None:
            session.kill()
    assert code != 0
    types = [e["type"] for e in timeline(fake_home, job)]
    assert types.count("agent.exited") == 1, types
    assert not {"harvest.done", "worktree.created"} & set(types)
    assert git(git_repo, "branch", "--list", "zen/*") == ""


def test_a_session_whose_zen_run_was_killed_is_settled_by_the_next_zen_run(
        fake_home: Path, git_repo: Path, tmp_path: Path) -> None:
    never = tmp_path / "never"
    session = subprocess.Popen(
        [*ZEN, "run", "claude"], cwd=git_repo, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL, start_new_session=True, env={**os.environ, "FAKE_CLAUDE_SCRIPT": json.dumps([
            {"tool": "Bash", "command": f"while [ ! -e {never} ]; do sleep 0.1; done"}])})
    try:
        job = wait_until(lambda: next((j["job"] for j in zen_json("status")["jobs"]), None), timeout=60,
                         message="the attached job")
        wait_until(lambda: any(e["type"] == "guard.allowed" for e in timeline(fake_home, job)), timeout=60,
                   message="the session at work")
        os.killpg(session.pid, signal.SIGKILL)      # the terminal closed hard: nothing recorded
        session.wait(timeout=30)
    finally:
        never.touch()
    assert zen_json("show", job)["state"]["state"] == "working"
    r = zen_run("claude", "-p", "again", cwd=git_repo)
    assert r.returncode == 0 and "had lost its zen run" in r.stderr, r.stderr
    ended = [e for e in timeline(fake_home, job) if e["type"] == "agent.exited"]
    assert len(ended) == 1 and ended[0]["exit_code"] is None and "zen run" in ended[0]["why"]
    assert zen_json("show", job)["state"]["state"] == "exited"


def test_aider_starts_as_its_lane_allows_unguarded_agents(home: Path, lane: Path, tmp_path: Path) -> None:
    from tests.attached.conftest import set_agent_command

    show = tmp_path / "show-argv"
    show.write_text('#!/bin/sh\nprintf "%s\\n" "$@"\n')
    show.chmod(0o755)
    set_agent_command(home, "aider", str(show))
    assert zen("lane", "remove", "app").returncode == 0
    assert zen("lane", "add", "app", str(lane), "--unguarded", "refuse").returncode == 0
    r = zen_run("aider", "--model", "m", cwd=lane)
    assert r.returncode == 1 and "refuses such agents" in r.stderr and "Traceback" not in r.stderr
    assert not [p for p in (home / "jobs").iterdir() if not p.name.startswith(".")]   # no record left
    assert zen("lane", "remove", "app").returncode == 0
    assert zen("lane", "add", "app", str(lane), "--unguarded", "accept").returncode == 0
    r = zen_run("aider", "--model", "m", "--yes", cwd=lane)
    assert r.returncode == 0, r.stderr
    argv = r.stdout.splitlines()
    assert argv[-3:] == ["--model", "m", "--yes"] and "--no-suggest-shell-commands" in argv
    assert any("hook aider-notify" in a for a in argv)
    assert "unguarded" in r.stderr and "accepts that" in r.stderr


@pytest.mark.parametrize("how", ["cancel", "finish"])
def test_zen_cancel_and_finish_stop_an_attached_agent(fake_home: Path, git_repo: Path, tmp_path: Path,
                                                      how: str) -> None:
    never = tmp_path / "never"
    session = subprocess.Popen(
        [*ZEN, "run", "claude"], cwd=git_repo, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL, env={**os.environ, "FAKE_CLAUDE_SCRIPT": json.dumps([
            {"tool": "Bash", "command": f"while [ ! -e {never} ]; do sleep 0.1; done"}])})
    try:
        job = wait_until(lambda: next((j["job"] for j in zen_json("status")["jobs"]), None), timeout=60,
                         message="the attached job")
        wait_until(lambda: any(e["type"] == "guard.allowed" for e in timeline(fake_home, job)), timeout=60,
                   message="the session at work")
        started = time.monotonic()
        r = zen(how, job)
        assert r.returncode == 0, r.stderr
        code = session.wait(timeout=30)       # the agent stopped: no need to wait for it to finish
        took = time.monotonic() - started
    finally:
        never.touch()
        if session.poll() is None:
            session.kill()
    assert code != 0
    types = [e["type"] for e in timeline(fake_home, job)]
    assert types.count("agent.exited") == 1, types
    assert zen_json("show", job)["state"]["state"] == ("cancelled" if how == "cancel" else "exited")
    assert took < 20, took


def test_with_a_supervisor_and_its_resident_guardian_running_the_session_is_judged_the_same(
        fake_home: Path, git_repo: Path, tmp_path: Path, isolated_env: Path) -> None:
    from tests.claude.zenrun import supervisor

    with supervisor(fake_home, tmp_path / "sup.log"):
        wait_until(lambda: any(p.suffix == ".sock" or p.is_socket() for p in (fake_home / "control").iterdir()),
                   timeout=60, message="the resident guardian's socket")
        r = zen_run("claude", "-p", "tidy", cwd=git_repo, script=[
            {"tool": "Bash", "command": "rm -rf ~"},
            {"tool": "Write", "file_path": str(git_repo / "n.txt"), "content": "n\n"}])
    assert r.returncode == 0, r.stderr
    assert [c["allowed"] for c in calls(r.stdout)] == [False, True]
    assert isolated_env.is_dir() and (git_repo / "n.txt").is_file()
    job = next(j["job"] for j in zen_json("status")["jobs"])
    evs = timeline(fake_home, job)
    assert [e["command"] for e in evs if e["type"] == "guard.denied"] == ["rm -rf ~"]
    assert zen_json("show", job)["state"]["state"] == "exited"


@pytest.mark.parametrize(("agent", "args", "said"), [
    ("claude", ["--settings", "mine.json", "-p", "x"], "its own --settings"),
    ("claude", ["-p", "x", "--settings={}"], "its own --settings"),
    ("codex", ["-c", "hooks.PreToolUse=[]", "exec", "x"], "sets Codex's hooks.PreToolUse itself"),
    ("codex", ["--config=features.hooks=false"], "sets Codex's features.hooks itself"),
    ("codex", ["exec", "--dangerously-bypass-approvals-and-sandbox", "x"], "would take down the wall"),
    ("codex", ["--sandbox", "danger-full-access"], "would take down the wall"),
])
def test_arguments_that_would_replace_zens_hooks_or_wall_are_refused(
        fake_home: Path, git_repo: Path, agent: str, args: list[str], said: str) -> None:
    r = zen_run(agent, *args, cwd=git_repo)
    assert r.returncode == 2 and said in r.stderr and "Traceback" not in r.stderr, r.stderr
    assert not [p for p in (fake_home / "jobs").iterdir() if not p.name.startswith(".")]   # nothing started


def test_ctrl_c_in_the_terminal_is_the_agents_to_answer_and_zen_run_records_how_it_ended(
        fake_home: Path, git_repo: Path, tmp_path: Path) -> None:
    sock = os.path.join(os.environ["TMUX_TMPDIR"], "term")
    never = tmp_path / "never"
    script = json.dumps([{"tool": "Bash", "command": f"while [ ! -e {never} ]; do sleep 0.1; done"}])
    inner = (f"FAKE_CLAUDE_ON_INT=7 FAKE_CLAUDE_SCRIPT='{script}' {' '.join(ZEN)} run claude; "
             "echo zen-run-exit=$?; sleep 600")
    subprocess.run(["tmux", "-S", sock, "new-session", "-d", "-c", str(git_repo), inner], check=True, timeout=30)

    def screen() -> str:
        return subprocess.run(["tmux", "-S", sock, "capture-pane", "-p", "-t", "0"], capture_output=True,
                              text=True, timeout=30).stdout
    try:
        job = wait_until(lambda: next((j["job"] for j in zen_json("status")["jobs"]), None), timeout=60,
                         message="the attached job")
        wait_until(lambda: any(e["type"] == "guard.allowed" for e in timeline(fake_home, job)), timeout=60,
                   message="the session at work")
        subprocess.run(["tmux", "-S", sock, "send-keys", "-t", "0", "C-c"], check=True, timeout=30)
        wait_until(lambda: "zen-run-exit=" in screen(), timeout=60, message="zen run's end")
    finally:
        never.touch()
    assert "zen-run-exit=7" in screen(), screen()
    ended = [e for e in timeline(fake_home, job) if e["type"] == "agent.exited"]
    assert len(ended) == 1 and ended[0]["exit_code"] == 7

"""A job's life under a real supervisor: spawn, exit codes, turns, send, output, harvest."""

from __future__ import annotations

import os
from pathlib import Path

from tests.helpers import git, one_line, wait_until, zen
from tests.supervisor.util import (
    dispatch_cmd,
    dispatch_sim,
    events,
    gap_free,
    review_files,
    review_show,
    types,
    wait_event,
    wait_state,
)
from zen.store.home import Home


def test_happy_path_worktree_agent_exit_and_review_branch(zh: Path, lane: Path, sup) -> None:
    job = dispatch_cmd("echo working; echo result > result.txt; exit 0", "happy")
    s = wait_state(zh, job, "harvested")
    assert s.exit_code == 0 and s.review_branch == f"zen/review/{job}"
    assert types(zh, job)[:6] == ["task.received", "job.queued", "preflight.passed", "worktree.created", "spawn.intent",
                                 "agent.spawned"]
    wt = zh / "worktrees" / job
    assert s.worktree == str(wt) and wt.is_dir()
    assert git(wt, "rev-parse", "--abbrev-ref", "HEAD") == f"zen/{job}"
    assert review_show(lane, job, "result.txt") == "result"
    assert (zh / "jobs" / job / "review.md").is_file()
    assert "working" in (zh / "jobs" / job / "pane.log").read_text()
    # the lane's own checkout is never touched
    assert not (lane / "result.txt").exists() and git(lane, "status", "--porcelain") == ""
    assert gap_free(zh, job)


def test_a_non_zero_exit_code_is_recorded(zh: Path, sup) -> None:
    job = dispatch_cmd("echo oops; sleep 0.3; exit 7", "seven")
    s = wait_state(zh, job, "harvested")
    assert s.exit_code == 7 and s.exit_signal is None


def test_an_agent_that_exits_at_once_keeps_its_code_and_output(zh: Path, sup) -> None:
    a = dispatch_cmd("exit 5", "instant")
    b = dispatch_cmd("echo said-something; exit 0", "instant-output")
    assert wait_state(zh, a, "harvested").exit_code == 5
    assert wait_state(zh, b, "harvested").exit_code == 0
    # the pane's output was piped before the agent started: nothing lost
    assert "said-something" in (zh / "jobs" / b / "pane.log").read_text()


def test_a_missing_program_exits_127(zh: Path, sup) -> None:
    r = zen("dispatch", "x", "--name", "nope", "--cmd", "no-such-program-zen --flag")
    job = r.stdout.strip()
    assert wait_state(zh, job, "harvested").exit_code == 127


def test_a_signal_death_is_recorded_as_a_signal(zh: Path, sup) -> None:
    job = dispatch_cmd("sleep 0.2; kill -9 $$", "killed")
    s = wait_state(zh, job, "harvested")
    assert s.exit_signal == 9 and s.exit_code is None


def test_acceptance_cmd_waits_then_works_after_send_then_exit_3(zh: Path, lane: Path, sup) -> None:
    """Prints for a while, waits for a line: waiting within idle_after + 1 s; send: working;
    exit 3: recorded and harvested with the files it wrote."""
    job = dispatch_cmd(
        "for i in 1 2 3 4 5; do echo step $i; sleep 0.2; done; echo draft > draft.txt; read answer; "
        "for i in 1 2 3 4 5 6; do echo busy $answer $i; sleep 0.15; done; echo \"$answer\" > answer.txt; exit 3",
        "accept")
    wait_state(zh, job, "working")
    wait_event(zh, job, "agent.spawned")
    # quiet since the read: waiting within idle_after (0.5 s) + 1 s of the last output
    wait_until((zh / "worktrees" / job / "draft.txt").exists, timeout=10)
    s = wait_state(zh, job, "waiting", timeout=1.5)
    assert s.reason == "idle"
    r = zen("send", job, "forty-two")
    assert r.returncode == 0, r.stderr
    wait_state(zh, job, "working", timeout=3)
    s = wait_state(zh, job, "harvested")
    assert s.exit_code == 3
    assert set(review_files(lane, job)) >= {"draft.txt", "answer.txt"}
    assert review_show(lane, job, "answer.txt") == "forty-two"
    kinds = types(zh, job)
    assert kinds.index("turn.waiting") < kinds.index("input.sent") < kinds.index("agent.exited")
    assert "turn.working" in kinds[kinds.index("input.sent"):]
    assert gap_free(zh, job)


def test_send_refuses_unless_waiting_and_force_overrides(zh: Path, sup) -> None:
    job = dispatch_cmd("while true; do echo tick; sleep 0.1; done", "chatty")
    wait_event(zh, job, "agent.spawned")
    r = zen("send", job, "hello")
    assert r.returncode == 1 and one_line(r.stderr) and "not waiting" in r.stderr
    assert "input.sent" not in types(zh, job)
    r = zen("send", job, "hello", "--force")
    assert r.returncode == 0, r.stderr
    ev = wait_event(zh, job, "input.sent")
    assert ev["forced"] is True and ev["text"] == "hello"
    assert zen("cancel", job).returncode == 0


def test_send_multi_line_text_arrives_as_lines(zh: Path, lane: Path, sup) -> None:
    job = dispatch_cmd("read a; read b; read c; printf '%s|%s|%s' \"$a\" \"$b\" \"$c\" > got.txt", "multi")
    wait_state(zh, job, "waiting")
    r = zen("send", job, "one\ntwo words\nthree")
    assert r.returncode == 0, r.stderr
    wait_state(zh, job, "harvested")
    assert review_show(lane, job, "got.txt") == "one|two words|three"


def test_send_to_a_finished_job_is_refused(zh: Path, sup) -> None:
    job = dispatch_cmd("exit 0", "done-already")
    wait_state(zh, job, "harvested")
    r = zen("send", job, "hi")
    assert r.returncode == 1 and one_line(r.stderr) and "harvested" in r.stderr


def test_output_activity_cycles_working_and_waiting(zh: Path, sup) -> None:
    # each pause is a wait for a line that does not come (bash's read -t): a silent sleep would be
    # work, not a wait (test_asleep.py)
    wait = "bash -c 'read -t 1.5 x'"
    job = dispatch_cmd(f"echo a; {wait}; echo b; {wait}; echo c; exit 0", "cycles")
    wait_state(zh, job, "harvested", timeout=20)
    turns = [(e["type"], e.get("reason")) for e in events(zh, job) if e["type"].startswith("turn.")]
    # quiet, output, quiet (then output and the exit, which may fall in one tick): each change once
    assert turns[:3] == [("turn.waiting", "idle"), ("turn.working", None), ("turn.waiting", "idle")]
    assert turns[3:] in ([], [("turn.working", None)])


def test_a_question_on_a_quiet_screen_is_waiting_for_a_question(zh: Path, sup) -> None:
    job = dispatch_cmd("echo thinking; printf 'Overwrite the config? [y/n] '; read yn; exit 0", "asks")
    s = wait_state(zh, job, "waiting")
    assert s.reason == "question"
    zen("send", job, "y")
    wait_state(zh, job, "harvested")


def test_sim_hooks_drive_turns_and_answers_arrive(zh: Path, lane: Path, tmp_path: Path, sup) -> None:
    job = dispatch_sim(zh, tmp_path, "sim-ask", [
        {"say": "Looking around."},
        {"ask": "Which port should the server use?", "expect": "8080", "otherwise_exit": 9},
        {"say": "Using it."},
        {"exit": 0},
    ])
    s = wait_state(zh, job, "waiting")
    assert s.reason == "question"
    waiting = [e for e in events(zh, job) if e["type"] == "turn.waiting"]
    assert waiting[0]["actor"] == "hook" and waiting[0]["hook"] == "Stop"
    assert zen("send", job, "use 8080").returncode == 0
    s = wait_state(zh, job, "harvested")
    assert s.exit_code == 0
    by_hook = [e for e in events(zh, job) if e["actor"] == "hook" and e["type"] == "turn.working"]
    assert len(by_hook) >= 2  # the first prompt and the answer (UserPromptSubmit)
    assert "session.ended" in types(zh, job)
    assert "got the expected answer" in (zh / "jobs" / job / "pane.log").read_text()


def test_a_stop_hook_is_not_overridden_by_the_activity_heuristic(zh: Path, tmp_path: Path, sup) -> None:
    job = dispatch_sim(zh, tmp_path, "sim-idle", [{"say": "Ready."}, {"wait": True}])
    wait_state(zh, job, "waiting")
    wait_until(lambda: any(e["type"] == "turn.waiting" and e["actor"] == "hook" for e in events(zh, job)))
    assert zen("send", job, "status please").returncode == 0
    wait_until(lambda: "ok: status please" in (zh / "jobs" / job / "pane.log").read_text())
    s = wait_state(zh, job, "waiting")
    # each turn went working -> waiting by hooks; the supervisor never contradicted a fresh hook
    turns = [(e["type"], e["actor"]) for e in events(zh, job) if e["type"].startswith("turn.")]
    assert ("turn.working", "hook") in turns and turns[-1][0] == "turn.waiting"
    assert s.turns >= 2
    r = zen("finish", job)
    assert r.returncode == 0, r.stderr
    s = wait_state(zh, job, "harvested")
    assert s.exit_code == 0  # /exit typed: a graceful end, not a signal


def test_output_command_strips_escapes_and_tails(zh: Path, sup) -> None:
    job = dispatch_cmd("printf '\\033[31mred line\\033[0m\\n'; echo second; echo third; exit 0", "colors")
    wait_state(zh, job, "harvested")
    r = zen("output", job)
    assert r.returncode == 0 and "red line" in r.stdout and "\x1b[" not in r.stdout
    assert "\x1b[31m" in zen("output", job, "--raw").stdout
    tail = zen("output", job, "--lines", "2").stdout.strip().splitlines()
    assert tail == ["second", "third"]


def test_output_screen_and_follow(zh: Path, sup) -> None:
    job = dispatch_cmd("echo on-screen; read x; echo after $x; exit 0", "screen")
    wait_state(zh, job, "waiting")
    r = zen("output", job, "--screen")
    assert r.returncode == 0 and "on-screen" in r.stdout
    assert zen("send", job, "go").returncode == 0
    r = zen("output", job, "--follow", timeout=30)
    assert r.returncode == 0 and "after go" in r.stdout


def test_the_agent_gets_the_supervisor_env_plus_zen_vars(zh: Path, lane: Path, sups) -> None:
    cfg = zh / "zen.yaml"
    cfg.write_text(cfg.read_text().replace("agents:\n", "agents:\n  cmd:\n    env: {EXTRA_VAR: added}\n"
                                                           "    drop_env: [DROP_ME]\n", 1))
    sups.start(env={"MY_API_KEY": "sk-test-123", "DROP_ME": "secret"})
    job = dispatch_cmd("env > env.txt; echo $TMPDIR > tmpdir.txt; touch \"$TMPDIR/scratch\"; exit 0", "env")
    wait_state(zh, job, "harvested")
    env = dict(line.split("=", 1) for line in review_show(lane, job, "env.txt").splitlines() if "=" in line)
    wt = zh / "worktrees" / job
    assert env["MY_API_KEY"] == "sk-test-123" and env["EXTRA_VAR"] == "added" and "DROP_ME" not in env
    assert env["ZEN_HOME"] == str(zh) and env["ZEN_JOB_ID"] == job and env["ZEN_WORKTREE"] == str(wt)
    assert env["ZEN_PROMPT"] == "run env" and env["ZEN_HANDOFF"] == str(zh / "jobs" / job / "handoff.md")
    assert env["TMPDIR"] == str(wt / ".zen-tmp") and (wt / ".zen-tmp" / "scratch").exists()
    assert "TMUX" in env and not env["TMUX"].startswith(os.environ.get("TMUX", "\0"))
    # zen's own dirs never reach the review branch
    assert not any(f.startswith((".zen/", ".zen-tmp/")) for f in review_files(lane, job))
    handoff = (zh / "jobs" / job / "handoff.md").read_text()
    assert "run env" in handoff and "lane `app`" in handoff and str(wt) in handoff


def test_setup_command_and_included_files(zh: Path, lane: Path, sups) -> None:
    (lane / ".env.local").write_text("TOKEN=local\n")
    cfg = zh / "zen.yaml"
    text = cfg.read_text().replace("    domain: code\n",
                                   "    domain: code\n    setup: echo prepared > setup.txt\n"
                                   "    include: [.env.local, missing.txt]\n", 1)
    cfg.write_text(text)
    sups.start()
    job = dispatch_cmd("cat .env.local setup.txt > seen.txt; exit 0", "setup")
    wait_state(zh, job, "harvested")
    ev = {e["type"]: e for e in events(zh, job)}
    assert ev["setup.done"]["exit_code"] == 0
    assert ev["files.included"]["files"] == [".env.local"] and ev["files.included"]["missing"] == ["missing.txt"]
    kinds = types(zh, job)
    assert kinds.index("worktree.created") < kinds.index("setup.done") < kinds.index("agent.spawned")
    assert (zh / "worktrees" / job / "seen.txt").read_text() == "TOKEN=local\nprepared\n"


def test_a_failing_setup_fails_the_job_without_starting_the_agent(zh: Path, sups) -> None:
    cfg = zh / "zen.yaml"
    cfg.write_text(cfg.read_text().replace("    domain: code\n",
                                           "    domain: code\n    setup: echo broken; exit 4\n", 1))
    sups.start()
    job = dispatch_cmd("echo never > never.txt", "badsetup")
    s = wait_state(zh, job, "failed")
    assert "setup" in (s.reason or "") and "4" in (s.reason or "")
    ev = wait_event(zh, job, "setup.failed")
    assert ev["exit_code"] == 4 and "broken" in ev["output"]
    assert "agent.spawned" not in types(zh, job)


def test_a_spawn_error_fails_the_job_with_a_reason(zh: Path, sups) -> None:
    job = dispatch_cmd("exit 0", "orphan")
    zen("lane", "remove", "app")
    sups.start()
    s = wait_state(zh, job, "failed")
    assert "lane" in (s.reason or "")


def test_priority_then_age_with_one_slot(zh: Path, sups) -> None:
    cfg = zh / "zen.yaml"
    cfg.write_text(cfg.read_text().replace("max_concurrent_tasks: 5", "max_concurrent_tasks: 1"))
    low = dispatch_cmd("sleep 0.2", "low", "--priority", "5")
    first = dispatch_cmd("sleep 0.2", "first", "--priority", "2")
    second = dispatch_cmd("sleep 0.2", "second", "--priority", "2")
    sups.start()
    for job in (low, first, second):
        wait_state(zh, job, "harvested")

    def started(job: str) -> str:
        return next(e["ts"] for e in events(zh, job) if e["type"] == "agent.spawned")

    assert started(first) < started(second) < started(low)
    # never two at once: each started after the previous one exited
    exited_first = next(e["ts"] for e in events(zh, first) if e["type"] == "agent.exited")
    assert exited_first <= started(second)


def test_timeout_stops_and_harvests(zh: Path, lane: Path, sup) -> None:
    job = dispatch_cmd("echo partial > partial.txt; sleep 100", "slow", "--timeout", "1s")
    s = wait_state(zh, job, "harvested")
    assert s.timed_out and s.exit_signal == 15
    assert review_show(lane, job, "partial.txt") == "partial"


def test_two_agents_on_one_lane_do_not_interfere(zh: Path, lane: Path, sup) -> None:
    a = dispatch_cmd("echo alpha > shared.txt; git add shared.txt; git commit -qm 'alpha work'; exit 0", "alpha")
    b = dispatch_cmd("echo beta > shared.txt; sleep 0.5; exit 0", "beta")
    sa, sb = wait_state(zh, a, "harvested"), wait_state(zh, b, "harvested")
    assert sa.worktree != sb.worktree
    assert review_show(lane, a, "shared.txt") == "alpha" and review_show(lane, b, "shared.txt") == "beta"
    assert "alpha work" in git(lane, "log", "--format=%s", f"zen/review/{a}")
    assert "alpha work" not in git(lane, "log", "--format=%s", f"zen/review/{b}")
    assert git(lane, "rev-parse", "main") == git(lane, "rev-parse", f"{sa.base_commit}")


def test_the_users_default_tmux_server_is_untouched(zh: Path, sup) -> None:
    sock_dir = Path(os.environ["TMUX_TMPDIR"]) / f"tmux-{os.getuid()}"
    job = dispatch_cmd("echo hi; sleep 0.3", "tmuxcheck")
    wait_event(zh, job, "agent.spawned")
    names = sorted(p.name for p in sock_dir.iterdir())
    assert names == [Home(zh).tmux_socket]  # zen's private socket, no "default"
    r = zen("status")
    assert r.returncode == 0
    wait_state(zh, job, "harvested")
    assert not (sock_dir / "default").exists()


def test_a_command_the_guardian_denies_never_runs(zh: Path, lane: Path, tmp_path: Path, sup) -> None:
    victim = Path(os.environ["HOME"]) / "precious.txt"
    victim.write_text("keep me\n")
    job = dispatch_sim(zh, tmp_path, "sim-risky", [
        {"bash": f"rm -f {victim}", "description": "delete outside the worktree"},
        {"bash": "cat ~/.ssh/id_rsa", "description": "read a credential"},
        {"say": "gave up"},
        {"exit": 0},
    ])
    s = wait_state(zh, job, "harvested")
    assert s.exit_code == 0 and victim.read_text() == "keep me\n"
    log = (zh / "jobs" / job / "pane.log").read_text()
    assert log.count("blocked:") == 2


def test_a_permission_notification_shows_waiting_for_approval(zh: Path, tmp_path: Path, sup) -> None:
    job = dispatch_sim(zh, tmp_path, "sim-approve", [
        {"say": "I need to run the migration."},
        {"notify": "Claude needs your permission to use Bash", "type": "permission_prompt"},
        {"sleep": 30},
    ])
    s = wait_state(zh, job, "waiting")
    assert s.reason == "approval"
    ev = wait_event(zh, job, "turn.waiting", reason="approval")
    assert ev["actor"] == "hook" and ev["hook"] == "Notification"
    assert zen("cancel", job).returncode == 0
    wait_state(zh, job, "cancelled")


def test_a_zen_package_in_the_repository_is_never_what_runs(zh: Path, lane: Path, tmp_path: Path, sup) -> None:
    # a repository with a top-level zen/ (zen's own, or one an agent wrote): the sim agent and
    # its hooks start in the worktree, and must still run the installed zen, not this one
    marker = tmp_path / "the-worktree-copy-ran"
    fake = lane / "zen" / "agents"
    fake.mkdir(parents=True)
    (lane / "zen" / "__init__.py").write_text(f"open({str(marker)!r}, 'w').write('ran')\n")
    (fake / "__init__.py").write_text("")
    (fake / "simagent.py").write_text("raise SystemExit(3)\n")
    git(lane, "add", "zen")
    git(lane, "commit", "-q", "-m", "a zen package of its own")
    job = dispatch_sim(zh, tmp_path, "sim-shadow", [{"write": {"path": "out.txt", "content": "done\n"}}, {"exit": 0}])
    s = wait_state(zh, job, "harvested")
    assert s.exit_code == 0 and review_show(lane, job, "out.txt") == "done"
    assert not marker.exists()

"""finish, cancel, harvest and clean: with the supervisor running and without it."""

from __future__ import annotations

from pathlib import Path

from tests.helpers import git, one_line, wait_until, zen
from tests.supervisor.util import (
    dispatch_cmd,
    dispatch_sim,
    events,
    gap_free,
    review_files,
    review_show,
    snap,
    types,
    wait_event,
    wait_state,
)
from zen.adapters.tmux import Tmux
from zen.store.home import Home


def test_cancel_stops_harvests_and_marks_cancelled(zh: Path, lane: Path, sup) -> None:
    job = dispatch_cmd("echo partial > partial.txt; echo started; sleep 100", "cancel-me")
    wait_until((zh / "worktrees" / job / "partial.txt").exists, timeout=15)
    r = zen("cancel", job)
    assert r.returncode == 0, r.stderr
    assert "cancelled" in r.stdout
    s = wait_state(zh, job, "cancelled")
    assert s.exit_signal == 15 and s.cancelled
    wait_event(zh, job, "harvest.done")
    assert review_show(lane, job, "partial.txt") == "partial"
    kinds = types(zh, job)
    assert kinds.count("agent.exited") == 1 and kinds.count("harvest.done") == 1
    assert kinds.index("job.cancelled") < kinds.index("agent.exited")
    assert snap(zh, job).state.value == "cancelled"  # the harvest does not un-cancel it
    assert gap_free(zh, job)
    r = zen("cancel", job)
    assert r.returncode == 1 and one_line(r.stderr)


def test_cancel_kills_an_agent_that_ignores_term(zh: Path, sup) -> None:
    job = dispatch_cmd("trap '' TERM; echo stubborn; while true; do sleep 0.1; done", "stubborn")
    wait_event(zh, job, "agent.spawned")
    wait_until(lambda: "stubborn" in (zh / "jobs" / job / "pane.log").read_text())
    r = zen("cancel", job)
    assert r.returncode == 0, r.stderr
    s = wait_state(zh, job, "cancelled")
    wait_event(zh, job, "agent.exited")
    wait_event(zh, job, "harvest.done")
    assert Tmux.for_home(Home(zh)).pane(s.tmux_session) is None  # KILLed after the grace, closed


def test_cancel_a_queued_job_without_a_supervisor_then_it_never_starts(zh: Path, sups) -> None:
    job = dispatch_cmd("echo never > never.txt", "queued-cancel")
    other = dispatch_cmd("exit 0", "runs")
    # claim the tasks without starting anything: a supervisor pass with no free slot
    cfg = zh / "zen.yaml"
    cfg.write_text(cfg.read_text().replace("max_concurrent_tasks: 5", "max_concurrent_tasks: 0"))
    assert zen("supervise", "--once").returncode == 0
    assert snap(zh, job).state.value == "queued"
    r = zen("cancel", job)
    assert r.returncode == 0, r.stderr
    cfg.write_text(cfg.read_text().replace("max_concurrent_tasks: 0", "max_concurrent_tasks: 5"))
    sups.start()
    wait_state(zh, other, "harvested")
    assert snap(zh, job).state.value == "cancelled"
    assert "worktree.created" not in types(zh, job)


def test_finish_a_sim_types_its_exit_command(zh: Path, lane: Path, tmp_path: Path, sup) -> None:
    job = dispatch_sim(zh, tmp_path, "sim-finish", [{"say": "ready"}, {"wait": True}])
    wait_state(zh, job, "waiting")
    r = zen("finish", job)
    assert r.returncode == 0, r.stderr
    s = wait_state(zh, job, "harvested")
    assert s.exit_code == 0 and s.exit_signal is None
    assert "harvest.done" in types(zh, job)


def test_finish_a_cmd_agent_sends_term_and_harvests(zh: Path, lane: Path, sup) -> None:
    job = dispatch_cmd("echo wip > wip.txt; sleep 100", "finish-cmd")
    wait_until((zh / "worktrees" / job / "wip.txt").exists, timeout=15)
    r = zen("finish", job)
    assert r.returncode == 0, r.stderr
    s = wait_state(zh, job, "harvested")
    assert s.exit_signal == 15
    assert review_show(lane, job, "wip.txt") == "wip"


def test_harvest_keeps_agent_commits_and_untracked_files(zh: Path, lane: Path, sup) -> None:
    script = ("mkdir -p lib && echo 'def f(): pass' > lib/mod.py && git add lib && git commit -qm 'agent: add mod' && "
              "echo notes > NOTES.txt && echo changed >> README.md && echo junk > \"$TMPDIR/junk\"; exit 0")
    job = dispatch_cmd(script, "commits")
    s = wait_state(zh, job, "harvested")
    files = review_files(lane, job)
    assert {"lib/mod.py", "NOTES.txt", "README.md"} <= set(files)
    assert not any(f.startswith((".zen", ".zen-tmp")) for f in files)
    log = git(lane, "log", "--format=%s", f"{s.base_commit}..zen/review/{job}").splitlines()
    assert "agent: add mod" in log and len(log) == 2  # the agent's commit, then zen's snapshot
    assert "changed" in review_show(lane, job, "README.md")
    # the agent's own branch is untouched: it still ends at the agent's commit
    assert git(lane, "log", "-1", "--format=%s", f"zen/{job}") == "agent: add mod"
    ev = wait_event(zh, job, "harvest.done")
    assert ev["branch"] == f"zen/review/{job}" and ev["files"] >= 3


def test_harvest_a_live_agent_snapshots_without_stopping_it(zh: Path, lane: Path, sup) -> None:
    job = dispatch_cmd("echo first > first.txt; read more; echo second > second.txt; exit 0", "live")
    wait_state(zh, job, "waiting")
    r = zen("harvest", job)
    assert r.returncode == 0, r.stderr
    assert f"zen/review/{job}" in r.stdout
    assert review_files(lane, job).count("first.txt") == 1
    assert snap(zh, job).state.value == "waiting"  # still running
    first_tip = git(lane, "rev-parse", f"zen/review/{job}")
    assert zen("harvest", job).returncode == 0
    assert git(lane, "rev-parse", f"zen/review/{job}") == first_tip  # idempotent
    assert zen("send", job, "go").returncode == 0
    wait_state(zh, job, "harvested")
    assert {"first.txt", "second.txt"} <= set(review_files(lane, job))


def test_harvest_before_any_worktree_is_refused(zh: Path) -> None:
    dispatch_cmd("exit 0", "not-started")
    cfg = zh / "zen.yaml"
    cfg.write_text(cfg.read_text().replace("max_concurrent_tasks: 5", "max_concurrent_tasks: 0"))
    assert zen("supervise", "--once").returncode == 0  # claims it, starts nothing
    r = zen("harvest", "not-started")
    assert r.returncode == 1 and one_line(r.stderr)


def test_commands_work_with_no_supervisor_running(zh: Path, lane: Path, sups) -> None:
    proc = sups.start()
    job = dispatch_cmd("echo hi > hi.txt; read x; exit 0", "nosup")
    wait_state(zh, job, "waiting")
    sups.stop(proc)
    r = zen("cancel", job)
    assert r.returncode == 0, r.stderr
    s = wait_state(zh, job, "cancelled")
    assert s.exit_signal == 15
    assert review_show(lane, job, "hi.txt") == "hi"
    assert gap_free(zh, job)


def test_clean_removes_harvested_worktrees_only(zh: Path, lane: Path, sup) -> None:
    done = dispatch_cmd("echo x > x.txt; exit 0", "cleanable")
    live = dispatch_cmd("echo y > y.txt; read x; exit 0", "still-live")
    wait_state(zh, done, "harvested")
    wait_state(zh, live, "waiting")
    r = zen("clean", live)
    assert r.returncode == 1 and one_line(r.stderr)
    r = zen("clean", done)
    assert r.returncode == 0, r.stderr
    assert not (zh / "worktrees" / done).exists()
    assert review_show(lane, done, "x.txt") == "x"  # the branches stay
    assert git(lane, "rev-parse", "--verify", f"zen/{done}")
    assert "worktree.removed" in types(zh, done)
    r = zen("clean", "--harvested")
    assert r.returncode == 0 and (zh / "worktrees" / live).exists()


def test_clean_never_removes_work_that_is_not_on_the_review_branch(zh: Path, lane: Path, sup) -> None:
    job = dispatch_cmd("echo x > x.txt; exit 0", "late-change")
    wait_state(zh, job, "harvested")
    (zh / "worktrees" / job / "late.txt").write_text("written after the harvest\n")
    r = zen("clean", job)
    assert r.returncode == 1 and one_line(r.stderr)
    assert (zh / "worktrees" / job / "late.txt").exists()


def test_attach_refuses_without_a_terminal_or_a_live_job(zh: Path, sup) -> None:
    job = dispatch_cmd("read x", "attachable")
    wait_state(zh, job, "waiting")
    r = zen("attach", job)
    assert r.returncode == 1 and one_line(r.stderr) and "terminal" in r.stderr
    done = dispatch_cmd("exit 0", "gone")
    wait_state(zh, done, "harvested")
    r = zen("attach", done)
    assert r.returncode == 1 and one_line(r.stderr) and "harvested" in r.stderr
    spawned = next(e for e in events(zh, job) if e["type"] == "agent.spawned")
    assert spawned["socket"] == Home(zh).tmux_socket

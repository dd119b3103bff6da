"""One supervisor per home, --detach/--stop, signals, and restarts after kill -9 without loss."""

from __future__ import annotations

import json
import os
import shlex
import signal
import subprocess
import sys
import time
from pathlib import Path

from tests.helpers import REPO_ROOT, ZEN, one_line, wait_until, zen, zen_json
from tests.supervisor.util import (
    dispatch_cmd,
    events,
    gap_free,
    review_show,
    snap,
    types,
    wait_event,
    wait_state,
)
from zen.adapters.tmux import Tmux
from zen.orchestration.read.status import supervisor_pid
from zen.store.home import Home
from zen.store.jobs import JobStore


def test_a_second_supervisor_exits_1_with_a_sentence(zh: Path, sup) -> None:
    r = zen("supervise")
    assert r.returncode == 1 and one_line(r.stderr)
    assert "already running" in r.stderr and str(sup.pid) in r.stderr
    assert (zh / "control" / "supervisor.lock").read_text().split()[0] == str(sup.pid)


def test_status_says_whether_a_supervisor_runs_and_heartbeat_is_fresh(zh: Path, sups) -> None:
    assert zen_json("status")["supervisor"]["running"] is False
    proc = sups.start()
    data = zen_json("status")["supervisor"]
    assert data["running"] is True and data["pid"] == proc.pid
    assert f"running (pid {proc.pid})" in zen("status").stdout

    def beat() -> dict | None:
        try:
            return json.loads((zh / "control" / "heartbeat").read_text())
        except (OSError, ValueError):
            return None

    first = wait_until(beat)
    assert first["pid"] == proc.pid
    wait_until(lambda: beat()["ts"] != first["ts"], timeout=5, message="a newer heartbeat")
    assert sups.stop(proc) == 0
    assert zen_json("status")["supervisor"]["running"] is False


def test_detach_and_stop_leave_agents_running(zh: Path, sups) -> None:
    r = zen("supervise", "--detach")
    assert r.returncode == 0, r.stderr
    pid = supervisor_pid(Home(zh))
    assert pid and pid > 0 and f"pid {pid}" in r.stdout
    try:
        job = dispatch_cmd("echo up; read x; exit 0", "detached")
        wait_state(zh, job, "waiting")
        r = zen("supervise", "--detach")
        assert r.returncode == 1 and one_line(r.stderr)
        r = zen("supervise", "--stop")
        assert r.returncode == 0, r.stderr
        assert supervisor_pid(Home(zh)) is None
        s = snap(zh, job)
        assert Tmux.for_home(Home(zh)).pane(s.tmux_session).dead is False  # the agent lives on
        assert "supervisor.log" in " ".join(os.listdir(zh / "logs"))
    finally:
        pid = supervisor_pid(Home(zh))
        if pid:
            os.kill(pid, signal.SIGKILL)


def test_sigterm_stops_claiming_and_exits_0_with_agents_running(zh: Path, sups) -> None:
    proc = sups.start()
    job = dispatch_cmd("echo up; read x; exit 0", "survivor")
    wait_state(zh, job, "waiting")
    proc.send_signal(signal.SIGINT)
    assert proc.wait(timeout=20) == 0
    later = dispatch_cmd("exit 0", "unclaimed")
    time.sleep(0.5)  # nothing may claim it: there is no supervisor
    assert (zh / "spool" / "new" / f"{later}.yaml").exists()
    assert Tmux.for_home(Home(zh)).pane(snap(zh, job).tmux_session).dead is False
    log = [json.loads(x) for x in (zh / "logs" / "control.jsonl").read_text().splitlines()]
    assert [e["type"] for e in log][-1] == "supervisor.stopped"


def test_restart_after_kill_9_tracks_running_agents_again(zh: Path, lane: Path, sups) -> None:
    first = sups.start()
    job = dispatch_cmd("echo up; read x; echo \"$x\" > answer.txt; sleep 0.3; exit 4", "restart-live")
    wait_state(zh, job, "waiting")
    sups.kill9(first)
    assert supervisor_pid(Home(zh)) is None
    sups.start()
    time.sleep(0.3)
    assert zen("send", job, "after restart").returncode == 0
    s = wait_state(zh, job, "harvested")
    assert s.exit_code == 4
    assert review_show(lane, job, "answer.txt") == "after restart"
    kinds = types(zh, job)
    assert kinds.count("agent.spawned") == 1 and kinds.count("worktree.created") == 1
    assert kinds.count("agent.exited") == 1 and kinds.count("harvest.done") == 1
    assert gap_free(zh, job)


def test_restart_records_agents_that_exited_during_the_downtime(zh: Path, lane: Path, sups) -> None:
    first = sups.start()
    job = dispatch_cmd("echo made > made.txt; read x; exit 6", "exits-while-down")
    wait_state(zh, job, "waiting")
    sups.kill9(first)
    # the agent ends while nobody watches: tmux keeps its dead pane (and the wrapper its code)
    s = snap(zh, job)
    Tmux.for_home(Home(zh)).send_text(s.tmux_session, "bye")
    wait_until(lambda: Tmux.for_home(Home(zh)).pane(s.tmux_session).dead, timeout=10)
    assert snap(zh, job).state.value == "waiting"  # nothing recorded it yet
    sups.start()
    s = wait_state(zh, job, "harvested")
    assert s.exit_code == 6
    assert review_show(lane, job, "made.txt") == "made"
    assert types(zh, job).count("agent.exited") == 1 and gap_free(zh, job)
    # the dead session is closed (just after harvest.done is recorded: poll for it)
    wait_until(lambda: Tmux.for_home(Home(zh)).pane(s.tmux_session) is None, timeout=10,
               message="the dead session to be closed")


def test_kill_9_at_random_moments_never_runs_a_task_twice(zh: Path, sups) -> None:
    jobs = [dispatch_cmd(f"echo {i} > n.txt; sleep 0.4; exit 0", f"many-{i}") for i in range(6)]
    for delay in (0.15, 0.3, 0.45):
        proc = sups.start()
        time.sleep(delay)
        sups.kill9(proc)
    sups.start()
    for job in jobs:
        wait_state(zh, job, "harvested", "failed", timeout=30)
    store = JobStore(Home(zh))
    for job in jobs:
        kinds = [e["type"] for e in store.events(job)]
        assert kinds.count("task.received") == 1
        assert kinds.count("worktree.created") == 1, kinds
        assert kinds.count("agent.spawned") <= 1 and kinds.count("agent.exited") <= 1
        assert gap_free(zh, job)
    assert sorted(p.stem for p in (zh / "spool" / "cur").glob("*.yaml")) == sorted(jobs)
    assert not list((zh / "spool" / "new").glob("*.yaml"))


def test_a_claimed_task_without_a_record_is_completed_on_start(zh: Path, sups) -> None:
    job = dispatch_cmd("exit 0", "half-intake")
    # a crash between the claim (rename into cur/) and the job record
    os.rename(zh / "spool" / "new" / f"{job}.yaml", zh / "spool" / "cur" / f"{job}.yaml")
    sups.start()
    wait_state(zh, job, "harvested")
    assert types(zh, job)[:2] == ["task.received", "job.queued"]


_HALF_SPAWN = """
import sys
from pathlib import Path
from zen.adapters.worktree import start_worktree
from zen.orchestration.job import spawn
from zen.orchestration.context import JobContext
from zen.store.home import Home
from zen.store.jobs import JobStore, load_task_text
from zen.store import spool
home = Home(Path(sys.argv[1]))
store = JobStore(home)
for p in spool.pending(home):
    c = spool.claim(home, p)
    store.create(load_task_text(c.read_text(), str(c)))
    # the supervisor dies after the worktree, before the agent
    ctx = JobContext.load(home, p.stem, store=store)
    lane = spawn.lane_of(ctx)
    pending = start_worktree(lane.repo, home.worktree(ctx.job_id), spawn.branch_name(ctx.job_id), lane.base)
    spawn.prepare(ctx, pending)
"""


def test_a_spawn_cut_short_is_resumed_in_place_once(zh: Path, lane: Path, sups) -> None:
    job = dispatch_cmd("echo resumed > resumed.txt; exit 0", "half-spawn")
    r = subprocess.run([sys.executable, "-c", _HALF_SPAWN, str(zh)], cwd=REPO_ROOT, capture_output=True,
                       text=True, check=False)
    assert r.returncode == 0, r.stderr
    assert snap(zh, job).state.value == "starting"
    sups.start()
    s = wait_state(zh, job, "harvested")
    assert s.exit_code == 0 and review_show(lane, job, "resumed.txt") == "resumed"
    kinds = types(zh, job)
    assert kinds.count("worktree.created") == 1 and kinds.count("agent.spawned") == 1
    assert gap_free(zh, job)


def test_zen_hook_without_job_context_is_silent_and_never_fails(zh: Path, sup) -> None:
    r = zen("hook", "Stop", input='{"last_assistant_message": "done"}')
    assert r.returncode == 0 and r.stdout == "" and r.stderr == ""
    # the hooks as an agent runs them, from under its job's pane: malformed input is silent too
    z = " ".join(shlex.quote(a) for a in ZEN)
    job = dispatch_cmd(f"printf 'not json at all' | {z} hook UserPromptSubmit; sleep 0.5; "
                       f"printf '%s' '{{\"notification_type\": \"permission_prompt\", \"message\": \"x\"}}' "
                       f"| {z} hook Notification; sleep 0.5; "
                       f"{z} hook codex-notify '{{\"type\": \"agent-turn-complete\", "
                       f"\"last-assistant-message\": \"Shall I?\"}}'; read x", "hooked")
    wait_event(zh, job, "turn.working", actor="hook")
    wait_event(zh, job, "turn.waiting", reason="approval", actor="hook")
    wait_event(zh, job, "turn.waiting", reason="question", hook="codex-notify")
    # from anywhere else, a turn signal in a live job's name is not believed (finding M14)
    seen = len(events(zh, job))
    r = zen("hook", "UserPromptSubmit", input="{}", env={"ZEN_JOB_ID": job})
    assert r.returncode == 0 and r.stderr == ""
    time.sleep(0.5)
    assert [e for e in events(zh, job)[seen:] if e.get("actor") == "hook"] == []
    r = zen("hook", "Stop", input="{}", env={"ZEN_JOB_ID": "../../etc"})
    assert r.returncode == 0 and r.stderr == ""

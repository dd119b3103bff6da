"""The supervisor loop driven through recorded histories, without real time passing.

A real home and real job records; a manual clock; a scripted tmux server (panes that live, print
and die when the history says so) and a spawner that records what it was asked to start. Each
test replays one history through `Supervisor.recover` / `loop_once` and asserts what the loop
decided: the events it appended, the signals it sent, the text it typed, the jobs it started.
(The real thing, with real tmux and agents, is in test_lifecycle.py, test_turns.py, ...)
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from tests.supervisor.conftest import catalogue_problems, make_fast
from zen.adapters.tmux import PaneInfo
from zen.core.clock import ManualClock
from zen.core.events import EventType as E
from zen.core.ids import iso, make_job_id
from zen.core.model import Task
from zen.orchestration.context import JobContext
from zen.orchestration.job.spawn import Launched, SpawnError, session_name
from zen.orchestration.loop.supervisor import Supervisor
from zen.store import spool
from zen.store.home import Home
from zen.store.jobs import JobStore, dump_task

SIGTERM, SIGKILL = 15, 9


class ScriptedTmux:
    """The pane operations the supervisor uses, answering from a script instead of a server."""

    socket = "scripted"

    def __init__(self) -> None:
        self.live: dict[str, PaneInfo] = {}
        self.screens: dict[str, str] = {}
        self.typed: list[tuple[str, str]] = []
        self.killed: list[str] = []

    def add(self, session: str, n: int) -> PaneInfo:
        info = PaneInfo(pane_id=f"%{n}", session=session, dead=False, exit_code=None, signal=None, pid=None,
                        cursor="0,0")
        self.live[session] = info
        return info

    def die(self, session: str, exit_code: int | None = None, sig: int | None = None) -> None:
        self.live[session] = replace(self.live[session], dead=True, exit_code=exit_code, signal=sig)

    # -- the interface -----------------------------------------------------------------------
    def ensure_conf(self) -> None:
        pass

    def panes(self) -> dict[str, PaneInfo]:
        return dict(self.live)

    def pane(self, session: str) -> PaneInfo | None:
        return self.live.get(session)

    def has_session(self, session: str) -> bool:
        return session in self.live

    def capture(self, target: str, *, history: bool = False) -> str:
        return next((self.screens.get(s, "") for s, i in self.live.items() if i.pane_id == target), "")

    def send_text(self, target: str, text: str, *, paste: bool = False, enter_delay_s: float = 0.0,
                  inert: bool = False) -> None:
        self.typed.append((target, text))

    def kill_session(self, session: str) -> None:
        self.killed.append(session)
        self.live.pop(session, None)


class Replay:
    """One supervisor, its clock, its scripted tmux; `dispatch`, `print`, `advance`, `tick`."""

    def __init__(self, home: Path) -> None:
        make_fast(home)      # tick 0.05 s, idle_after 0.5 s, kill_grace 1 s
        self.root = home
        self.home = Home(home)
        # the manual clock starts at the real time: timelines stamp events with the real clock, and
        # a job's deadline counts from its agent.spawned stamp
        self.clock = ManualClock(wall=time.time())
        self.tmux = ScriptedTmux()
        self.signals: list[tuple[str, int]] = []
        self.starts: list[tuple[str, str]] = []          # (job, "spawn" | "resume")
        self.initial_input: str | None = None
        self.fail_next: str | None = None
        self.sup = self.new_supervisor()

    def new_supervisor(self) -> Supervisor:
        return Supervisor(self.home, clock=self.clock, tmux=self.tmux, spawner=self,  # type: ignore[arg-type]
                          notify=False, signal_fn=lambda info, sig: self.signals.append((info.session, sig)))

    # -- the spawner the supervisor is given --------------------------------------------------
    def spawn(self, ctx: JobContext, tmux: Any) -> Launched:
        return self._launch(ctx, "spawn")

    def resume(self, ctx: JobContext, tmux: Any) -> Launched:
        return self._launch(ctx, "resume")

    def _launch(self, ctx: JobContext, how: str) -> Launched:
        self.starts.append((ctx.job_id, how))
        if self.fail_next:
            why, self.fail_next = self.fail_next, None
            raise SpawnError(why)
        session = session_name(ctx.job_id)
        info = self.tmux.add(session, len(self.starts))
        ctx.paths.pane_log.touch()
        ctx.append(E.AGENT_SPAWNED, session=session, target=info.pane_id, pid=None, argv=["agent"],
                   socket="scripted")
        return Launched(session, info.pane_id, self.initial_input)

    # -- the history ---------------------------------------------------------------------------
    def dispatch(self, name: str, **fields: Any) -> str:
        task = Task(id=make_job_id(name), name=name, prompt=f"do {name}", lane="app", agent="cmd",
                    command=["agent"], created_at=iso(self._now()), **fields)
        assert spool.publish(self.home, task, dump_task(task))
        return task.id

    def _now(self) -> datetime:
        return datetime.fromtimestamp(self.clock.time(), UTC)

    def print(self, job: str, text: str) -> None:
        """The agent writes to its terminal now (by the manual clock)."""
        log = self.home.job(job).pane_log
        with log.open("a") as f:
            f.write(text)
        os.utime(log, (self.clock.time(), self.clock.time()))

    def advance(self, seconds: float) -> None:
        self.clock.advance(seconds)

    def tick(self, n: int = 1, every: float = 0.05) -> None:
        for _ in range(n):
            self.sup.loop_once()
            self.clock.advance(every)

    def append(self, job: str, etype: str, actor: str = "hook", **fields: Any) -> None:
        JobStore(self.home).append(job, etype, actor, **fields)

    def events(self, job: str) -> list[dict[str, Any]]:
        return JobStore(self.home).events(job)

    def types(self, job: str, since: int = 0) -> list[str]:
        return [e["type"] for e in self.events(job)[since:]]

    def state(self, job: str) -> str:
        return JobStore(self.home).snapshot(job, write=False).state.value


@pytest.fixture
def rp(home: Path) -> Iterator[Replay]:
    r = Replay(home)
    yield r
    assert not catalogue_problems(home), catalogue_problems(home)


def test_intake_then_spawn_then_quiet_output_becomes_an_idle_wait(rp: Replay) -> None:
    job = rp.dispatch("quiet")
    rp.tick()
    assert rp.starts == [(job, "spawn")] and rp.state(job) == "working"
    assert rp.types(job) == ["task.received", "job.queued", "agent.spawned"]
    rp.print(job, "thinking...\n")
    rp.tick(5)                                   # 0.25 s of silence: still working
    assert rp.state(job) == "working"
    rp.tick(6)                                   # past idle_after (0.5 s)
    assert rp.state(job) == "waiting"
    wait = rp.events(job)[-1]
    assert (wait["type"], wait["reason"], wait["by"], wait["actor"]) == ("turn.waiting", "idle", "activity", "supervisor")
    rp.print(job, "more\n")
    rp.tick()
    assert rp.types(job)[-1] == "turn.working" and rp.state(job) == "working"


def test_the_screen_gives_the_reason_of_a_wait(rp: Replay) -> None:
    job = rp.dispatch("asks")
    rp.tick()
    rp.tmux.screens[session_name(job)] = "Building...\nWhich port should I use?"
    rp.print(job, "Which port should I use?")
    rp.tick(12)
    assert [(e["type"], e.get("reason")) for e in rp.events(job)[3:]] == [("turn.waiting", "question")]


def test_a_hook_reported_wait_holds_through_redraws_until_input(rp: Replay) -> None:
    job = rp.dispatch("hooked")
    rp.tick()
    rp.append(job, E.TURN_WAITING, reason="approval", hook="PermissionRequest")
    rp.tick()
    for i in range(20):                          # an idle TUI redraws its clock
        rp.print(job, f"\r{i}")
        rp.tick()
    assert rp.state(job) == "waiting" and rp.types(job)[-1] == "turn.waiting"
    rp.append(job, E.INPUT_SENT, actor="human", text="y", chars=1)
    rp.tick()
    rp.print(job, "running the command\n")
    rp.tick()
    assert rp.types(job)[-1] == "turn.working"
    assert [e["actor"] for e in rp.events(job) if e["type"].startswith("turn.")] == ["hook", "supervisor"]


def test_timeout_terms_then_kills_after_the_grace_and_records_the_end(rp: Replay) -> None:
    job = rp.dispatch("slow", timeout="30s")
    rp.tick()
    session = session_name(job)
    rp.advance(27)
    rp.tick()
    assert rp.signals == [] and E.JOB_TIMEOUT not in rp.types(job)
    rp.advance(4)
    rp.tick()
    assert rp.signals == [(session, SIGTERM)]
    timeout = next(e for e in rp.events(job) if e["type"] == E.JOB_TIMEOUT)
    assert timeout["after_s"] >= 0
    rp.tick(10)                                  # 0.5 s: within the 1 s grace, no KILL yet
    assert rp.signals == [(session, SIGTERM)]
    rp.tick(12)
    assert rp.signals == [(session, SIGTERM), (session, SIGKILL)]
    rp.tmux.die(session, sig=SIGKILL)
    rp.tick()
    exited = next(e for e in rp.events(job) if e["type"] == E.AGENT_EXITED)
    assert (exited["exit_code"], exited["signal"]) == (None, SIGKILL)
    assert rp.state(job) == "exited" and job not in rp.sup.tracked
    assert session in rp.tmux.killed


def test_a_cancel_recorded_by_someone_else_stops_the_agent(rp: Replay) -> None:
    job = rp.dispatch("cancel-me")
    rp.tick()
    rp.append(job, E.JOB_CANCELLED, actor="human", reason="no longer needed")
    rp.tick()
    assert rp.signals == [(session_name(job), SIGTERM)] and E.JOB_TIMEOUT not in rp.types(job)


def test_a_start_that_dies_at_once_is_retried_with_backoff_then_fails(rp: Replay) -> None:
    job = rp.dispatch("flaky", max_retries=1)
    rp.tick()
    session = session_name(job)
    rp.tmux.die(session, exit_code=1)
    rp.tick()
    retry = next(e for e in rp.events(job) if e["type"] == E.RETRY_SCHEDULED)
    assert (retry["attempt"], retry["of"], retry["delay_s"]) == (1, 1, 5.0)
    assert retry["reason"] == "agent exited with code 1 before its first turn"
    assert rp.state(job) == "queued"
    rp.tick(20)                                  # 1 s: the backoff (5 s) holds it
    assert rp.starts == [(job, "spawn")]
    rp.advance(5)
    rp.tick()
    assert rp.starts == [(job, "spawn"), (job, "spawn")] and rp.state(job) == "working"
    rp.tmux.die(session, exit_code=1)
    rp.tick()
    assert rp.state(job) == "exited" and rp.types(job).count(E.RETRY_SCHEDULED) == 1
    assert rp.types(job).count(E.AGENT_EXITED) == 2


def test_a_spawn_error_without_retries_fails_the_job_with_its_reason(rp: Replay) -> None:
    rp.fail_next = "preflight failed: guardian self-test: the hook let rm -rf / through"
    job = rp.dispatch("broken")
    rp.tick()
    failed = rp.events(job)[-1]
    assert (failed["type"], failed["reason"]) == ("job.failed", "preflight failed: guardian self-test: "
                                                                "the hook let rm -rf / through")
    assert rp.state(job) == "failed" and session_name(job) in rp.tmux.killed


def test_slots_priority_and_dependencies_decide_who_starts(rp: Replay) -> None:
    cfg = rp.root / "zen.yaml"
    cfg.write_text(cfg.read_text().replace("max_concurrent_tasks: 5", "max_concurrent_tasks: 1"))
    low = rp.dispatch("low", priority=5)
    rp.advance(1)
    high = rp.dispatch("high", priority=1)
    after = rp.dispatch("after", depends_on=[high])
    rp.tick()
    assert rp.starts == [(high, "spawn")]
    rp.tmux.die(session_name(high), exit_code=0)
    rp.tick()
    # high ended (exited, not harvested: `after` still waits for it); low takes the slot
    assert rp.starts == [(high, "spawn"), (low, "spawn")] and rp.state(after) == "queued"


def test_the_first_prompt_is_typed_when_the_agent_first_waits_and_no_wait_is_recorded(rp: Replay) -> None:
    rp.initial_input = "do the thing"
    job = rp.dispatch("aider-like")
    rp.tick()
    rp.print(job, "> ")
    rp.tick(12)
    assert rp.tmux.typed == [("%1", "do the thing")]
    sent = rp.events(job)[-1]
    assert (sent["type"], sent["initial"], sent["chars"]) == ("input.sent", True, 12)
    assert E.TURN_WAITING not in rp.types(job)


def test_a_dead_pane_without_a_status_is_settled_after_the_wait_or_from_the_exit_file(rp: Replay) -> None:
    job = rp.dispatch("silent-death")
    rp.tick()
    rp.tmux.die(session_name(job))               # dead, status not told yet
    rp.tick(10)
    assert E.AGENT_EXITED not in rp.types(job)
    rp.tick(35)                                  # past the 2 s settle wait
    exited = next(e for e in rp.events(job) if e["type"] == E.AGENT_EXITED)
    assert exited["exit_code"] is None and exited["signal"] is None
    other = rp.dispatch("wrapper-told")
    rp.tick()
    rp.tmux.die(session_name(other))
    rp.home.job(other).exit_file.write_text("3\n")
    rp.tick()
    assert next(e for e in rp.events(other) if e["type"] == E.AGENT_EXITED)["exit_code"] == 3


def test_restart_watches_live_agents_settles_dead_ones_and_resumes_cut_spawns(rp: Replay) -> None:
    alive, dead, cut, waiting = (rp.dispatch(n) for n in ("alive", "dead", "cut", "queued"))
    rp.tick()
    assert {j for j, _ in rp.starts} == {alive, dead, cut, waiting}
    # the supervisor "dies"; meanwhile one agent exits with 4 and one session disappears
    rp.tmux.die(session_name(dead), exit_code=4)
    rp.tmux.live.pop(session_name(cut))
    # `cut` is rewritten as a spawn cut short: worktree.created, no agent.spawned yet
    cut_dir = rp.home.job(cut)
    for p in (cut_dir.events, cut_dir.state):
        p.unlink()
    store = JobStore(rp.home)
    store.create(store.task(cut))
    store.append(cut, E.WORKTREE_CREATED, path=str(rp.root / "worktrees" / cut), branch=f"zen/{cut}",
                 base_commit="0" * 40)
    rp.starts.clear()
    rp.sup = rp.new_supervisor()
    rp.sup.recover()
    assert set(rp.sup.tracked) == {alive, waiting, cut}
    assert rp.starts == [(cut, "resume")]
    ended = next(e for e in rp.events(dead) if e["type"] == E.AGENT_EXITED)
    assert ended["exit_code"] == 4 and rp.state(dead) == "exited"
    assert rp.types(alive) == ["task.received", "job.queued", "agent.spawned"]   # nothing recorded twice


def test_a_task_claimed_but_not_recorded_before_a_crash_is_recorded_on_restart(rp: Replay) -> None:
    job = rp.dispatch("half-intake")
    path = rp.home.spool_new / f"{job}.yaml"
    spool.claim(rp.home, path)                    # claimed, then the crash: no job record
    assert not JobStore(rp.home).exists(job)
    rp.sup.recover()
    assert rp.types(job) == ["task.received", "job.queued"] and job in rp.sup.queued
    rp.tick()
    assert rp.starts == [(job, "spawn")]


def test_an_unreadable_task_is_set_aside_and_the_loop_goes_on(rp: Replay) -> None:
    bad = rp.home.spool_new / "20261129T101500Z-bad-0000.yaml"
    bad.write_bytes(b"\xff\xfe not yaml at all: [")
    good = rp.dispatch("good")
    rp.tick()
    assert (rp.home.spool_quarantine / "20261129T101500Z-bad-0000.yaml").exists()
    assert "not UTF-8" in (rp.home.spool_quarantine / "20261129T101500Z-bad-0000.yaml.reason").read_text()
    assert rp.starts == [(good, "spawn")]


def test_next_wait_wakes_when_an_agents_silence_reaches_idle_after(rp: Replay) -> None:
    job = rp.dispatch("sleepy")
    rp.tick()
    rp.print(job, "x")
    rp.sup.loop_once()                           # first look: the fingerprint is taken
    rp.advance(0.2)
    assert rp.sup.next_wait() == pytest.approx(0.05)      # a tick is sooner than the idle point
    cfg = rp.root / "zen.yaml"
    cfg.write_text(cfg.read_text().replace("tick: 0.05s", "tick: 5s"))
    sup = rp.new_supervisor()
    sup.recover()
    sup.loop_once()
    rp.advance(0.2)
    assert sup.next_wait() == pytest.approx(0.5 - 0.2 + 0.005, abs=0.01)

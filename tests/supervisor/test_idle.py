"""An idle fleet costs the supervisor nothing (issue 21): with file events, the loop looks at a job
only when an event names it or its own clock says a look is due, and reads a screen only when the
pane changed since it was last read.

Driven like test_replay.py (a manual clock, a scripted tmux that counts what it is asked), with
the file events the watchdog thread would deliver handed to the supervisor by the test. The real
thing (real tmux, real file events) is every end-to-end test of the supervisor, and the figures
are in bench/supervisor.py.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from pathlib import Path

import pytest

from tests.supervisor.test_replay import Replay, ScriptedTmux
from zen.adapters import procs
from zen.adapters.tmux import PaneInfo
from zen.orchestration.loop import supervisor as sup_mod
from zen.orchestration.loop.watcher import BUSY_SAMPLE_S

FLEET = 8


class CountingTmux(ScriptedTmux):
    def __init__(self) -> None:
        super().__init__()
        self.listed = 0
        self.captured: list[str] = []

    def panes(self) -> dict[str, PaneInfo]:
        self.listed += 1
        return super().panes()

    def capture(self, target: str, *, history: bool = False) -> str:
        self.captured.append(target)
        return super().capture(target, history=history)


@pytest.fixture
def rp(home: Path) -> Iterator[Replay]:
    r = Replay(home)
    cfg = r.root / "zen.yaml"
    cfg.write_text(cfg.read_text().replace("max_concurrent_tasks: 5", f"max_concurrent_tasks: {FLEET}"))
    r.tmux = CountingTmux()
    r.sup = r.new_supervisor()
    r.sup.watching = True          # as after run() started the file events
    yield r


def printed(rp: Replay, job: str, text: str) -> None:
    """The agent writes, and the file event of its pane.log reaches the supervisor."""
    rp.print(job, text)
    rp.sup._on_path(str(rp.home.job(job).pane_log))


def idle_fleet(rp: Replay) -> list[str]:
    jobs = [rp.dispatch(f"idle-{i}") for i in range(FLEET)]
    rp.tick()
    assert sorted(rp.sup.tracked) == sorted(jobs)
    for job in jobs:
        printed(rp, job, "ready\n")
    rp.tick(20)                                  # 1 s: past idle_after (0.5 s)
    assert {rp.state(j) for j in jobs} == {"waiting"}
    return jobs


def test_idle_agents_are_not_looked_at_until_an_event_or_the_sweep(rp: Replay) -> None:
    jobs = idle_fleet(rp)
    listed, captured = rp.tmux.listed, len(rp.tmux.captured)
    seen = {j: len(rp.events(j)) for j in jobs}
    rp.tick(400)                                 # 20 s of silence, a loop pass every 50 ms
    assert len(rp.tmux.captured) == captured, "a silent pane's screen was read again"
    assert rp.tmux.listed - listed <= 20 / sup_mod.SWEEP_S + 1, "panes were listed more often than the sweep"
    assert {j: len(rp.events(j)) for j in jobs} == seen, "an idle fleet recorded something"
    # the loop may sleep until the next sweep or heartbeat, not a tick
    assert rp.sup.next_wait() > 10 * rp.sup.tick_s


def test_output_of_one_agent_wakes_only_that_job(rp: Replay) -> None:
    jobs = idle_fleet(rp)
    one, others = jobs[3], jobs[:3] + jobs[4:]
    before = {j: len(rp.events(j)) for j in others}
    captured = len(rp.tmux.captured)
    printed(rp, one, "working again\n")
    rp.tick(6)                                   # within idle_after: one look at the woken job
    assert rp.types(one)[-1] == "turn.working"
    rp.tick(20)
    assert rp.types(one)[-1] == "turn.waiting"
    pane = rp.tmux.live[f"zen-{one}"].pane_id
    assert rp.tmux.captured[captured:] == [pane], "only the pane that changed is read, once"
    assert {j: len(rp.events(j)) for j in others} == before


def test_the_idle_timer_is_a_timer(rp: Replay) -> None:
    job = rp.dispatch("timed")
    rp.tick()
    printed(rp, job, "thinking\n")
    rp.tick()
    # working, silent since now: the next look is due when idle_after (0.5 s) has passed, not a tick
    wait = rp.sup.next_wait()
    assert 0.3 < wait <= 0.5 + 0.01
    rp.advance(wait)
    rp.sup.loop_once()
    assert rp.state(job) == "waiting"


def test_a_pane_that_dies_is_found_at_once_when_tmux_says_a_pane_died(rp: Replay) -> None:
    jobs = idle_fleet(rp)
    rp.tick(150)                                 # past a sweep: the next is SWEEP_S away
    rp.tmux.die(f"zen-{jobs[0]}", exit_code=0)
    rp.sup._on_path(str(rp.home.pane_died))     # zen's tmux server's pane-died hook
    rp.tick()
    assert rp.state(jobs[0]) in ("exited", "harvested") and jobs[0] not in rp.sup.tracked


def test_the_cpu_sample_is_taken_before_the_silence_ends_so_an_idle_agent_waits_at_idle_after(rp: Replay) -> None:
    """An agent with no hooks: before silence counts as its turn's end, zen samples the CPU of the
    agent's children (a silent test run is no idle agent). The first sample is taken a moment
    before idle_after, so a really idle agent is called waiting at idle_after, not a sample later;
    a busy child keeps it working, and its end lets the turn end."""
    ticks = {"cpu": 100, "spinning": False}
    samples: list[float] = []

    def busy(pid: int) -> dict[int, int]:
        assert pid == 4242
        samples.append(rp.clock.monotonic())
        if ticks["spinning"]:
            ticks["cpu"] += 10
        return {5000: ticks["cpu"]}

    # what the (scripted) pane's processes wait on: /proc cannot tell, so silence decides
    rp.sup.deps = replace(rp.sup.deps, busy=busy, waits=lambda pid: procs.Waits(pid, None))
    job = rp.dispatch("sampled")
    rp.tick()
    session = next(iter(rp.tmux.live))
    rp.tmux.live[session] = replace(rp.tmux.live[session], pid=4242)

    def run_until_quiet(limit: float) -> float:
        return follow_timers(rp, job, limit)

    printed(rp, job, "running the tests\n")
    rp.sup.loop_once()
    silent_from = rp.clock.monotonic()
    took = run_until_quiet(5.0)
    assert rp.state(job) == "waiting"
    assert took <= 0.5 + 0.01, (took, [s - silent_from for s in samples])  # idle_after 0.5 s: not a sample later
    assert len(samples) == 2 and samples[0] - silent_from < 0.5 - 0.2, samples

    # a silent child using CPU: working while it spins, waiting once it stops
    rp.append(job, "input.sent", actor="human", text="again", chars=5)
    ticks["spinning"] = True
    printed(rp, job, "again\n")
    rp.sup.loop_once()
    assert rp.state(job) == "working"
    run_until_quiet(2.0)
    assert rp.state(job) == "working"                          # 2 s of silence, but its child is busy
    ticks["spinning"] = False
    took = run_until_quiet(5.0)
    assert rp.state(job) == "waiting" and took <= 0.5, took


def follow_timers(rp: Replay, job: str, limit: float) -> float:
    """Follow the supervisor's own timers (no ticks) until it stops asking to look within `limit`
    or `job` waits; the time spent."""
    start = rp.clock.monotonic()
    while rp.clock.monotonic() - start < limit:
        wait = rp.sup.next_wait()
        if wait is None or wait > limit:
            break
        rp.advance(wait)
        rp.sup.loop_once()
        if rp.state(job) == "waiting":
            break
    return rp.clock.monotonic() - start


@dataclass(frozen=True)
class Told(procs.Waits):
    """A look at the pane's processes as the test tells it (the real one reads /proc)."""

    still: Callable[[], bool] = lambda: True

    def unchanged(self) -> bool:
        return self.still()


def test_an_agent_asleep_on_something_else_than_its_terminal_works_and_costs_what_an_idle_one_does(
        rp: Replay) -> None:
    """An agent with no hooks, silent and idle by CPU but asleep elsewhere than on its terminal
    (a sleep, a child): working, and no timer of its own: looked at again only at the sweep, with a
    re-read of the same waits (no pass over /proc, no screen); once those change and it reads its
    terminal, waiting within a sweep and a CPU sample."""
    told = {"reading": False, "moved": False}
    looks: list[float] = []
    rechecks: list[float] = []

    def still() -> bool:
        rechecks.append(rp.clock.monotonic())
        return not told["moved"]

    def waits(pid: int) -> procs.Waits:
        looks.append(rp.clock.monotonic())
        return Told(pid, bool(told["reading"]), still=still)

    rp.sup.deps = replace(rp.sup.deps, busy=lambda pid: {5000: 100}, waits=waits)
    job = rp.dispatch("asleep")
    rp.tick()
    session = next(iter(rp.tmux.live))
    rp.tmux.live[session] = replace(rp.tmux.live[session], pid=4242)
    printed(rp, job, "sleeping a while\n")
    rp.sup.loop_once()
    listed, captured = rp.tmux.listed, len(rp.tmux.captured)
    follow_timers(rp, job, 20.0)
    assert rp.state(job) == "working" and "turn.waiting" not in rp.types(job)
    assert len(looks) == 1                                   # one look at /proc when the silence ended
    assert 20 / sup_mod.SWEEP_S - 1 <= len(rechecks) <= 20 / sup_mod.SWEEP_S + 1, rechecks
    assert rp.tmux.listed - listed <= 20 / sup_mod.SWEEP_S + 2, "panes were listed more often than the sweep"
    assert len(rp.tmux.captured) <= captured + 1, "an asleep agent's screen was read more than once a silence"

    told.update(moved=True, reading=True)                   # its sleep ended; it reads its terminal now
    took = follow_timers(rp, job, 10.0)
    assert rp.state(job) == "waiting" and rp.events(job)[-1]["reason"] == "idle"
    assert took <= sup_mod.SWEEP_S + BUSY_SAMPLE_S + 0.05, took

"""Goal continuation end to end (DESIGN 13): the real supervisor continues `goal: until-done` sim
agents turn after turn. The blocker rule's clock is injected (teams.clock_file): a driver moves it
to the end of each hold the supervisor records, so "not before 60 s" is checked on that clock in
seconds of real time."""

from __future__ import annotations

import json
import subprocess
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from tests.helpers import wait_until, zen
from tests.supervisor.util import events, review_files, wait_state
from tests.teams.conftest import tune
from zen.store.home import Home
from zen.store.jobs import JobStore

BLOCKER = "the staging database at db:5432 refuses connections (attempt {turn})"


def dispatch_goal(home: Path, tmp: Path, name: str, script: list[dict[str, Any]], **task: Any) -> str:
    f = tmp / f"{name}.yaml"
    f.write_text(json.dumps({"name": name, "prompt": f"reach the goal of {name}", "agent": "sim", "script": script,
                             "goal": "until-done", **task}))
    r = zen("dispatch", "--file", str(f))
    assert r.returncode == 0, r.stderr
    return r.stdout.strip()


class ClockDriver:
    """The goals' clock (a file): it stands still, and jumps to the end of a hold once one is
    recorded, as if that much time had passed."""

    def __init__(self, home: Path, path: Path, start: float = 1_800_000_000.0) -> None:
        self.home, self.path, self.now = home, path, start
        self.path.write_text(f"{start}\n")
        self.sizes: dict[Path, tuple[int | None, float | None]] = {}
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self.run, daemon=True)
        self.thread.start()

    def pending(self) -> list[float]:
        """The ends of the holds not yet continued (each timeline read again only when it grew)."""
        out = []
        for path in (self.home / "jobs").glob("*/events.jsonl"):
            size = path.stat().st_size
            if self.sizes.get(path, (None,))[0] != size:
                text = path.read_text()
                until = None
                for line in text.splitlines():
                    if '"goal.held"' in line:
                        until = float(json.loads(line)["until"])
                    elif '"goal.continued"' in line:
                        until = None
                self.sizes[path] = (size, until)
            until = self.sizes[path][1]
            if until is not None and until > self.now:
                out.append(until)
        return out

    def run(self) -> None:
        while not self.stop.is_set():
            due = self.pending()
            if due:
                self.now = min(due)
                self.path.write_text(f"{self.now}\n")
            time.sleep(0.1)

    def close(self) -> None:
        self.stop.set()
        self.thread.join(5)


def blocked_turn() -> list[dict[str, Any]]:
    return [{"mcp": "agent_report", "args": {"status": "blocked", "blocker": BLOCKER}}]


def test_the_same_blocker_stops_a_goal_at_exactly_its_third_turn_not_before_60s_in_20_of_20_runs(
        zh: Path, lane: Path, tmp_path: Path, sups: Any) -> None:
    clock = tmp_path / "clock"
    tune(zh, **{"max_concurrent_tasks: 5": "max_concurrent_tasks: 20", 'clock_file: ""': f'clock_file: "{clock}"'})
    driver = ClockDriver(zh, clock)
    try:
        sups.start()
        script = [*blocked_turn(), {"wait": {"turns": [blocked_turn()]}}]
        with ThreadPoolExecutor(4) as pool:  # 20 `zen dispatch` at once, as 20 users would
            jobs = list(pool.map(lambda i: dispatch_goal(zh, tmp_path, f"stuck-{i}", script), range(20)))
        for job in jobs:
            wait_until(lambda j=job: any(e["type"] == "goal.blocked" for e in events(zh, j)), timeout=120,
                       message=f"{job}'s goal to stop as blocked")
    finally:
        driver.close()
    for job in jobs:
        evs = events(zh, job)
        turns = [e for e in evs if e["type"] == "goal.turn"]
        (blocked,) = [e for e in evs if e["type"] == "goal.blocked"]
        assert len(turns) == 3 and blocked["turns"] == 3                 # exactly its third turn
        assert blocked["span_s"] >= 60 and turns[2]["at"] - turns[0]["at"] >= 60     # and not before 60 s
        assert len({t["fingerprint"] for t in turns}) == 1                # "attempt 1/2/3" is one blocker
        assert "the staging database" in blocked["blocker"] and "3 turns in a row" in blocked["reason"]
        assert [e["turn"] for e in evs if e["type"] == "goal.continued"] == [2, 3]   # never a fourth
        assert len([e for e in evs if e["type"] == "team.report"]) == 3
        assert JobStore(Home(zh)).snapshot(job, write=False).state.value == "waiting"  # left for a human


def test_a_goal_that_makes_progress_goes_on_until_done_and_a_budget_stops_another(
        zh: Path, lane: Path, tmp_path: Path, sup: subprocess.Popen[bytes]) -> None:
    # the same blocker every turn, but a new commit every turn too: progress, never blocked
    def progress(n: str) -> list[dict[str, Any]]:
        return [{"write": {"path": f"step-{n}.txt", "content": f"step {n}\n"}}, {"commit": f"step {n}"},
                {"mcp": "agent_report", "args": {"status": "blocked", "blocker": "flaky CI"}}]

    done = [{"mcp": "agent_report", "args": {"status": "done", "summary": "all five steps"}}]
    job = dispatch_goal(zh, tmp_path, "steady", [*progress("1"),
                                                 {"wait": {"turns": [progress("{turn}")] * 4 + [done]}}])
    # no blockers, no progress, tokens every turn: the token budget stops it
    chatty = dispatch_goal(zh, tmp_path, "chatty", [{"say": "thinking " * 40},
                                                     {"wait": {"turns": [[{"say": "still thinking " * 40}]]}}],
                           budget={"tokens": 400})
    wait_state(zh, job, "harvested", timeout=90)
    evs = events(zh, job)
    assert [e["type"] for e in evs if e["type"].startswith("goal.") and e["type"] != "goal.turn"][-1] == "goal.done"
    assert [e["turn"] for e in evs if e["type"] == "goal.turn"] == [1, 2, 3, 4, 5, 6]
    assert [e["progress"] for e in evs if e["type"] == "goal.turn"] == [True] * 5 + [False]
    assert not any(e["type"] in ("goal.held", "goal.blocked") for e in evs)
    assert {f"step-{n}.txt" for n in range(1, 6)} <= set(review_files(lane, job))

    wait_state(zh, chatty, "harvested", timeout=60)
    evs = events(zh, chatty)
    (stopped,) = [e for e in evs if e["type"] == "goal.stopped"]
    assert "token budget reached" in stopped["reason"]
    turns = [e for e in evs if e["type"] == "goal.turn"]
    assert turns[-1]["tokens"] >= 400 > turns[-2]["tokens"]          # stopped at the first turn over it
    assert stopped["turns"] == len(turns)


def test_a_silent_command_is_activity_not_the_end_of_a_turn(zh: Path, lane: Path, tmp_path: Path,
                                                            sup: subprocess.Popen[bytes]) -> None:
    from tests.supervisor.util import dispatch_sim

    job = dispatch_sim(zh, tmp_path, "quiet", [{"bash": "sleep 3"}, {"say": "tests passed"}, {"wait": True}])
    wait_until(lambda: any(e["type"] == "turn.waiting" and e.get("actor") == "hook" for e in events(zh, job)),
               timeout=30)
    evs = events(zh, job)
    start = next(i for i, e in enumerate(evs) if e["type"] == "guard.allowed" and "sleep 3" in e.get("command", ""))
    end = next(i for i, e in enumerate(evs) if e["type"] == "turn.waiting" and e.get("actor") == "hook")
    assert not [e for e in evs[start:end] if e["type"] == "turn.waiting"]  # 3 s silent, idle_after 0.5 s


def test_for_an_agent_without_hooks_a_child_using_cpu_is_activity(zh: Path, lane: Path, tmp_path: Path,
                                                                  sup: subprocess.Popen[bytes]) -> None:
    from datetime import datetime

    from tests.supervisor.util import dispatch_cmd

    # the spinner notes the moment its CPU work ends itself: a second interpreter's start-up, slow
    # on a loaded machine, would put that moment later than the work really ended
    spin = ("python3 -c 'import time\nt = time.time()\nwhile time.time() - t < 3: pass\n"
            "open(\".zen-tmp/done\", \"w\").write(str(time.time()))'; echo finished; read x")
    busy = dispatch_cmd(spin, "spinner")
    # idle: 3 s waiting for a line that does not come (bash's read -t; a silent sleep would be
    # work, tests/supervisor/test_asleep.py), then it notes the time and waits for a line again
    idle = dispatch_cmd("bash -c 'read -t 3 x'; python3 -c 'import time; print(time.time())' > .zen-tmp/done; "
                        "read x", "waiter")

    def first_wait(job: str) -> float:
        ev = wait_until(lambda: next((e for e in events(zh, job) if e["type"] == "turn.waiting"), None),
                        timeout=30, message=f"{job} to wait")
        return datetime.fromisoformat(ev["ts"].replace("Z", "+00:00")).timestamp()

    def finished(job: str) -> float:
        path = Path(str(JobStore(Home(zh)).snapshot(job, write=False).worktree)) / ".zen-tmp" / "done"
        return float(wait_until(lambda: path.exists() and path.read_text().strip(), timeout=30))

    assert first_wait(busy) >= finished(busy) - 0.05     # 3 s of silent CPU: still working
    assert first_wait(idle) < finished(idle) - 1.0       # 3 s of waiting for input: waiting well before

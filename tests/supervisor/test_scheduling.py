"""Scheduling with the real supervisor (issue 5): concurrency cap, priority, dependency chains,
failed dependencies, retries with growing delays, the circuit breaker, zen queue."""

from __future__ import annotations

import itertools
import json
from pathlib import Path

from tests.helpers import one_line, wait_until, zen, zen_json
from tests.supervisor.util import dispatch_cmd, events, snap, types, wait_state
from zen.core.ids import parse_iso


def spawned_at(home: Path, job: str) -> float:
    ev = next(e for e in events(home, job) if e["type"] == "agent.spawned")
    return parse_iso(ev["ts"]).timestamp()


def test_never_more_than_max_concurrent_alive_under_a_burst_of_30(zh: Path, sups) -> None:
    cfg = zh / "zen.yaml"
    cfg.write_text(cfg.read_text().replace("max_concurrent_tasks: 5", "max_concurrent_tasks: 3"))
    jobs = [dispatch_cmd("sleep 0.4", f"burst-{i}") for i in range(30)]
    sups.start()
    wait_until(lambda: all(snap(zh, j).state.value == "harvested" for j in jobs), timeout=120,
               message="all 30 jobs harvested")
    # replay every job's life as intervals and check the overlap never exceeds the cap
    spans = []
    for j in jobs:
        evs = events(zh, j)
        start = parse_iso(next(e["ts"] for e in evs if e["type"] == "agent.spawned")).timestamp()
        end = parse_iso(next(e["ts"] for e in evs if e["type"] == "agent.exited")).timestamp()
        spans.append((start, end))
    points = sorted([(s, 1) for s, _ in spans] + [(e, -1) for _, e in spans], key=lambda p: (p[0], p[1]))
    alive = peak = 0
    for _, delta in points:
        alive += delta
        peak = max(peak, alive)
    assert peak <= 3, peak
    assert peak >= 2, "the burst should have run jobs side by side"


def test_a_dependency_chain_runs_in_order(zh: Path, sups) -> None:
    a = dispatch_cmd("sleep 0.5; echo a", "chain-a")
    b = dispatch_cmd("echo b", "chain-b", "--depends-on", "chain-a")
    c = dispatch_cmd("echo c", "chain-c", "--depends-on", b)
    sups.start()
    wait_state(zh, c, "harvested", timeout=60)
    ends = {j: parse_iso(next(e["ts"] for e in events(zh, j) if e["type"] == "harvest.done")).timestamp()
            for j in (a, b)}
    assert ends[a] <= spawned_at(zh, b) and ends[b] <= spawned_at(zh, c)


def test_a_failed_dependency_fails_its_dependents(zh: Path, sups) -> None:
    a = dispatch_cmd("exit 4", "dep-fails")
    b = dispatch_cmd("echo never", "dependent", "--depends-on", a)
    c = dispatch_cmd("echo never", "dependent-2", "--depends-on", b)
    sups.start()
    sb = wait_state(zh, b, "failed", timeout=60)
    assert a in (sb.reason or "") and "code 4" in sb.reason
    sc = wait_state(zh, c, "failed", timeout=30)
    assert b in (sc.reason or "")
    assert "agent.spawned" not in types(zh, b) and "agent.spawned" not in types(zh, c)


def test_a_cancelled_dependency_fails_its_dependents(zh: Path, sups) -> None:
    a = dispatch_cmd("sleep 30", "to-cancel")
    b = dispatch_cmd("echo never", "after-cancel", "--depends-on", a)
    assert zen("cancel", a).returncode == 0
    sups.start()
    sb = wait_state(zh, b, "failed", timeout=30)
    assert "cancelled" in sb.reason


def test_self_and_cyclic_dependencies_are_refused(zh: Path, tmp_path: Path) -> None:
    r = zen("dispatch", "x", "--name", "selfish", "--depends-on", "selfish")
    assert r.returncode == 1 and one_line(r.stderr) and "itself" in r.stderr
    f = tmp_path / "t.yaml"
    f.write_text("id: 20261129T000000Z-loop-0000\nname: loop\nprompt: p\ndepends_on: [20261129T000000Z-loop-0000]\n")
    r = zen("dispatch", "--file", str(f))
    assert r.returncode == 1 and one_line(r.stderr) and "itself" in r.stderr


def test_retries_back_off_with_increasing_delays(zh: Path, sups) -> None:
    cfg = zh / "zen.yaml"
    cfg.write_text(cfg.read_text().replace("backoff_base: 5s", "backoff_base: 0.5s"))
    job = dispatch_cmd("exit 9", "flaky", "--retries", "3")
    sups.start()
    wait_state(zh, job, "harvested", "failed", timeout=60)
    evs = events(zh, job)
    retries = [e for e in evs if e["type"] == "retry.scheduled"]
    assert [r["attempt"] for r in retries] == [1, 2, 3]
    assert [r["delay_s"] for r in retries] == [0.5, 1.0, 2.0]
    spawns = [parse_iso(e["ts"]).timestamp() for e in evs if e["type"] == "agent.spawned"]
    assert len(spawns) == 4
    gaps = [b - a for a, b in itertools.pairwise(spawns)]
    assert gaps[0] >= 0.5 and gaps[1] >= 1.0 and gaps[2] >= 2.0
    assert gaps[2] > gaps[0]
    final = snap(zh, job)
    assert final.exit_code == 9 and final.review_branch  # the last attempt is harvested, nothing lost


def test_a_job_that_works_first_is_not_retried(zh: Path, sup) -> None:
    job = dispatch_cmd("echo fine; exit 0", "fine", "--retries", "3")
    wait_state(zh, job, "harvested", timeout=30)
    assert "retry.scheduled" not in types(zh, job)


def test_timeout_stops_the_agent_and_harvests(zh: Path, lane: Path, sup) -> None:
    job = dispatch_cmd("echo partial > partial.txt; sleep 60", "slowpoke", "--timeout", "1s")
    s = wait_state(zh, job, "harvested", timeout=30)
    assert "job.timeout" in types(zh, job) and s.timed_out
    from tests.supervisor.util import review_files

    assert "partial.txt" in review_files(lane, job)


def test_the_breaker_holds_automatic_work_but_not_human_work(zh: Path, sups, tmp_path: Path) -> None:
    cfg = zh / "zen.yaml"
    cfg.write_text(cfg.read_text().replace("max_automatic: 20", "max_automatic: 1"))
    # two tasks an agent asked for (automatic), then one a human asked for
    autos = []
    for i in range(3):
        f = tmp_path / f"auto{i}.yaml"
        f.write_text(json.dumps({"name": f"auto-{i}", "prompt": "p", "agent": "cmd", "command": ["true"],
                                 "created_by": "job:parent"}))
        autos.append(zen("dispatch", "--file", str(f)).stdout.strip())
    sups.start()
    wait_until(lambda: zen_json("status")["breaker"]["open"], timeout=30, message="the breaker to open")
    human = dispatch_cmd("echo human", "human-work")
    wait_state(zh, human, "harvested", timeout=30)
    held = [j for j in autos if snap(zh, j).state.value == "queued"]
    assert held, "automatic work past the limit must stay queued while the breaker is open"
    q = zen_json("queue")
    reasons = {r["job"]: r["why"] for r in q["queue"]}
    assert all("circuit breaker open" in reasons[j] for j in held)
    assert q["breaker"]["open"] and "OPEN" in zen("status").stdout


def test_zen_queue_explains_why_each_job_waits(zh: Path, sups) -> None:
    cfg = zh / "zen.yaml"
    cfg.write_text(cfg.read_text().replace("max_concurrent_tasks: 5", "max_concurrent_tasks: 1"))
    busy = dispatch_cmd("sleep 30", "busy")
    sups.start()
    wait_state(zh, busy, "working", "waiting")
    later = dispatch_cmd("echo later", "later", "--priority", "5")
    first = dispatch_cmd("echo first", "first", "--priority", "1")
    dep = dispatch_cmd("echo dep", "needs-busy", "--depends-on", busy)
    wait_until(lambda: all(snap(zh, j).state.value == "queued" for j in (later, first, dep)), timeout=20,
               message="intake")
    rows = zen_json("queue")["queue"]
    order = [r["job"] for r in rows]
    assert order.index(first) < order.index(later)
    why = {r["job"]: r["why"] for r in rows}
    assert "slot" in why[first] and "slot" in why[later]
    assert why[dep] == f"waiting for dependency {busy} (working)" or "dependency" in why[dep]
    text = zen("queue").stdout
    assert first in text and "slot" in text
    zen("cancel", busy)


def test_gc_removes_old_worktrees_and_records_but_never_branches(zh: Path, lane: Path, sup) -> None:
    from tests.helpers import git

    job = dispatch_cmd("echo work > w.txt", "old-job")
    wait_state(zh, job, "harvested", timeout=30)
    assert zen("gc", "--older-than", "1h").stdout.startswith("nothing")
    # once the job is older than a second, gc collects it
    [entry] = wait_until(lambda: json.loads(zen("gc", "--older-than", "1s", "--json").stdout), timeout=10,
                         message="gc to find the job old enough")
    assert entry["worktree_removed"] and not (zh / "worktrees" / job).exists()
    assert (zh / "jobs" / job).exists()
    r = zen("gc", "--older-than", "1s", "--records", "--json")
    assert json.loads(r.stdout)[0]["record_removed"] and not (zh / "jobs" / job).exists()
    assert git(lane, "show", f"zen/review/{job}:w.txt") == "work"
    r = zen("gc", "--older-than", "soon")
    assert r.returncode == 1 and one_line(r.stderr)


def test_gc_branches_removes_only_merged_work_and_says_how_many_unmerged_it_kept(zh: Path, lane: Path, sup) -> None:
    from tests.helpers import git

    git(lane, "checkout", "-q", "-b", "side")             # main is not checked out: land may move it
    landed = dispatch_cmd("echo kept > landed.txt", "to-land")
    left = dispatch_cmd("echo unmerged > left.txt", "left-alone")
    wait_state(zh, landed, "harvested", timeout=30)
    wait_state(zh, left, "harvested", timeout=30)
    assert zen("land", landed).returncode == 0
    assert zen("gc", "--older-than", "1s", "--unmerged").returncode == 1     # only with --branches

    def collected() -> list[dict] | None:
        r = zen("gc", "--older-than", "1s", "--branches", "--json")
        done = {d["job"]: d for d in json.loads(r.stdout)}
        return [done[landed], done[left]] if landed in done and left in done else None

    first, second = wait_until(collected, timeout=15, message="gc to find both jobs old enough")
    assert first["branches_removed"] == [f"zen/review/{landed}", f"zen/{landed}"]
    assert "not merged" in second["branches_kept"]
    branches = git(lane, "branch", "--list", "zen/*")
    assert landed not in branches and f"zen/review/{left}" in branches
    assert git(lane, "show", "main:landed.txt") == "kept"                     # the merged work is on main
    r = zen("gc", "--older-than", "1s", "--branches")
    assert "kept 1 review branch" in r.stderr
    r = zen("gc", "--older-than", "1s", "--branches", "--unmerged", "--json")
    assert f"zen/review/{left}" in json.loads(r.stdout)[0]["branches_removed"]
    assert left not in git(lane, "branch", "--list", "zen/*")

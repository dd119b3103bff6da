"""Best of N (issue 37): --attempts 3 makes three jobs of one prompt in a group; compare --json sets
them side by side; pick lands one (gated like land) and finishes the others, keeping their branches."""

from __future__ import annotations

import json
from pathlib import Path

from tests.helpers import git, one_line, wait_until, zen
from tests.supervisor.util import events, snap


def test_three_attempts_compared_then_one_picked_and_the_others_finished_with_their_branches_kept(
        zh: Path, lane: Path, tmp_path: Path, sup) -> None:
    git(lane, "checkout", "-q", "-b", "side")            # main is not checked out: pick may land onto it
    task = tmp_path / "try.yaml"
    # each attempt writes its own answer, then waits: the others are still running at the pick
    task.write_text(json.dumps({"prompt": "simulate an answer", "agent": "sim", "script": [
        {"write": {"path": "answer.txt", "content": "an answer\n"}}, {"commit": "an answer"},
        {"wait": {"turns": []}}]}))
    r = zen("dispatch", "--file", str(task), "--name", "answer", "--attempts", "3", "--json")
    assert r.returncode == 0, r.stderr
    group = json.loads(r.stdout)
    jobs = group["jobs"]
    assert len(jobs) == 3 and [n.rsplit("-", 1)[1] for n in group["names"]] == ["1", "2", "3"]
    for j in jobs:
        wait_until(lambda j=j: snap(zh, j).state.value in ("working", "waiting"), timeout=40, message=f"{j} running")
    for j in jobs:
        assert zen("harvest", j).returncode == 0
    r = zen("compare", jobs[0], "--json")
    assert r.returncode == 0, r.stderr
    compared = json.loads(r.stdout)
    assert compared["group"] == group["group"] and [a["job"] for a in compared["attempts"]] == sorted(jobs)
    assert all(a["files"] == 1 and a["insertions"] == 1 and a["state"] in ("working", "waiting")
               for a in compared["attempts"]), json.dumps(compared)
    assert zen("compare", group["group"], "--json").stdout == r.stdout    # by the group's id too

    chosen = jobs[1]
    assert zen("pick", chosen).returncode != 0                 # still running: finish it first (as land)
    assert zen("finish", chosen).returncode == 0
    wait_until(lambda: snap(zh, chosen).state.value == "harvested", timeout=30, message="the chosen one harvested")
    r = zen("pick", chosen, "--json")
    assert r.returncode == 0, r.stderr
    picked = json.loads(r.stdout)
    assert git(lane, "show", "main:answer.txt") == "an answer"
    assert sorted(picked["finished"]) == sorted(j for j in jobs if j != chosen)
    for j in jobs:
        if j != chosen:
            wait_until(lambda j=j: snap(zh, j).state.value == "harvested", timeout=30, message=f"{j} finished")
            assert git(lane, "rev-parse", "--verify", f"zen/review/{j}")          # its branch kept
            assert [e["picked"] for e in events(zh, j) if e["type"] == "attempt.passed_over"] == [chosen]
    r = zen("compare", "nosuchjob")
    assert r.returncode != 0 and one_line(r.stderr)
    r = zen("dispatch", "x", "--attempts", "1")
    assert r.returncode == 2 and "2 to 8" in r.stderr

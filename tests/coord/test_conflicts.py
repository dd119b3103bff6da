"""Change and conflict detection across live jobs: files.changed per job, coord.overlap when two
live jobs touch the same files, coord.conflict exactly when their work will not merge (git
merge-tree), before either is harvested; base.moved when the lane's base moves under them.

The oracle is a real `git merge` of the two review branches in a scratch clone, after harvest."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.coord.util import set_coordinator
from tests.helpers import git, wait_until, zen
from tests.supervisor.util import dispatch_sim, events, wait_state

LINES = "".join(f"line {i}\n" for i in range(1, 21))

# name -> (files in the lane, job A's steps, job B's steps, conflicts?)
PAIRS: dict[str, tuple[dict[str, str], list[dict[str, Any]], list[dict[str, Any]], bool]] = {
    "same-line": ({"p1.txt": LINES},
                  [{"edit": {"path": "p1.txt", "old": "line 5\n", "new": "line five (A)\n"}}],
                  [{"edit": {"path": "p1.txt", "old": "line 5\n", "new": "line 5 by B\n"}}], True),
    "far-lines": ({"p2.txt": LINES},
                  [{"edit": {"path": "p2.txt", "old": "line 2\n", "new": "line two (A)\n"}}],
                  [{"edit": {"path": "p2.txt", "old": "line 18\n", "new": "line eighteen (B)\n"}}], False),
    "both-add": ({}, [{"write": {"path": "p3-new.txt", "content": "from A\n"}}],
                 [{"write": {"path": "p3-new.txt", "content": "from B\n"}}], True),
    "other-files": ({"p4a.txt": LINES, "p4b.txt": LINES},
                    [{"edit": {"path": "p4a.txt", "old": "line 5\n", "new": "A\n"}}],
                    [{"edit": {"path": "p4b.txt", "old": "line 5\n", "new": "B\n"}}], False),
    "delete-vs-edit": ({"p5.txt": LINES}, [{"bash": "rm p5.txt"}],
                       [{"edit": {"path": "p5.txt", "old": "line 9\n", "new": "line nine (B)\n"}}], True),
    "same-change": ({"p6.txt": LINES},
                    [{"edit": {"path": "p6.txt", "old": "line 7\n", "new": "line seven\n"}}],
                    [{"edit": {"path": "p6.txt", "old": "line 7\n", "new": "line seven\n"}}], False),
    "committed-vs-uncommitted": ({"p7.txt": LINES},
                                 [{"edit": {"path": "p7.txt", "old": "line 3\n", "new": "A3\n"}},
                                  {"commit": "A changes line 3"}],
                                 [{"edit": {"path": "p7.txt", "old": "line 3\n", "new": "B3\n"}}], True),
}


@pytest.fixture
def pairs_lane(lane: Path) -> Path:
    for files, *_ in PAIRS.values():
        for name, text in files.items():
            (lane / name).write_text(text)
    (lane / "base.txt").write_text(LINES)
    git(lane, "add", "-A")
    git(lane, "commit", "-q", "-m", "files for the pairs")
    return lane


def _real_merge(lane: Path, tmp: Path, a: str, b: str) -> bool:
    """Whether `git merge` of B's review branch into A's succeeds (True: clean)."""
    work = tmp / f"merge-{a[-4:]}-{b[-4:]}"
    subprocess.run(["git", "clone", "-q", "--no-checkout", str(lane), str(work)], check=True)
    git(work, "fetch", "-q", "origin", f"refs/heads/zen/review/{a}:A", f"refs/heads/zen/review/{b}:B")
    git(work, "checkout", "-q", "A")
    return subprocess.run(["git", "-C", str(work), "merge", "-q", "--no-edit", "B"], capture_output=True).returncode == 0


def _conflicts(home: Path, job: str, other: str) -> list[dict[str, Any]]:
    return [e for e in events(home, job) if e["type"] == "coord.conflict" and e["other"] == other]


def test_conflicting_pairs_are_predicted_before_harvest_and_clean_pairs_never(zh: Path, pairs_lane: Path, sups,
                                                                              tmp_path: Path) -> None:
    cfg = zh / "zen.yaml"
    cfg.write_text(cfg.read_text().replace("max_concurrent_tasks: 5", "max_concurrent_tasks: 16"))
    set_coordinator(zh, conflict_resolution="last-write-wins", scan_interval="0.5s")
    sups.start()
    jobs: dict[str, tuple[str, str]] = {}
    for name, (_, steps_a, steps_b, _) in PAIRS.items():
        a = dispatch_sim(zh, tmp_path, f"{name}-a", [*steps_a, {"wait": True}], "--lane", "app")
        b = dispatch_sim(zh, tmp_path, f"{name}-b", [*steps_b, {"wait": True}], "--lane", "app")
        jobs[name] = (a, b)
    for a, b in jobs.values():
        for j in (a, b):
            wait_state(zh, j, "waiting", timeout=90)

    def scanned() -> bool:   # each job's change seen, and each overlapping pair compared
        for name, (a, b) in jobs.items():
            for j in (a, b):
                if not any(e["type"] == "files.changed" and e["paths"] for e in events(zh, j)):
                    return False
            if PAIRS[name][3] and not _conflicts(zh, a, b):
                return False
        return True

    wait_until(scanned, timeout=60, message="every job's changes scanned and conflicts predicted")
    for a, b in jobs.values():
        for j in (a, b):
            assert zen("finish", j).returncode == 0
    for name, (a, b) in jobs.items():
        expected = PAIRS[name][3]
        assert _real_merge(pairs_lane, tmp_path, a, b) is (not expected), f"{name}: the oracle disagrees"
        for me, other in ((a, b), (b, a)):
            found = [e for e in _conflicts(zh, me, other) if e["paths"]]
            harvested = next(e["seq"] for e in events(zh, me) if e["type"] == "harvest.done")
            if expected:
                assert found and found[0]["seq"] < harvested, f"{name}: not predicted before harvest"
                assert found[0]["actor"] == "supervisor"
            else:
                assert not found, f"{name}: a clean pair was flagged: {found}"
        overlap = [e for e in events(zh, a) if e["type"] == "coord.overlap" and e["other"] == b and e["paths"]]
        assert bool(overlap) is (name != "other-files"), name
    review = (zh / "jobs" / jobs["same-line"][1] / "review.md").read_text()
    assert "CONFLICTS with" in review and "p1.txt" in review
    clean_review = (zh / "jobs" / jobs["far-lines"][1] / "review.md").read_text()
    assert "no conflicts predicted" in clean_review


def test_a_base_that_moves_under_a_job_is_reported_with_what_it_breaks(zh: Path, pairs_lane: Path, sups,
                                                                       tmp_path: Path) -> None:
    set_coordinator(zh, scan_interval="0.3s")
    sups.start()
    job = dispatch_sim(zh, tmp_path, "edits-base", [
        {"edit": {"path": "base.txt", "old": "line 4\n", "new": "line four (job)\n"}}, {"wait": True}], "--lane", "app")
    wait_state(zh, job, "waiting", timeout=60)
    wait_until(lambda: any(e["type"] == "files.changed" for e in events(zh, job)), timeout=20,
               message="the job's changes")
    old = git(pairs_lane, "rev-parse", "HEAD")
    (pairs_lane / "unrelated.txt").write_text("x\n")
    git(pairs_lane, "add", "-A")
    git(pairs_lane, "commit", "-q", "-m", "unrelated")
    moved = wait_until(lambda: [e for e in events(zh, job) if e["type"] == "base.moved"], timeout=20,
                       message="base.moved")
    assert moved[0]["old"] == old and moved[0]["new"] == git(pairs_lane, "rev-parse", "HEAD")
    assert not _conflicts(zh, job, "base")                  # a move that breaks nothing is no conflict
    (pairs_lane / "base.txt").write_text(LINES.replace("line 4\n", "line 4 upstream\n"))
    git(pairs_lane, "commit", "-q", "-am", "upstream edits line 4")
    found = wait_until(lambda: [e for e in _conflicts(zh, job, "base") if e["paths"]], timeout=20,
                       message="a conflict with the base")
    assert found[0]["paths"] == ["base.txt"] and found[0]["against"] == "main"
    assert len([e for e in events(zh, job) if e["type"] == "base.moved"]) == 2
    assert zen("finish", job).returncode == 0
    rows = [r for r in zen_json_changes(job) if r["type"] in ("base.moved", "coord.conflict")]
    assert [r["type"] for r in rows] == ["base.moved", "base.moved", "coord.conflict"]


def zen_json_changes(job: str) -> list[dict[str, Any]]:
    r = zen("changes", "--job", job, "--json")
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)

"""The coordinator's scanner (zen.coord.changes) on real git worktrees, without a supervisor: what
each pass records in the jobs' timelines (files.changed, coord.overlap, coord.conflict,
base.moved), that it records only what is new, and that a restarted scanner carries on from the
timelines instead of repeating them."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.helpers import git, make_repo, zen
from zen.coord.changes import BASE, Scanner
from zen.core.ids import iso, utcnow
from zen.core.model import Task
from zen.store.home import Home
from zen.store.jobs import JobStore

LINES = "".join(f"line {i}\n" for i in range(1, 21))


def start_job(home: Path, repo: Path, name: str, lane: str = "app") -> tuple[str, Path]:
    """A job as the supervisor leaves it once started: its record, and a worktree of `repo` on a
    fresh branch from the lane's tip."""
    job = f"20270101T000000Z-{name}-0001"
    store = JobStore(Home(home))
    store.create(Task.model_validate({"id": job, "name": name, "prompt": "work\n", "lane": lane,
                                      "created_at": iso(utcnow())}))
    wt = home.parent / "wt" / name
    base = git(repo, "rev-parse", "HEAD")
    git(repo, "worktree", "add", "-q", "-b", f"zen/{job}", str(wt), base)
    store.append(job, "worktree.created", path=str(wt), branch=f"zen/{job}", base_commit=base)
    return job, wt


def timeline(home: Path, job: str, etype: str) -> list[dict[str, Any]]:
    return [e for e in JobStore(Home(home)).events(job) if e["type"] == etype]


def with_lines(repo: Path) -> None:
    (repo / "shared.txt").write_text(LINES)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "shared lines")


def edit_line(wt: Path, n: int, text: str) -> None:
    lines = (wt / "shared.txt").read_text().splitlines(keepends=True)
    lines[n - 1] = text + "\n"
    (wt / "shared.txt").write_text("".join(lines))


def test_a_jobs_changed_files_are_recorded_when_they_change_and_only_then(lane: Path, home: Path) -> None:
    job, wt = start_job(home, lane, "solo")
    scanner = Scanner(Home(home))
    scanner.scan([job])
    assert timeline(home, job, "files.changed") == []          # nothing changed yet: nothing said
    (wt / "new.txt").write_text("new\n")                        # untracked
    (wt / "README.md").write_text("# changed\n")                # uncommitted
    scanner.scan([job])
    scanner.scan([job])                                         # the same set again: no second event
    [first] = timeline(home, job, "files.changed")
    assert first["paths"] == ["README.md", "new.txt"] and first["added"] == ["README.md", "new.txt"]
    assert first["dropped"] == [] and first["by"] == "interval"
    git(wt, "add", "-A")
    git(wt, "commit", "-q", "-m", "work")                       # committed work still counts
    (wt / "new.txt").unlink()
    git(wt, "commit", "-q", "-am", "drop new")
    scanner.scan([job], by="turn")
    second = timeline(home, job, "files.changed")[-1]
    assert second["paths"] == ["README.md"] and second["dropped"] == ["new.txt"] and second["by"] == "turn"


def test_a_pair_on_the_same_line_conflicts_on_both_sides_and_is_resolved_when_one_gives_way(
        lane: Path, home: Path) -> None:
    with_lines(lane)
    a, wa = start_job(home, lane, "a")
    b, wb = start_job(home, lane, "b")
    edit_line(wa, 5, "a's line five")
    edit_line(wb, 5, "b's line five")
    scanner = Scanner(Home(home))
    scanner.scan([a, b])
    for me, other in ((a, b), (b, a)):
        [overlap] = timeline(home, me, "coord.overlap")
        assert overlap["other"] == other and overlap["paths"] == ["shared.txt"]
        [conflict] = timeline(home, me, "coord.conflict")
        assert conflict["other"] == other and conflict["paths"] == ["shared.txt"]
        assert conflict["commit"] and conflict["other_commit"]
    # nothing of the agents' was touched: the worktrees hold their own uncommitted edits still
    assert git(wa, "status", "--porcelain") == "M shared.txt" and git(wa, "rev-list", "--count", "HEAD") == "3"
    scanner.scan([a, b])
    assert len(timeline(home, a, "coord.conflict")) == 1        # no news, no event
    git(wb, "checkout", "--", "shared.txt")                     # b gives way
    scanner.scan([a, b])
    resolved = timeline(home, a, "coord.conflict")[-1]
    assert resolved["other"] == b and resolved["paths"] == [] and resolved["resolved"] is True
    assert timeline(home, a, "coord.overlap")[-1]["paths"] == []


def test_the_same_file_on_far_lines_overlaps_but_never_conflicts_and_other_files_do_neither(
        lane: Path, home: Path) -> None:
    with_lines(lane)
    a, wa = start_job(home, lane, "far-a")
    b, wb = start_job(home, lane, "far-b")
    c, wc = start_job(home, lane, "other")
    edit_line(wa, 2, "a's line two")
    edit_line(wb, 18, "b's line eighteen")
    (wc / "elsewhere.txt").write_text("c\n")
    Scanner(Home(home)).scan([a, b, c])
    assert [e["paths"] for e in timeline(home, a, "coord.overlap") if e["other"] == b] == [["shared.txt"]]
    assert timeline(home, a, "coord.conflict") == [] and timeline(home, b, "coord.conflict") == []
    assert timeline(home, c, "coord.overlap") == [] and timeline(home, c, "coord.conflict") == []


def test_jobs_of_different_lanes_are_never_compared(lane: Path, home: Path, tmp_path: Path) -> None:
    other_repo = make_repo(tmp_path / "other-repo")
    assert zen("lane", "add", "web", str(other_repo)).returncode == 0
    a, wa = start_job(home, lane, "app-job")
    b, wb = start_job(home, other_repo, "web-job", lane="web")
    (wa / "README.md").write_text("a\n")
    (wb / "README.md").write_text("b\n")
    Scanner(Home(home)).scan([a, b])
    assert timeline(home, a, "files.changed") and timeline(home, b, "files.changed")
    assert timeline(home, a, "coord.overlap") == [] and timeline(home, b, "coord.conflict") == []


def test_a_base_that_moves_is_recorded_once_and_a_clash_with_it_is_a_conflict_against_the_base(
        lane: Path, home: Path) -> None:
    with_lines(lane)
    job, wt = start_job(home, lane, "based")
    edit_line(wt, 7, "the job's line seven")
    scanner = Scanner(Home(home))
    scanner.scan([job])
    assert timeline(home, job, "base.moved") == []
    old = git(lane, "rev-parse", "HEAD")
    edit_line(lane, 7, "main's line seven")
    git(lane, "commit", "-q", "-am", "main moves on")
    new = git(lane, "rev-parse", "HEAD")
    scanner.scan([job])
    scanner.scan([job])
    [moved] = timeline(home, job, "base.moved")
    assert moved["old"] == old and moved["new"] == new and moved["base"] == "main"
    [clash] = timeline(home, job, "coord.conflict")
    assert clash["other"] == BASE and clash["paths"] == ["shared.txt"] and clash["against"] == "main"


def test_a_restarted_scanner_carries_on_from_the_timelines_and_repeats_nothing(lane: Path, home: Path) -> None:
    with_lines(lane)
    a, wa = start_job(home, lane, "r-a")
    b, wb = start_job(home, lane, "r-b")
    edit_line(wa, 3, "a three")
    edit_line(wb, 3, "b three")
    Scanner(Home(home)).scan([a, b])
    before = {j: len(JobStore(Home(home)).events(j)) for j in (a, b)}
    Scanner(Home(home)).scan([a, b])                            # a new supervisor's first pass
    assert {j: len(JobStore(Home(home)).events(j)) for j in (a, b)} == before


def test_a_quiet_job_keeps_its_last_reading_until_it_is_looked_at_again(lane: Path, home: Path) -> None:
    job, wt = start_job(home, lane, "quiet")
    scanner = Scanner(Home(home))
    (wt / "one.txt").write_text("1\n")
    scanner.scan([job])
    (wt / "two.txt").write_text("2\n")
    scanner.scan([job], quiet={job})                           # its agent waits: not read again
    assert [e["paths"] for e in timeline(home, job, "files.changed")] == [["one.txt"]]
    scanner.scan([job])
    assert timeline(home, job, "files.changed")[-1]["paths"] == ["one.txt", "two.txt"]

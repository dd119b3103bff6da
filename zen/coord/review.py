"""Predicted conflicts at harvest, for review.md (DESIGN sections 4 and 10).

    at_harvest(home, job_id, commit) -> [Predicted]

When a job is harvested, its work (`commit`, what the review branch points at) is merged in the
object store (`git merge-tree --write-tree`) with the work of every other job of its lane that a
reviewer would meet: live jobs (their worktrees as they are now) and harvested jobs whose review
branch has not reached the base yet. A conflict is recorded as `coord.conflict` in the job's
timeline before `harvest.done` (unless the last one recorded for that job says the same) and
listed in review.md.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from zen.adapters import git as g
from zen.core.events import EventType as E
from zen.core.model import JobSnapshot, JobStatus
from zen.errors import ZenError
from zen.store.home import Home
from zen.store.jobs import JobStore

log = logging.getLogger(__name__)

MAX_HARVESTED = 20      # the most recent harvested jobs of the lane compared with


@dataclass(frozen=True)
class Predicted:
    other: str
    name: str
    state: str
    paths: list[str]

    def to_json(self) -> dict[str, Any]:
        return {"other": self.other, "name": self.name, "state": self.state, "paths": self.paths}


def _others(store: JobStore, me: JobSnapshot) -> list[JobSnapshot]:
    live, harvested = [], []
    for job_id in store.ids():
        if job_id == me.job:
            continue
        s = store.snapshot(job_id, write=False)
        if s.lane != me.lane:
            continue
        if s.state.live and s.worktree and s.base_commit and Path(s.worktree).is_dir():
            live.append(s)
        elif s.state is JobStatus.harvested and s.harvest_commit and s.base_commit:
            harvested.append(s)
    return live + harvested[-MAX_HARVESTED:]


def _work_of(other: JobSnapshot) -> tuple[str, set[str]] | None:
    """(commit, changed paths) of another job: a fresh snapshot of a live one, else its harvest."""
    assert other.base_commit is not None
    if other.state.live and other.worktree:
        wt = Path(other.worktree)
        paths = set(g.changed_files(wt, other.base_commit))
        if not paths:
            return None
        return g.snapshot_commit(wt, f"zen coordinator: snapshot of {other.job}").commit, paths
    assert other.harvest_commit is not None and other.worktree is not None
    repo = Path(other.worktree)
    if not repo.is_dir():
        return None
    names = g.out(repo, "diff", "--name-only", "--no-renames", other.base_commit, other.harvest_commit)
    return other.harvest_commit, {n for n in names.splitlines() if n}


def at_harvest(home: Home, job_id: str, commit: str, base_tip: str | None = None) -> list[Predicted]:
    """Conflicts between `commit` (the job's harvested work) and the lane's other open work."""
    store = JobStore(home)
    me = store.snapshot(job_id, write=False)
    if not me.worktree or not me.base_commit or not me.lane:
        return []
    wt = Path(me.worktree)
    mine = set(g.out(wt, "diff", "--name-only", "--no-renames", me.base_commit, commit).splitlines())
    out: list[Predicted] = []
    for other in _others(store, me):
        try:
            work = _work_of(other)
            if work is None or not (mine & work[1]):
                continue
            if base_tip and other.state is JobStatus.harvested and g.is_ancestor(wt, work[0], base_tip):
                continue                              # landed already: the base check covers it
            clean, paths = g.merge_check(wt, commit, work[0])
        except ZenError as exc:
            log.info("cannot compare %s with %s at harvest: %s", job_id, other.job, exc)
            continue
        if clean:
            continue
        found = Predicted(other.job, other.name or other.job, other.state.value, sorted(paths))
        out.append(found)
        _record(store, job_id, found, commit, work[0])
    return out


def _record(store: JobStore, job_id: str, p: Predicted, commit: str, other_commit: str) -> None:
    last = [e for e in store.events(job_id) if e.get("type") == E.COORD_CONFLICT and e.get("other") == p.other]
    if last and list(last[-1].get("paths") or []) == p.paths:
        return
    store.append(job_id, E.COORD_CONFLICT, actor="harvest", other=p.other, paths=p.paths, commit=commit,
                 other_commit=other_commit)


def review_lines(predicted: list[Predicted], lane: str | None) -> list[str]:
    """The review.md section: what merging this work next to the lane's other work would meet."""
    lines = ["## Other jobs on this lane (coordinator)", ""]
    if not predicted:
        lines += [f"- no conflicts predicted with the other open work of lane `{lane}` "
                  "(live jobs and unlanded review branches; git merge-tree)", ""]
        return lines
    for p in predicted:
        files = ", ".join(f"`{x}`" for x in p.paths) or "(no file named)"
        lines.append(f"- CONFLICTS with `{p.other}` ({p.name}, {p.state}) in {files}")
    lines += ["", "  Whichever lands second needs these files merged by hand (`git merge-tree "
              "--write-tree` predicted it).", ""]
    return lines

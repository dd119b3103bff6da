"""Change and conflict detection across the live jobs of a lane (DESIGN section 10).

One `Scanner.scan(jobs)` pass, run by the supervisor's coordinator thread after each turn and
every `scan_interval` while jobs work:

- `files.changed`: each job's changed paths (its worktree against its base commit: committed,
  uncommitted, untracked), recorded when the set differs from the last one recorded;
- `coord.overlap`: two live jobs of a lane whose sets intersect, on both jobs, when the
  intersection changes;
- `coord.conflict`: for each overlapping pair, `git merge-tree --write-tree` between snapshots of
  both worktrees as they are now (commits made in the object store only, nothing checked out,
  nothing of the agents' touched) says exactly whether the work conflicts, and where; and the
  same against the lane's base when it has moved since the job started;
- `base.moved`: the lane's base branch now points elsewhere than it did for the job.

What was last recorded is read back from each job's timeline the first time a job is seen, so a
restarted supervisor records only what is new. Git work is done only when a fingerprint moved
(the changed paths with their sizes and mtimes, HEAD, the base tip).
"""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass, field
from itertools import combinations
from pathlib import Path
from typing import Any

from zen.adapters import git as g
from zen.core.events import EventType as E
from zen.errors import ZenError
from zen.store.config import Config, lane_path
from zen.store.home import Home
from zen.store.jobs import JobStore

log = logging.getLogger(__name__)

BASE = "base"             # the `other` of a conflict against the lane's base branch
MAX_PATHS = 500           # paths listed in one event (the count is exact either way)


@dataclass
class Seen:
    """What the timeline of one job says was last recorded, and the caches of this process."""

    lane: str
    worktree: Path
    repo: Path
    base_ref: str
    base_commit: str
    paths: list[str] | None = None                              # last files.changed
    overlaps: dict[str, list[str]] = field(default_factory=dict)   # other -> last coord.overlap
    conflicts: dict[str, list[str]] = field(default_factory=dict)  # other or "base" -> last paths
    base_tip: str | None = None                                 # last base.moved "new"
    fingerprint: Any = None
    commit: str | None = None                                   # snapshot of `fingerprint`
    merged: dict[str, Any] = field(default_factory=dict)        # other -> fingerprints merged


def job_facts(home: Home, job_id: str) -> Seen | None:
    """Lane, worktree, repository and base of a live job, with what its timeline last recorded."""
    store = JobStore(home)
    snap = store.snapshot(job_id, write=False)
    if not snap.worktree or not snap.base_commit or not snap.lane or not Path(snap.worktree).is_dir():
        return None
    try:
        task = store.task(job_id)
    except ZenError:
        return None
    repo, base_ref = Path(snap.worktree), str(task.base or "HEAD")
    if task.lane:
        spec = Config.load(home).lanes.get(task.lane) or {}
        if spec:
            repo, base_ref = lane_path(spec), str(task.base or spec.get("base") or "HEAD")
    elif task.repo:
        repo = Path(str(task.repo)).expanduser()
    seen = Seen(snap.lane, Path(snap.worktree), repo, base_ref, snap.base_commit)
    for ev in store.events(job_id):
        t = ev.get("type")
        if t == E.FILES_CHANGED:
            seen.paths = list(ev.get("paths") or [])
        elif t == E.COORD_OVERLAP:
            seen.overlaps[str(ev.get("other"))] = list(ev.get("paths") or [])
        elif t == E.COORD_CONFLICT:
            seen.conflicts[str(ev.get("other"))] = list(ev.get("paths") or [])
        elif t == E.BASE_MOVED:
            seen.base_tip = str(ev.get("new"))
    return seen


def fingerprint(seen: Seen, paths: list[str]) -> tuple[Any, ...]:
    """Changes when the work in the worktree can have changed: HEAD and each changed file's stat."""
    stats = []
    for p in paths:
        try:
            st = os.lstat(seen.worktree / p)
            stats.append((p, st.st_size, st.st_mtime_ns))
        except OSError:
            stats.append((p, -1, 0))
    return (g.rev(seen.worktree, "HEAD"), tuple(stats))


class Scanner:
    def __init__(self, home: Home) -> None:
        self.home = home
        self.store = JobStore(home)
        self.seen: dict[str, Seen] = {}

    def forget(self, job_id: str) -> None:
        self.seen.pop(job_id, None)

    def scan(self, jobs: list[str], by: str = "interval", quiet: set[str] | frozenset[str] = frozenset()) -> None:
        """One pass over `jobs` (the live ones): record what changed since the last pass. A job
        in `quiet` (its agent waits, nothing new since the last pass) keeps its last reading."""
        for j in list(self.seen):
            if j not in jobs:
                self.seen.pop(j)
        current: dict[str, list[str]] = {}
        for job_id in jobs:
            try:
                paths = self._job(job_id, by, job_id in quiet)
            except ZenError as exc:
                log.info("coordinator: cannot read the changes of %s: %s", job_id, exc)
                continue
            if paths is not None:
                current[job_id] = paths
        by_lane: dict[str, list[str]] = {}
        for job_id in current:
            by_lane.setdefault(self.seen[job_id].lane, []).append(job_id)
        for lane_jobs in by_lane.values():
            for a, b in combinations(sorted(lane_jobs), 2):
                try:
                    self._pair(a, b, current[a], current[b])
                except ZenError as exc:
                    log.info("coordinator: cannot compare %s and %s: %s", a, b, exc)
            self._base(lane_jobs, current)

    # -- one job ----------------------------------------------------------------------------------
    def _job(self, job_id: str, by: str, quiet: bool = False) -> list[str] | None:
        seen = self.seen.get(job_id)
        if quiet and seen is not None and seen.paths is not None and seen.fingerprint is not None:
            return seen.paths
        if seen is None:
            seen = job_facts(self.home, job_id)
            if seen is None:
                return None
            self.seen[job_id] = seen
        paths = g.changed_files(seen.worktree, seen.base_commit)
        if seen.paths is None and not paths:
            seen.paths = []                  # nothing changed yet: nothing to record
        if paths != seen.paths:
            before = set(seen.paths or [])
            self.store.append(job_id, E.FILES_CHANGED, paths=paths[:MAX_PATHS], by=by,
                              added=sorted(set(paths) - before)[:MAX_PATHS],
                              dropped=sorted(before - set(paths))[:MAX_PATHS])
            seen.paths = paths
        fp = fingerprint(seen, paths)
        if fp != seen.fingerprint:
            seen.fingerprint, seen.commit = fp, None
        return paths

    def commit_of(self, job_id: str) -> str:
        """A commit of the job's worktree as it is now (cached while its fingerprint holds)."""
        seen = self.seen[job_id]
        if seen.commit is None:
            seen.commit = g.snapshot_commit(seen.worktree, f"zen coordinator: snapshot of {job_id}").commit
        return seen.commit

    # -- two jobs ---------------------------------------------------------------------------------
    def _pair(self, a: str, b: str, pa: list[str], pb: list[str]) -> None:
        sa, sb = self.seen[a], self.seen[b]
        both = sorted(set(pa) & set(pb))
        for me, other in ((a, b), (b, a)):
            s = self.seen[me]
            if s.overlaps.get(other, []) != both:
                self.store.append(me, E.COORD_OVERLAP, other=other, paths=both[:MAX_PATHS])
                s.overlaps[other] = both
        key = (sa.fingerprint, sb.fingerprint)
        if not both:
            conflicts: list[str] = []
        elif sa.merged.get(b) == key:
            return                                   # neither side moved since the last merge
        else:
            clean, conflicts = g.merge_check(sa.worktree, self.commit_of(a), self.commit_of(b))
            sa.merged[b] = key
            conflicts = [] if clean else sorted(conflicts)
        for me, other in ((a, b), (b, a)):
            self._conflict(me, other, conflicts)

    def _conflict(self, me: str, other: str, paths: list[str], against: str | None = None) -> None:
        s = self.seen[me]
        last = s.conflicts.get(other, [])
        if paths == last:
            return
        fields: dict[str, Any] = {"other": other, "paths": paths[:MAX_PATHS]}
        if against:
            fields["against"] = against
        if not paths:
            fields["resolved"] = True
        elif s.commit:
            fields["commit"] = s.commit
            if other != BASE and self.seen.get(other) is not None and self.seen[other].commit:
                fields["other_commit"] = self.seen[other].commit
        self.store.append(me, E.COORD_CONFLICT, **fields)
        s.conflicts[other] = paths

    # -- the base ---------------------------------------------------------------------------------
    def _base(self, jobs: list[str], current: dict[str, list[str]]) -> None:
        tips: dict[tuple[Path, str], str | None] = {}
        for job_id in jobs:
            s = self.seen[job_id]
            key = (s.repo, s.base_ref)
            if key not in tips:
                tips[key] = g.rev(s.repo, s.base_ref) if s.repo.is_dir() else None
            tip = tips[key]
            if tip is None:
                continue
            last = s.base_tip or s.base_commit
            if tip != last:
                self.store.append(job_id, E.BASE_MOVED, base=s.base_ref, old=last, new=tip)
                s.base_tip = tip
            if tip == s.base_commit or not current.get(job_id):
                self._conflict(job_id, BASE, [], against=s.base_ref) if s.conflicts.get(BASE) else None
                continue
            mark = ("base", tip)
            if s.merged.get(BASE) == (mark, s.fingerprint):
                continue
            clean, conflicts = g.merge_check(s.worktree, tip, self.commit_of(job_id))
            s.merged[BASE] = (mark, s.fingerprint)
            self._conflict(job_id, BASE, [] if clean else sorted(conflicts), against=s.base_ref)

"""zen land JOB: merge a job's review branch into its lane's base branch (DESIGN section 11).

The one place zen ever moves a lane's branch, and only on a human's explicit request (the CLI
command and the dashboard's button; the guardian denies both to agents). It refuses unless the
work merges cleanly, and it lands the commit the harvest recorded (a review branch moved since is
refused), and it never touches a working tree: the merge is computed in the object
store (`git merge-tree --write-tree`), committed with `commit-tree`, and the base branch is moved
with `update-ref NEW OLD`, which fails if someone moved the branch meanwhile. A base branch that
is checked out somewhere (the lane's own checkout, typically) is refused too: moving a branch
under a checkout would leave its files behind, which is why git refuses such a push.
A lane with checks (zen/orchestration/job/checks.py) lands only a job whose checks passed on the
merge with the base as it is now: they run again when the base moved since; `--force` (a human's)
lands anyway and is recorded so. Recorded as `job.landed` in the job's timeline.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from zen.adapters import git as g
from zen.core.events import EventType as E
from zen.core.results import Result
from zen.errors import LandRefused
from zen.orchestration.job import checks
from zen.orchestration.lanes import resolve_lane
from zen.orchestration.read.query import resolve_job
from zen.store.config import Config
from zen.store.home import Home
from zen.store.jobs import JobStore


@dataclass(frozen=True)
class LandPlan(Result):
    """What `land` would do: merge `tip` (the review branch) into `base` at `old`, as `tree`."""

    job: str
    name: str
    lane: str
    repo: Path
    base: str
    old: str
    tip: str
    tree: str
    branch: str

    @property
    def base_ref(self) -> str:
        return f"refs/heads/{self.base}"

    def to_json(self) -> dict[str, Any]:
        """What `zen land --dry-run --json` shows."""
        return {"job": self.job, "lane": self.lane, "repo": str(self.repo), "branch": self.branch,
                "base": self.base, "old": self.old, "tip": self.tip}


@dataclass(frozen=True)
class Landed(Result):
    """A landing on record: `commit` merges `branch` into `into`, which was at `base_was`."""

    job: str
    lane: str
    into: str
    branch: str
    commit: str
    base_was: str
    seq: int


def _who() -> str:
    return os.environ.get("USER") or "human"


def plan(home: Home, ref: str) -> LandPlan:
    """What `land` would do, or LandRefused with the reason: the checks without the merge."""
    store = JobStore(home)
    job_id = resolve_job(home, ref)
    snap = store.snapshot(job_id)
    if snap.state.live:
        raise LandRefused(f"job {job_id} is still {snap.state.value}; finish it (zen finish {job_id}) "
                          "and land its harvested work")
    if not snap.review_branch:
        raise LandRefused(f"job {job_id} has no review branch to land (it is {snap.state.value}; "
                          f"zen harvest {job_id} makes one)")
    task = store.task(job_id)
    found = resolve_lane(Config.load(home), task)
    lane, repo, base = found.name, found.repo, found.base
    base_ref = f"refs/heads/{base}"
    old = g.rev(repo, base_ref)
    if old is None:
        raise LandRefused(f"the lane's base {base!r} is not a branch of {repo}, so there is nothing to land onto")
    # what lands is the commit the harvest recorded (issue 31, finding H5): a review branch moved
    # since (by an agent, say) is refused, never landed as it now stands
    tip = snap.harvest_commit
    now = g.rev(repo, f"refs/heads/{snap.review_branch}")
    if tip is None:
        raise LandRefused(f"job {job_id} records no harvested commit to land (zen harvest {job_id} makes one)")
    if now != tip:
        where = f"points at {now[:12]}" if now else "is missing"
        raise LandRefused(f"{snap.review_branch} {where}, not at the {tip[:12]} its harvest recorded: it was "
                          f"changed since, and zen lands only what it harvested (zen harvest {job_id} again, "
                          "or review the branch and merge it yourself)")
    if g.is_ancestor(repo, tip, old):
        raise LandRefused(f"{snap.review_branch} is already on {base}; nothing to land")
    holders = [p for p in g.checked_out_in(repo, base)]
    if holders:
        raise LandRefused(
            f"{base} is checked out in {holders[0]}, which zen never touches; moving the branch under it "
            f"would leave its files behind. Check out another branch there, or merge it yourself: "
            f"git -C {holders[0]} merge {tip[:12]}  # {snap.review_branch} as harvested")
    tree, conflicts = g.merge_tree(repo, old, tip)
    if tree is None:
        shown = ", ".join(conflicts[:5]) + (f" and {len(conflicts) - 5} more" if len(conflicts) > 5 else "")
        raise LandRefused(f"{snap.review_branch} does not merge cleanly into {base}: conflicts in {shown}")
    return LandPlan(job_id, snap.name, lane, Path(repo), base, old, tip, tree, snap.review_branch)


def land(home: Home, ref: str, *, by: str | None = None, force: bool = False) -> Landed:
    """Merge the job's review branch into its lane's base branch, or raise LandRefused. The lane's
    checks gate it (run again when the base moved since); `force` lands past a failed check."""
    p = plan(home, ref)
    if not force:
        checks.gate(home, p.job, p.old, p.tip)
    message = (f"Land zen job {p.job} ({p.name})\n\n"
               f"Merges {p.branch} into {p.base}; landed by {by or _who()} with zen land.\n")
    commit = g.commit_tree(p.repo, p.tree, [p.old, p.tip], message)
    if not g.move_ref(p.repo, p.base_ref, commit, p.old, f"zen land {p.job}"):
        raise LandRefused(f"{p.base} moved while landing; nothing was changed (run zen land again)")
    store = JobStore(home)
    ev = store.append(p.job, E.JOB_LANDED, actor="human", branch=p.branch, commit=commit, into=p.base,
                      base_was=p.old, tip=p.tip, by=by or _who(), **({"forced": True} if force else {}))
    store.snapshot(p.job)
    return Landed(p.job, p.lane, p.base, p.branch, commit, p.old, ev["seq"])


__all__ = ["LandPlan", "LandRefused", "Landed", "land", "plan"]

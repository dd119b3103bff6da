"""Harvest (DESIGN section 4): put a job's work on `zen/review/<id>`; never merge, never destroy.

Everything in the worktree (the agent's commits, its uncommitted changes and untracked files, not
ignored files and not zen's own `.zen/` and `.zen-tmp/`) ends up on the review branch: zen stages
into a private index and commits on top of the worktree's HEAD, so the agent's branch, index and
files stay exactly as they were. A running agent can be harvested without stopping it.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from zen.adapters import git as g
from zen.coord.review import Predicted, at_harvest, review_lines
from zen.core.events import Actor
from zen.core.events import EventType as E
from zen.core.model import JobSnapshot
from zen.errors import GitError, LaneGone, ZenError, disk_error
from zen.orchestration.context import JobContext
from zen.store.atomic import atomic_write, flocked

log = logging.getLogger(__name__)

REVIEW_PREFIX = "zen/review/"
# what git prints for a disk that is full, failing or read-only (it gives no errno)
_DISK_TEXT = ("no space left on device", "disk quota exceeded", "input/output error", "read-only file system")


def disk_trouble(exc: BaseException) -> bool:
    """Whether a harvest failed for its disk (full, failing, read-only): worth trying again once
    the disk is back, unlike a worktree that is gone or a base that does not resolve."""
    return disk_error(exc) is not None or any(t in str(exc).lower() for t in _DISK_TEXT)


def review_branch(job_id: str) -> str:
    return f"{REVIEW_PREFIX}{job_id}"


@dataclass(frozen=True)
class Harvest:
    """What one harvest did: the fields `harvest.done` records and the report's details.
    `zen harvest --json` prints `to_json()`."""

    job: str
    branch: str | None              # None in observe mode: a report, no branch
    commit: str                     # the review tip: the agent's HEAD or zen's snapshot on top
    head: str
    snapshot: bool                  # zen added a commit for uncommitted files
    base: str
    base_commit: str
    base_tip: str | None            # the base ref now (None when it no longer resolves)
    commits: list[dict[str, str]]   # base..commit, oldest first: sha, author, subject
    files: int
    insertions: int
    deletions: int
    diffstat: str
    clean_merge: bool | None
    conflicts: list[str]
    predicted_conflicts: list[Predicted]
    lane: str | None
    worktree: str
    review: str
    reported: list[dict[str, Any]]  # act-and-report: actions beyond the worktree the guardian let through
    agent_config: list[str] = field(default_factory=list)   # changed files that configure agents

    def brief(self) -> dict[str, Any]:
        """Where the work went, as the stop commands report it."""
        return {"branch": self.branch, "commit": self.commit, "files": self.files}

    def to_json(self) -> dict[str, Any]:
        return {"job": self.job, "branch": self.branch, "commit": self.commit, "head": self.head,
                "snapshot": self.snapshot, "base": self.base, "base_commit": self.base_commit,
                "base_tip": self.base_tip, "commits": self.commits, "files": self.files,
                "insertions": self.insertions, "deletions": self.deletions, "diffstat": self.diffstat,
                "clean_merge": self.clean_merge, "conflicts": self.conflicts,
                "predicted_conflicts": [p.to_json() for p in self.predicted_conflicts],
                "lane": self.lane, "worktree": self.worktree, "review": self.review,
                "reported": self.reported}


def harvest(ctx: JobContext, *, make_branch: bool = True,
            events: list[dict[str, Any]] | None = None, snap: JobSnapshot | None = None) -> Harvest:
    """Snapshot the job's worktree onto its review branch and write review.md.

    Returns what `harvest.done` records plus the report's details. With `make_branch=False`
    (autonomy level observe) review.md is written as a report and no branch is created.
    `events`, `snap`: the timeline and the job's state when the caller just worked them out (an
    exited agent adds no more).
    Raises ZenError (after recording `harvest.failed`) when it cannot be done.
    """
    with flocked(ctx.paths.harvest_lock):  # the supervisor and `zen harvest` may race
        try:
            result = _harvest(ctx, make_branch, ctx.events() if events is None else events,
                              ctx.snapshot() if snap is None else snap)
        except (ZenError, OSError) as exc:
            # a full disk may refuse this record too: the OSError then says so to the caller,
            # and the supervisor tries the harvest again all the same
            retry = disk_trouble(exc)
            ctx.append(E.HARVEST_FAILED, actor=Actor.HARVEST, reason=disk_error(exc) or str(exc),
                       **({"retry": True} if retry else {}))
            raise
        ctx.append(E.HARVEST_DONE, actor=Actor.HARVEST, branch=result.branch, commit=result.commit,
                   files=result.files, insertions=result.insertions, deletions=result.deletions,
                   clean_merge=result.clean_merge, head=result.head, base_commit=result.base_commit,
                   snapshot=result.snapshot, observe=not make_branch)
        return result


def _predicted(ctx: JobContext, commit: str, base_tip: str | None) -> list[Predicted]:
    """Conflicts with the lane's other open work (zen.coord.review); never fails a harvest."""
    try:
        return at_harvest(ctx.home, ctx.job_id, commit, base_tip)
    except Exception:
        log.exception("could not predict conflicts of %s with other jobs", ctx.job_id)
        return []


def _lane_repo_and_base(ctx: JobContext) -> tuple[Path, str]:
    """The lane's repository and the base ref the job started from (the task's, else the lane's)."""
    try:
        lane = ctx.lane
    except LaneGone as exc:
        raise ZenError(f"{exc}, so the job's base cannot be found") from None
    return lane.repo, lane.base


def _harvest(ctx: JobContext, make_branch: bool, events: list[dict[str, Any]], snap: JobSnapshot) -> Harvest:
    job_id = ctx.job_id
    task = ctx.task
    if not snap.worktree:
        raise ZenError(f"job {job_id} has no worktree yet, so there is nothing to harvest")
    worktree = Path(snap.worktree)
    if not worktree.is_dir():
        raise ZenError(f"the worktree of job {job_id} ({worktree}) is gone, so its files cannot be harvested")
    repo, base_ref = _lane_repo_and_base(ctx)
    base_commit = snap.base_commit or g.rev(worktree, base_ref)
    if not base_commit:
        raise GitError(f"job {job_id} records no base commit and {base_ref!r} does not resolve")

    branch = review_branch(job_id)
    current = g.rev(worktree, f"refs/heads/{branch}")
    shot = g.snapshot_commit(worktree, _message(job_id, task.name), reuse=current)
    if make_branch and current != shot.commit:
        g.set_branch(worktree, branch, shot.commit, f"zen harvest {job_id}")

    commits = g.commits_between(worktree, base_commit, shot.commit)
    files, ins, dels, stat = g.diff_numbers(worktree, base_commit, shot.commit)
    changed = g.out(worktree, "diff", "--name-only", "--no-renames", base_commit, shot.commit).splitlines()
    base_tip = g.rev(repo, base_ref) if repo.is_dir() else None
    if base_tip is None:
        base_tip = g.rev(worktree, base_ref)
    clean: bool | None = None
    conflicts: list[str] = []
    if base_tip is not None:
        clean, conflicts = g.merge_check(worktree, base_tip, shot.commit)
    predicted = _predicted(ctx, shot.commit, base_tip)

    result = Harvest(
        job=job_id, branch=branch if make_branch else None, commit=shot.commit, head=shot.head,
        snapshot=shot.snapshot, base=base_ref, base_commit=base_commit, base_tip=base_tip,
        commits=commits, files=files, insertions=ins, deletions=dels, diffstat=stat,
        clean_merge=clean, conflicts=conflicts, predicted_conflicts=predicted,
        lane=task.lane or task.repo, worktree=str(worktree), review=str(ctx.paths.review),
        reported=[{"rule": e.get("rule"), "command": e.get("command") or e.get("file_path"), "ts": e.get("ts")}
                  for e in events
                  if e.get("type") == E.GUARD_ALLOWED and str(e.get("rule", "")).startswith("report.")],
        agent_config=[n for n in changed if configures_agents(n)],
    )
    atomic_write(ctx.paths.review, render_review(result, task.name, task.prompt))
    return result


def _message(job_id: str, name: str) -> str:
    return (f"zen: uncommitted work of {name}\n\n"
            f"Files the agent left uncommitted in its worktree, snapshotted by zen harvest.\n\n"
            f"Zen-Job: {job_id}\n")


AGENT_DIRS = frozenset({".claude", ".codex", ".gemini"})
AGENT_FILES = frozenset({".mcp.json", "CLAUDE.md", "AGENTS.md", "GEMINI.md"})


def configures_agents(path: str) -> bool:
    """Whether a repository file configures the agents that will work in it: their settings, hooks
    and commands (`.claude/`, `.codex/`, `.gemini/`), project MCP servers, their instructions."""
    parts = path.split("/")
    return bool(AGENT_DIRS.intersection(parts[:-1])) or parts[-1] in AGENT_FILES


def render_review(r: Harvest, name: str, prompt: str) -> str:
    """review.md: what a human reviewer needs before `git log zen/review/<id>`."""
    lines = [f"# Review: {name}", "", f"- job: `{r.job}`"]
    if r.branch:
        lines.append(f"- branch: `{r.branch}` at `{r.commit[:12]}`")
    else:
        lines.append(f"- branch: none (observe mode: this is a report only; the work is at "
                     f"`{r.commit[:12]}`, unreferenced, and in the worktree)")
    lines.append(f"- base: `{r.base}`, started from `{r.base_commit[:12]}`")
    lines.append(f"- worktree: `{r.worktree}`")
    lines.append(f"- changes: {r.files} files changed, {r.insertions} insertions(+), "
                 f"{r.deletions} deletions(-)")
    tip = (r.base_tip or "")[:12]  # set whenever clean_merge is
    if r.clean_merge is None:
        merge = f"unknown (base `{r.base}` does not resolve any more)"
    elif r.clean_merge:
        merge = f"yes, onto the current `{r.base}` (`{tip}`)"
    else:
        merge = (f"NO: conflicts with the current `{r.base}` (`{tip}`) in "
                 + ", ".join(f"`{c}`" for c in r.conflicts) if r.conflicts else
                 f"NO: conflicts with the current `{r.base}` (`{tip}`)")
    lines += [f"- merges cleanly: {merge}", "", "## Task", ""]
    lines += [f"> {ln}" if ln else ">" for ln in prompt.rstrip().splitlines()]
    lines += ["", "## Commits", ""]
    if r.commits:
        for c in r.commits:
            who = "zen snapshot" if c["sha"] == r.commit and r.snapshot else c["author"]
            lines.append(f"- `{c['sha'][:12]}` {c['subject']} ({who})")
    else:
        lines.append("- none: the agent changed nothing")
    lines += ["", "## Diffstat", "", "```", r.diffstat or "(no changes)", "```", ""]
    lines += review_lines(r.predicted_conflicts, r.lane)
    if r.agent_config:
        # finding M12: project settings an agent reads at its next start (hooks, MCP servers, helper
        # commands) run unguarded once landed; a reviewer must see them before anything else does
        lines += ["## Files that configure agents (read them first)", "",
                  "These change what Claude Code, Codex or Gemini CLI run in this repository (hooks, MCP",
                  "servers, commands) for every later session once landed:", ""]
        lines += [f"- `{n}`" for n in r.agent_config] + [""]
    if r.reported:
        lines += ["## Actions beyond the worktree (act-and-report)", ""]
        lines += [f"- {a['ts']} `{a['command']}` ({a['rule']})" for a in r.reported]
        lines.append("")
    if r.branch:
        lines += ["## Next", "",
                  # the commit harvested, not the branch: what the branch points at later is not reviewed
                  f"    git log -p {r.base_commit[:12]}..{r.commit[:12]}   # {r.branch} as harvested",
                  f"    zen accept {r.job}   # or: zen reject {r.job} --correction \"...\"", ""]
    return "\n".join(lines)

"""What the watch's keys do beyond the orchestration calls the CLI makes too: the review diff.

Everything else (send, finish, cancel, harvest, attach) is `zen.orchestration.job.control`, called
exactly as `zen send`, `zen finish`, ... call it.
"""

from __future__ import annotations

from pathlib import Path

from zen.adapters import git as g
from zen.errors import ZenError
from zen.orchestration.lanes import resolve_lane
from zen.store.config import Config
from zen.store.home import Home
from zen.store.jobs import JobStore
from zen.tui.rows import JobView

MAX_DIFF_CHARS = 400_000


def review_diff(home: Home, v: JobView) -> tuple[str, str]:
    """(title, text) of the job's review branch against the commit its worktree started from."""
    if not v.review_branch or not v.base_commit:
        raise ZenError(f"job {v.name} has no review branch yet (h harvests it)")
    repo: Path | None = Path(v.worktree) if v.worktree and Path(v.worktree).exists() else None
    if repo is None:
        try:
            repo = resolve_lane(Config.load(home), JobStore(home).task(v.job)).repo
        except ZenError as exc:
            raise ZenError(f"cannot find the repository of job {v.name}: {exc}") from None
    files, ins, dels, stat = g.diff_numbers(repo, v.base_commit, v.review_branch)
    diff = g.out(repo, "diff", "--no-color", "--no-renames", v.base_commit, v.review_branch,
                 what="show the review diff")
    if len(diff) > MAX_DIFF_CHARS:
        diff = diff[:MAX_DIFF_CHARS] + f"\n... (cut at {MAX_DIFF_CHARS} characters: git diff shows it all)\n"
    title = f"{v.review_branch}: {files} files, +{ins} -{dels} against {v.base_commit[:12]}"
    return title, stat.rstrip() + "\n\n" + diff

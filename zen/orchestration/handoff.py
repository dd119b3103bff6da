"""handoff.md: the orientation document an agent reads first (DESIGN section 7).

A simple one for now: the task, hard constraints, lane, base commit and recent history. The
incidents issue adds warnings from past incidents and relevant files.
"""

from __future__ import annotations

from pathlib import Path

from zen.adapters import git
from zen.core.model import Task


def render(task: Task, *, job_id: str, lane: str, repo: Path, worktree: Path, branch: str,
           base_commit: str, level: str | None = None, recent: int = 8) -> str:
    log = git.git(worktree, "log", "--oneline", "--no-decorate", f"-{recent}", base_commit, check=False)
    history = log.stdout.strip() if log.returncode == 0 else "(unavailable)"
    deadline = f"{task.timeout} after the start (then the agent is stopped and its work harvested)"
    lines = [
        f"# Handoff: {task.name}",
        "",
        f"Job `{job_id}`, agent `{task.agent.value}`, lane `{lane}`.",
        "",
        "## Task",
        "",
        task.prompt.rstrip(),
        "",
        "## Hard constraints",
        "",
        f"- Work only inside this worktree: `{worktree}` (branch `{branch}`).",
        "  Temporary files go in `$TMPDIR`, which is inside it.",
        f"- Autonomy level: {level or 'as set for the domain'} (domain `{task.domain or '-'}`).",
        "- Every shell command and file edit is checked by zen's guardian; a denied command is",
        "  not an error to work around: say what you needed and why.",
        "- Never merge, rebase or push into the lane's branches; commit on your branch. zen",
        f"  harvests your commits and uncommitted files onto `zen/review/{job_id}` for review.",
        f"- Deadline: {deadline}.",
        "",
        "## Orientation",
        "",
        f"- Lane `{lane}`: main checkout `{repo}` (never edited by agents).",
        f"- Base: `{task.base or 'HEAD'}` at commit `{base_commit}`.",
        "- Recent history:",
        "",
        "```",
        history,
        "```",
        "",
    ]
    return "\n".join(lines)

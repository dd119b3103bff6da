"""handoff.md: the orientation document an agent reads first (DESIGN section 7).

The task; the hard constraints (autonomy level and what it allows, where it may write, what the
guardian blocks, the deadline); orientation (lane, base commit, recent history, the files the
task most likely touches); and warnings from past incidents that match the lane, domain or paths.
"""

from __future__ import annotations

import re
from datetime import timedelta
from pathlib import Path

from zen.adapters import git
from zen.core.ids import iso, utcnow
from zen.core.model import Task
from zen.orchestration.safety.incidents import warnings_for
from zen.store.home import Home

LEVEL_MEANING = {
    "observe": "read and report only: any change is blocked; only read-only commands run. Write what "
               "you found and what you would change in your final message.",
    "suggest": "change files only inside this worktree; your work is harvested to a review branch for "
               "a human to accept or correct.",
    "act-and-report": "as suggest, plus reversible actions beyond the worktree through zen's gates "
                      "(e.g. `zen gate`), each one reported.",
    "autonomous": "within the guardian's policy without per-action reports; the guardian still blocks "
                  "everything listed below.",
}

BLOCKED = [
    "deleting, moving or overwriting anything outside this worktree, or the worktree's own `.git` and `.zen/`",
    "`git reset --hard`, `checkout -- <paths>`, `clean -f`, `stash drop`, `branch -D`, history rewrites, "
    "and any force push (only `--force-with-lease` to your own branch)",
    "`sudo`, `su`, `doas`, `pkexec`; world-writable modes; disk tools",
    "reading or copying credentials (`~/.ssh`, `~/.aws`, `.env`, ...) or printing the environment",
    "destructive SQL (`DROP`, `TRUNCATE`, unscoped `DELETE`/`UPDATE`) through any client",
    "raw calls to payment, email/SMS, marketing and helpdesk APIs (use `zen gate NAME ...`)",
    "piping downloads or decoded text into a shell (`curl | sh`, `base64 -d | bash`, `eval`)",
    "editing zen's policy, approvals, incidents or hook settings (`.claude/settings*.json`)",
]

_WORD = re.compile(r"[A-Za-z][A-Za-z0-9_]{2,}")
_STOP = frozenset(["the", "and", "for", "with", "that", "this", "from", "into", "add", "fix", "make", "use", "when", "not", "are", "its", "all", "any", "new", "should", "test", "tests", "file", "files", "code", "please"])


# (lane repo, full base commit id, count) -> (recent history, tracked paths): a full commit id
# names content that never changes, so the jobs of one lane on one base read git once, not twice
# per start
_AT_BASE: dict[tuple[str, str, int], tuple[str | None, list[str]]] = {}
_AT_BASE_MAX = 32


def at_base(repo: Path, base_commit: str, recent: int) -> tuple[str | None, list[str]]:
    """`git log --oneline` of the last `recent` commits up to the base, and the paths tracked there,
    read from the lane's repository (a job's worktree shares its objects, and may not exist yet:
    the spawn renders the handoff while git makes it)."""
    key = (str(repo), base_commit, recent)
    hit = _AT_BASE.get(key)
    if hit is not None:
        return hit
    history = git.recent_commits(repo, base_commit, recent)
    files = git.files_at(repo, base_commit)
    found = (history, files or [])
    if history is not None and files is not None and re.fullmatch(r"[0-9a-f]{40}|[0-9a-f]{64}", base_commit):
        if len(_AT_BASE) >= _AT_BASE_MAX:
            _AT_BASE.clear()
        _AT_BASE[key] = found
    return found


def likely_files(tracked: list[str], prompt: str, limit: int = 8) -> list[str]:
    """Tracked files whose path mentions the prompt's words, most mentions first."""
    words = {w.lower() for w in _WORD.findall(prompt)} - _STOP
    if not words:
        return []
    scored = []
    for path in tracked[:20000]:
        low = path.lower()
        score = sum(1 for w in words if w in low)
        if score:
            scored.append((-score, len(path), path))
    return [p for _, _, p in sorted(scored)[:limit]]


def render(task: Task, *, job_id: str, lane: str, repo: Path, worktree: Path, branch: str,
           base_commit: str, level: str | None = None, recent: int = 8, home: Home | None = None) -> str:
    history, tracked = at_base(repo, base_commit, recent)
    history = history or "(unavailable)"
    deadline_at = iso(utcnow() + timedelta(seconds=task.timeout_s))
    files = likely_files(tracked, task.prompt)
    level = level or "suggest"
    lines = [
        f"# Handoff: {task.name}",
        "",
        f"Job `{job_id}`, agent `{task.agent.value}`, lane `{lane}`, domain `{task.domain or '-'}`.",
        "",
        "## Task",
        "",
        task.prompt.rstrip(),
        "",
        "## Hard constraints",
        "",
        f"- Autonomy level **{level}**: {LEVEL_MEANING.get(level, '')}",
        f"- Allowed paths: this worktree only, `{worktree}` (branch `{branch}`). Temporary files go in",
        "  `$TMPDIR`, which is inside it. There is no /tmp exception.",
        f"- Deadline: {deadline_at} ({task.timeout} from the start); then the agent is stopped and its",
        "  work harvested as it is.",
        "- Never merge, rebase or push into the lane's branches; commit on your branch. zen harvests",
        f"  your commits and uncommitted files onto `zen/review/{job_id}` for review.",
        "- Every shell command and file edit is checked by zen's guardian. A denied command is not an",
        "  error to work around: say what you needed and why. Blocked:",
        *[f"  - {b}" for b in BLOCKED],
        "- Other agents may work on this lane at the same time. Each file you write is leased to you",
        "  until you finish; a write to a file another job holds is refused (or flagged), naming it:",
        "  leave it to that job rather than writing it another way.",
        *([f"- Leased for you from the start: {', '.join(f'`{p}`' for p in task.paths)}."] if task.paths else []),
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
    if files:
        lines += ["- Files this task most likely touches:", *[f"  - `{f}`" for f in files], ""]
    lines += agreement(task)
    warnings = _incident_warnings(home, lane, task.domain, files) if home is not None else []
    if warnings:
        lines += ["## Warnings from past incidents", ""]
        for incident_id, title, texts in warnings:
            lines.append(f"- **{title}** (`zen incident show {incident_id}`)")
            lines += [f"  - {t}" for t in texts]
        lines.append("")
    return "\n".join(lines)


def agreement(task: Task) -> list[str]:
    """The coordination agreement of a worker (DESIGN 13): its goal, its paths, how to report
    and how to ask its parent. Jobs a human started get a line on the team tools instead."""
    if not task.parent:
        return ["## Team tools", "",
                "- zen's MCP tools (`agent_spawn`, `agent_wait`, `agent_status`, ...) start worker jobs for",
                "  parts of this task, each in its own worktree; their work comes back on their own review",
                "  branches. `get_agent_brief` describes this job.", ""]
    paths = ", ".join(f"`{p}`" for p in task.paths) if task.paths else "none leased in advance"
    goal = ("continued by zen after each turn until you report it done; the same blocker reported "
            "three turns in a row stops it as blocked" if task.goal == "until-done" else "one task")
    return [
        "## Coordination agreement (you are a worker)", "",
        f"- Parent job: `{task.parent}` started you (`created_by: {task.created_by}`). Your goal is the",
        f"  task above ({goal}).",
        f"- Your paths: {paths}. Stay within your goal; files other jobs lease are refused to you.",
        "- Report with the MCP tool `agent_report`: status `done` with a summary of what you did when",
        "  the goal is met (commit your work first), `blocked` with the blocker when you cannot go on,",
        "  `progress` for news on the way. Your parent waits for these reports.",
        "- Ask your parent with `agent_message` (id: your parent's job id); its answer reaches you as",
        "  a message. You control no other job: not your parent, not your siblings.",
        "",
    ]


def _incident_warnings(home: Home, lane: str, domain: str | None, files: list[str]) -> list[tuple[str, str, list[str]]]:
    out = []
    for inc in warnings_for(home, lane, domain, files):
        texts = list(inc.controls.handoff_warnings) or [inc.prevention.strip().splitlines()[0]]
        out.append((inc.id, inc.title, texts))
    return out

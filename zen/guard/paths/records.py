"""zen's records as an agent may read them (security-findings C4, L17): its own job's, its
workers', never another job's, never zen's logs.

    record_hit(path, recursive, home, job, roots, read) -> what of zen's records a read reaches, else None

- `logs/` (server.log holds the dashboard's login URL; guard-audit.jsonl every judged command of
  every job): no read at all, and no recursive read of a folder holding it.
- `jobs/<id>/...` of another job (pane.log, events.jsonl, prompt.txt, handoff.md, ...: another
  agent's output, prompts and commands): denied; the job's own records and its workers' (their
  task.yaml names it as parent) stay readable, and so does the list of job folders (`ls jobs`).
- `worktrees/<id>/...` of another job (`cat ../OTHER/README`): denied, the same way.

A recursive read of a folder that holds other jobs' records or worktrees (`grep -r x ..`,
`grep -r x $ZEN_HOME/jobs`) reaches them, so it is denied too.

Lean on purpose (imported by the hook): stdlib + zen.guard + the layout's names.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from zen.guard.paths.resolve import under
from zen.store import layout

Read = Callable[[str], bytes | None] | None


def record_hit(path: str, recursive: bool, home: str, job: str | None, roots: list[str], read: Read) -> str | None:
    h = home.rstrip("/") or "/"
    wts = f"{h}/{layout.WORKTREES}/"
    if not recursive and (not path.startswith(h + "/") or any(
            r.startswith(wts) and (path.startswith(r + "/") or path == r) for r in roots)):
        return None                         # the common case: outside the home, or in its own worktree
    logs = f"{h}/{layout.LOGS}"
    if under(path, logs) or (recursive and under(logs, path)):
        return f"zen's logs ({layout.LOGS}/: the dashboard's login, every job's judged commands)"
    for folder, what, one in ((layout.JOBS, "records", "records"), (layout.WORKTREES, "worktrees", "worktree")):
        top = f"{h}/{folder}"
        if recursive and under(top, path) and not any(under(top, r) for r in roots):
            return f"other jobs' {what} ({folder}/)"
        if not path.startswith(top + "/"):
            continue
        other = path[len(top) + 1:].split("/", 1)[0]
        if any(under(path, r) for r in roots) or other == job or _worker(h, other, job, read):
            return None
        return f"another job's {one} ({folder}/{other}): jobs read only their own (and their workers')"
    return None


def _worker(home: str, other: str, job: str | None, read: Read) -> bool:
    """`other` is a worker of `job` (its task.yaml says parent: job)."""
    if not job or read is None or not other:
        return False
    try:
        text = read(f"{home}/{layout.JOBS}/{other}/{layout.TASK}") or b""
    except OSError:
        return False
    m = re.search(rb"^parent:\s*['\"]?([^'\"\s#]+)", text, re.M)
    return m is not None and m.group(1).decode("utf-8", "replace") == job


def is_own_or_worker(home: str | None, name: str, job: str | None, read: Read) -> bool:
    """`zen output/show/log NAME`: NAME is the job's own id (or a prefix of it), or a worker's full id."""
    if not job or not name:
        return False
    if job.startswith(name):
        return True
    return home is not None and _worker(home.rstrip("/") or "/", name, job, read)

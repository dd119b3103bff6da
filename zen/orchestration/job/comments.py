"""Review comments on a job's lines, back to its agent in one message (issue 37).

    zen comment JOB PATH:LINE TEXT     queue one (`comment.queued`: the file, the line, the line's
                                       text in the harvested work, the comment)
    zen comment JOB --send             every queued comment typed into the waiting agent as one
                                       message (`input.sent`), then `review.comments` (the round,
                                       the comments); the agent's next harvest is the next round

A comment names a line of the job's harvested work (its review branch as harvested), so the agent
reads exactly the line the reviewer saw. Comments queued stay queued until a send delivers them;
a send that cannot type (the agent is not waiting) delivers nothing and keeps them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from zen.adapters import git as g
from zen.core.events import Actor
from zen.core.events import EventType as E
from zen.core.results import Result
from zen.errors import GitError, UsageError, ZenError
from zen.orchestration.job import control
from zen.orchestration.lanes import resolve_lane
from zen.orchestration.read.query import resolve_job
from zen.store.config import Config
from zen.store.home import Home
from zen.store.jobs import JobStore

MAX_TEXT = 4000


@dataclass(frozen=True)
class Queued(Result):
    job: str
    path: str
    line: int
    line_text: str
    text: str
    seq: int
    queued: int                      # comments now waiting for a send


@dataclass(frozen=True)
class Delivered(Result):
    job: str
    round: int
    count: int
    seq: int                         # the review.comments event
    comments: list[dict[str, Any]] = field(default_factory=list)


def _where(spec: str) -> tuple[str, int]:
    path, sep, line = spec.rpartition(":")
    if not sep or not path or not line.isdigit() or int(line) < 1:
        raise UsageError(f"{spec!r} is not PATH:LINE (a file of the job's work and a line number from 1)")
    if path.startswith("/") or ".." in Path(path).parts:
        raise UsageError(f"{path!r}: name the file by its path inside the repository")
    return path, int(line)


def pending(events: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The comments queued since the last send."""
    out: list[dict[str, Any]] = []
    for e in events:
        if e.get("type") == E.REVIEW_COMMENTS:
            out = []
        elif e.get("type") == E.COMMENT_QUEUED:
            out.append({k: e.get(k) for k in ("path", "line", "line_text", "text")})
    return out


def rounds(events: Sequence[Mapping[str, Any]]) -> int:
    return sum(1 for e in events if e.get("type") == E.REVIEW_COMMENTS)


def add(home: Home, ref: str, where: str, text: str) -> Queued:
    """Queue one comment on PATH:LINE of the job's harvested work."""
    text = text.strip()
    if not text:
        raise UsageError("the comment is empty")
    if len(text) > MAX_TEXT:
        raise UsageError(f"the comment is {len(text)} characters; at most {MAX_TEXT}")
    path, line = _where(where)
    store = JobStore(home)
    job_id = resolve_job(home, ref)
    snap = store.snapshot(job_id)
    if not snap.harvest_commit:
        raise ZenError(f"job {job_id} has no harvested work to comment on yet (zen harvest {job_id} makes it)")
    repo = Path(resolve_lane(Config.load(home), store.task(job_id)).repo)
    try:
        lines = g.out(repo, "show", f"{snap.harvest_commit}:{path}", what=f"read {path}").split("\n")
    except GitError:
        raise ZenError(f"{path} is not a file of job {job_id}'s harvested work") from None
    if line > len(lines):
        raise ZenError(f"{path} has {len(lines)} lines in job {job_id}'s harvested work, not {line}")
    ev = store.append(job_id, E.COMMENT_QUEUED, actor=Actor.HUMAN, path=path, line=line,
                      line_text=lines[line - 1], text=text)
    return Queued(job_id, path, line, lines[line - 1], text, int(ev["seq"]), len(pending(store.events(job_id))))


def message(comments: Sequence[Mapping[str, Any]], round_no: int) -> str:
    """The one message the agent gets: each comment with its file, line and the line's text."""
    head = (f"Review comments (round {round_no}) on your work, {len(comments)} in all. Address each one, "
            "then finish as before:")
    parts = [head]
    for i, c in enumerate(comments, 1):
        parts.append(f"\n{i}. {c['path']}:{c['line']}\n   > {str(c['line_text']).strip()}\n   {c['text']}")
    return "\n".join(parts) + "\n"


def send(home: Home, ref: str) -> Delivered:
    """Type every queued comment into the waiting agent as one message, and record the round."""
    store = JobStore(home)
    job_id = resolve_job(home, ref)
    events = store.events(job_id)
    queued = pending(events)
    if not queued:
        raise ZenError(f"no comments are queued for job {job_id} (zen comment {job_id} PATH:LINE TEXT queues one)")
    round_no = rounds(events) + 1
    control.send(home, job_id, message(queued, round_no))
    ev = store.append(job_id, E.REVIEW_COMMENTS, actor=Actor.HUMAN, round=round_no, count=len(queued),
                      comments=queued)
    store.snapshot(job_id)
    return Delivered(job_id, round_no, len(queued), int(ev["seq"]), queued)


__all__ = ["Delivered", "Queued", "add", "message", "pending", "send"]

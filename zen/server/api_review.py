"""Review in the page (issue 35): a harvested job's verdict, as `zen accept` / `zen reject`
record it (evidence toward the domain's autonomy; a rejection demotes the domain and needs the
correction). A rejected job whose agent is still running also gets the correction typed in."""

from __future__ import annotations

from fastapi import APIRouter, Depends
from pydantic import BaseModel, ConfigDict, Field

from zen.orchestration.job import comments, control
from zen.orchestration.read.query import resolve_job
from zen.orchestration.safety import autonomy as auto
from zen.server.api_tasks import ERRORS
from zen.server.context import home
from zen.store.home import Home
from zen.store.jobs import JobStore

router = APIRouter(prefix="/api/v1/agent", tags=["sessions"], responses=ERRORS)


class RejectBody(BaseModel):
    model_config = ConfigDict(extra="forbid")

    correction: str = Field(min_length=1, max_length=20_000, description="What was wrong.")


class VerdictOut(BaseModel):
    job: str
    domain: str
    verdict: str = Field(description="accepted | corrected")
    level: str
    demoted_to: str | None = None
    sent: bool = Field(False, description="True when the correction was also typed into the running agent.")


def _out(v: auto.Verdict, sent: bool = False) -> VerdictOut:
    return VerdictOut(job=v.job, domain=v.domain, verdict=v.verdict, level=v.level.label,
                      demoted_to=v.demoted_to.label if v.demoted_to else None, sent=sent)


@router.post("/sessions/{job}/accept", response_model=VerdictOut)
def accept(job: str, h: Home = Depends(home)) -> VerdictOut:
    """The harvested result was right (as `zen accept`): evidence toward the domain's next level."""
    return _out(auto.verdict(h, resolve_job(h, job), accepted=True))


@router.post("/sessions/{job}/reject", response_model=VerdictOut)
def reject(job: str, body: RejectBody, h: Home = Depends(home)) -> VerdictOut:
    """The harvested result was wrong (as `zen reject --correction`): recorded, the domain demoted;
    a still running agent gets the correction as input."""
    job_id = resolve_job(h, job)
    v = auto.verdict(h, job_id, accepted=False, correction=body.correction)
    sent = False
    if JobStore(h).snapshot(job_id).state.live:
        control.send(h, job_id, body.correction.strip(), force=True)
        sent = True
    return _out(v, sent)


class CommentBody(BaseModel):
    model_config = ConfigDict(extra="forbid")

    path: str = Field(min_length=1, max_length=4096, description="A file of the job's harvested work.")
    line: int = Field(ge=1, description="Its line, from 1.")
    text: str = Field(min_length=1, max_length=comments.MAX_TEXT, description="The comment.")


class CommentOut(BaseModel):
    job: str
    path: str
    line: int
    line_text: str
    queued: int = Field(description="Comments now waiting for a send.")


class CommentsSent(BaseModel):
    job: str
    round: int
    count: int


@router.post("/sessions/{job}/comments", response_model=CommentOut)
def comment(job: str, body: CommentBody, h: Home = Depends(home)) -> CommentOut:
    """Queue a comment on a line of the job's harvested work (as `zen comment JOB PATH:LINE TEXT`)."""
    q = comments.add(h, job, f"{body.path}:{body.line}", body.text)
    return CommentOut(job=q.job, path=q.path, line=q.line, line_text=q.line_text, queued=q.queued)


@router.post("/sessions/{job}/comments/send", response_model=CommentsSent)
def send_comments(job: str, h: Home = Depends(home)) -> CommentsSent:
    """Every queued comment to the waiting agent as one message, a review round (`zen comment --send`)."""
    d = comments.send(h, job)
    return CommentsSent(job=d.job, round=d.round, count=d.count)

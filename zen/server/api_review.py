"""Review in the page (issue 35): a harvested job's verdict, as `zen accept` / `zen reject`
record it (evidence toward the domain's autonomy; a rejection demotes the domain and needs the
correction). A rejected job whose agent is still running also gets the correction typed in."""

from __future__ import annotations

from fastapi import APIRouter, Depends
from pydantic import BaseModel, ConfigDict, Field

from zen.orchestration.job import control
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

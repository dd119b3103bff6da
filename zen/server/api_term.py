"""A job's terminal in the page (issue 35): its seed (scrollback and screen), its size following
the tile (tmux resize-window), and the read-only replay of an ended job's output. The live
output itself comes on the page's one stream (api_stream.py)."""

from __future__ import annotations

from fastapi import APIRouter, Depends
from pydantic import BaseModel, ConfigDict, Field

from zen.orchestration.job import terminal
from zen.orchestration.read.query import resolve_job
from zen.server.api_tasks import ERRORS
from zen.server.context import home
from zen.server.models import Screen
from zen.store.home import Home

router = APIRouter(prefix="/api/v1/agent", tags=["sessions"], responses=ERRORS)


class SizeBody(BaseModel):
    model_config = ConfigDict(extra="forbid")

    cols: int = Field(ge=terminal.MIN_COLS, le=terminal.MAX_COLS)
    rows: int = Field(ge=terminal.MIN_ROWS, le=terminal.MAX_ROWS)


class Seed(BaseModel):
    job: str
    data: str = ""
    cursor_x: int = 0
    cursor_y: int = 0
    width: int = 0
    height: int = 0
    offset: int = 0
    live: bool = False


class Replay(BaseModel):
    job: str
    data: str
    cut: bool = Field(description="True when only the end of a longer output is given.")


@router.get("/sessions/{job}/terminal", response_model=Seed)
def get_seed(job: str, h: Home = Depends(home)) -> Seed:
    """The agent's scrollback and screen now, to start a terminal from (its output then comes
    on /stream as `event: out` from `offset` on)."""
    return Seed(**terminal.seed(h, resolve_job(h, job)).to_json())


@router.post("/sessions/{job}/terminal/size", response_model=Screen)
def set_size(job: str, body: SizeBody, h: Home = Depends(home)) -> Screen:
    """Make the agent's pane this many columns and rows (the page's tile); it redraws."""
    return Screen(**terminal.resize(h, job, body.cols, body.rows).to_json())


@router.get("/sessions/{job}/replay", response_model=Replay)
def get_replay(job: str, h: Home = Depends(home)) -> Replay:
    """The end of the job's output as its pane printed it (escapes kept), for a read-only terminal."""
    data, cut = terminal.replay(h, job)
    return Replay(job=resolve_job(h, job), data=data, cut=cut)

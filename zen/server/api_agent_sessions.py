"""/api/v1/agent/agent-sessions: every Claude Code and Codex session on this machine, zen's or not
(issue 39; `zen sessions` prints the same). The dashboard's own /sessions are zen's jobs."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from fastapi import APIRouter, Depends, Query
from pydantic import BaseModel, ConfigDict

from zen.core.durations import parse_duration
from zen.errors import UsageError
from zen.observe import sessions as found
from zen.observe.record import home_prices
from zen.server.api_tasks import ERRORS
from zen.server.context import home
from zen.store.home import Home

router = APIRouter(prefix="/api/v1/agent", tags=["sessions"], responses=ERRORS)


class AgentSession(BaseModel):
    """One session; its tokens by class, cost and API calls as further fields (the ledger's names)."""

    model_config = ConfigDict(extra="allow")
    agent: str
    session: str
    project: str
    started: str
    last_activity: str
    turns: int
    model: str
    zen: bool
    job: str | None
    path: str


class AgentSessions(BaseModel):
    sessions: list[AgentSession]
    total: dict[str, Any]


@router.get("/agent-sessions", response_model=AgentSessions)
def agent_sessions(since: str | None = Query(None, max_length=40, description="Only sessions active in this long (7d)."),
                   project: str | None = Query(None, max_length=4096,
                                               description="Only sessions whose directory names this."),
                   h: Home = Depends(home)) -> dict[str, Any]:
    """Each session: agent, id, project, started, last activity, turns, tokens by class, cost, API
    calls, and the zen job that ran it (none: started outside zen); and their totals."""
    try:
        since_s = parse_duration(since) if since else None
    except ValueError as exc:
        raise UsageError(f"since: {exc}") from None
    listed = found.find(Path(os.environ.get("HOME") or Path.home()), since_s=since_s, project=project,
                        home=h, prices=home_prices(h.root))
    return {"sessions": [s.to_json() for s in listed], "total": found.totals(listed)}

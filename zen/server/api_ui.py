"""The page at /agent (its assets ship in the package: zen/server/static), the status line and
the lane sidebar."""

from __future__ import annotations

from pathlib import Path

from fastapi import APIRouter, Depends
from fastapi import Path as PathParam
from fastapi.responses import FileResponse, RedirectResponse

from zen import __version__
from zen.orchestration.read.status import supervisor_status
from zen.server.api_tasks import ERRORS
from zen.server.context import home
from zen.server.models import Lane, LaneList, Status
from zen.store.config import Config, lane_path
from zen.store.home import Home
from zen.store.jobs import JobStore

STATIC = Path(__file__).resolve().parent / "static"

router = APIRouter(prefix="/api/v1/agent", tags=["dashboard"], responses=ERRORS)
page = APIRouter()


TABS = "sessions|tasks|guardrails|metrics|grid|machine"


@page.get("/agent", include_in_schema=False)
def index() -> FileResponse:
    return FileResponse(STATIC / "index.html", media_type="text/html; charset=utf-8")


# the page's own addresses (issue 35): a tab, or one job; the page reads which from its URL, so
# a link to a job opens it, and Back/Forward move between them
@page.get("/agent/jobs/{job}", include_in_schema=False)
def job_page(job: str = PathParam(max_length=200)) -> FileResponse:
    return index()


@page.get("/agent/{tab}", include_in_schema=False)
def tab_page(tab: str = PathParam(pattern=f"^({TABS})$")) -> FileResponse:
    return index()


@page.get("/", include_in_schema=False)
def root() -> RedirectResponse:
    return RedirectResponse("/agent", status_code=303)


@router.get("/status", response_model=Status)
def status(h: Home = Depends(home)) -> Status:
    """The home, the supervisor, the kill switch, and how many jobs are in each state."""
    counts: dict[str, int] = {}
    for snap in JobStore(h).snapshots():
        counts[snap.state.value] = counts.get(snap.state.value, 0) + 1
    sup = supervisor_status(h)
    return Status(home=str(h.root), supervisor={"running": sup["running"], "pid": sup["pid"], "summary": sup["summary"]},
                  kill_switch=sup["kill_switch"], counts=counts, version=__version__)


@router.get("/lanes", response_model=LaneList)
def lanes(h: Home = Depends(home)) -> LaneList:
    """The lanes of zen.yaml with how many jobs each has, live and in all."""
    snaps = JobStore(h).snapshots()
    out = []
    for name, spec in sorted(Config.load(h).lanes.items()):
        mine = [s for s in snaps if s.lane == name]
        out.append(Lane(name=name, path=str(lane_path(spec)), base=spec.get("base"), domain=spec.get("domain"),
                        live=sum(1 for s in mine if s.state.live), jobs=len(mine)))
    return LaneList(lanes=out)

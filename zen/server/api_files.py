"""/api/v1/agent/sessions/{job}/files, /diff, /file: the grid's file browser and editor."""

from __future__ import annotations

from fastapi import APIRouter, Depends, Query

from zen.orchestration.job import worktree_files
from zen.server.api_tasks import ERRORS
from zen.server.context import home
from zen.server.models import ActionResult, Diff, FileContent, FileList, FileWrite
from zen.store.home import Home

router = APIRouter(prefix="/api/v1/agent", tags=["files"], responses=ERRORS)


@router.get("/sessions/{job}/files", response_model=FileList)
def list_files(job: str, h: Home = Depends(home)) -> FileList:
    """The files of the job's worktree as a harvest would take them, each marked against the base."""
    return FileList(**worktree_files.listing(h, job).to_json())


@router.get("/sessions/{job}/diff", response_model=Diff)
def get_diff(job: str, h: Home = Depends(home)) -> Diff:
    """The worktree's diff against the commit the job started from (untracked files included)."""
    return Diff(**worktree_files.diff(h, job).to_json())


@router.get("/sessions/{job}/file", response_model=FileContent)
def get_file(job: str, path: str = Query(..., min_length=1, max_length=4096), h: Home = Depends(home)) -> FileContent:
    """One file of the worktree, with its sha256 for a compare-and-set save."""
    return FileContent(**worktree_files.read(h, job, path).to_json())


@router.put("/sessions/{job}/file", response_model=ActionResult)
def put_file(job: str, body: FileWrite, h: Home = Depends(home)) -> ActionResult:
    """A human's save of one worktree file (atomic; refused if it changed since `expected_sha`),
    recorded as files.edited with actor human."""
    r = worktree_files.write(h, job, body.path, body.content, expected_sha=body.expected_sha)
    return ActionResult(**r.to_json(), state=None)

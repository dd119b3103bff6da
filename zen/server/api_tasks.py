"""/api/v1/agent/tasks and /queue: tasks in, through the same validation and spool as `zen dispatch`."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Depends, Query, status

from zen.core.durations import parse_duration
from zen.core.model import Task
from zen.core.refs import resolve
from zen.errors import InvalidTask, NotFound, ZenError
from zen.orchestration.intake.dispatch import dispatch
from zen.orchestration.job import control
from zen.orchestration.read.query import pending_tasks, resolve_job
from zen.server.context import home
from zen.server.models import (
    ActionResult,
    Problem,
    Session,
    TaskCreate,
    TaskDetail,
    TaskList,
    TaskOut,
)
from zen.store.home import Home
from zen.store.jobs import JobStore

ERRORS: dict[int | str, dict[str, Any]] = {
    404: {"model": Problem}, 409: {"model": Problem}, 422: {"model": Problem}, 401: {"model": Problem},
    403: {"model": Problem}, 400: {"model": Problem},
}
router = APIRouter(prefix="/api/v1/agent", tags=["tasks"], responses=ERRORS)

LOG_TAIL = 8000


def fields_of(body: TaskCreate) -> dict[str, Any]:
    """The task fields `zen dispatch` takes, from the API's body (description = prompt if none)."""
    prompt = body.prompt if body.prompt is not None else body.description
    fields: dict[str, Any] = {
        "prompt": prompt, "name": body.name, "lane": body.lane, "repo": body.repo, "agent": body.agent,
        "command": body.command, "priority": body.priority, "depends_on": list(body.depends_on),
        "timeout": body.timeout, "max_retries": body.max_retries, "domain": body.domain, "base": body.base,
        "script": body.script,
    }
    if body.config is not None:
        fields["model"] = body.config.model
        fields["max_tokens"] = body.config.max_tokens
    if body.command is not None and body.agent is None:
        fields["agent"] = "cmd"
    if fields.get("timeout") is not None:
        try:
            if parse_duration(fields["timeout"]) <= 0:
                raise ValueError("the timeout must be positive")
        except ValueError as exc:
            raise InvalidTask(f"timeout: {exc}") from None
    return fields


def task_out(task: Task, state: str) -> TaskOut:
    data = task.model_dump(mode="json", exclude={"script"})
    return TaskOut(**data, state=state)


def all_tasks(h: Home) -> list[TaskOut]:
    """Tasks not yet taken in (state `pending`), then every job's task with its job's state."""
    out = [task_out(t, "pending") for t in pending_tasks(h)]
    store = JobStore(h)
    for job_id in store.ids():
        try:
            out.append(task_out(store.task(job_id), store.snapshot(job_id).state.value))
        except ZenError:
            continue  # a record being written right now
    return out


def _pending(h: Home, ref: str) -> Task | None:
    tasks = {t.id: t for t in pending_tasks(h)}
    try:
        return tasks[resolve(ref, {i: t.name for i, t in tasks.items()})]
    except NotFound:
        return None


def detail(h: Home, ref: str) -> TaskDetail:
    pending = None
    try:
        job_id = resolve_job(h, ref)
    except NotFound:
        pending = _pending(h, ref)
        if pending is None:
            raise
    if pending is not None:
        return TaskDetail(task=task_out(pending, "pending"))
    store = JobStore(h)
    snap = store.snapshot(job_id)
    paths = store.paths(job_id)
    try:
        review = paths.review.read_text()
    except OSError:
        review = None
    try:
        with paths.pane_log.open("rb") as f:
            f.seek(0, 2)
            f.seek(max(0, f.tell() - LOG_TAIL * 4))
            tail = control.strip_ansi(f.read().decode(errors="replace"))[-LOG_TAIL:]
    except OSError:
        tail = ""
    return TaskDetail(task=task_out(store.task(job_id), snap.state.value),
                      session=Session(**snap.model_dump(mode="json")), review=review, log_tail=tail)


@router.post("/tasks", response_model=TaskOut, status_code=status.HTTP_201_CREATED)
def create_task(body: TaskCreate, h: Home = Depends(home)) -> TaskOut:
    """Queue a task: validated like `zen dispatch`, then written to spool/new as a task file."""
    try:
        return task_out(dispatch(h, fields_of(body)), "pending")
    except NotFound as exc:  # an unknown lane or dependency is bad input here, not a missing resource
        raise InvalidTask(str(exc)) from None


@router.get("/tasks", response_model=TaskList)
def list_tasks(state: str | None = Query(None, max_length=20, description="Only tasks whose job is in this state."),
               h: Home = Depends(home)) -> TaskList:
    """Every task: pending ones in the spool, then one per job (history included)."""
    rows = all_tasks(h)
    return TaskList(tasks=[t for t in rows if state is None or t.state == state])


@router.get("/tasks/{task_id}", response_model=TaskDetail)
def get_task(task_id: str, h: Home = Depends(home)) -> TaskDetail:
    """A task with its job: state, review.md (the result) and the end of its terminal log."""
    return detail(h, task_id)


@router.delete("/tasks/{task_id}", response_model=ActionResult)
def delete_task(task_id: str, h: Home = Depends(home)) -> ActionResult:
    """Cancel the task: a pending or queued one never starts; a running agent is stopped and its
    work harvested (as `zen cancel`). Nothing is deleted from disk."""
    return ActionResult(**control.cancel(h, task_id, "cancelled over the API").to_json())


@router.post("/queue", response_model=TaskOut, status_code=status.HTTP_201_CREATED)
def enqueue(body: TaskCreate, h: Home = Depends(home)) -> TaskOut:
    """Same as POST /tasks."""
    return create_task(body, h)


@router.get("/queue", response_model=TaskList)
def list_queue(h: Home = Depends(home)) -> TaskList:
    """Tasks not started yet: pending in the spool, or queued jobs."""
    return TaskList(tasks=[t for t in all_tasks(h) if t.state in ("pending", "queued")])


@router.delete("/queue/{task_id}", response_model=ActionResult)
def dequeue(task_id: str, h: Home = Depends(home)) -> ActionResult:
    """Take a task out of the queue (cancel it); refused once its agent has started."""
    try:
        snap = JobStore(h).snapshot(resolve_job(h, task_id))
    except NotFound:
        snap = None
        if _pending(h, task_id) is None:
            raise
    if snap is not None and snap.state.value != "queued":
        raise ZenError(f"job {snap.job} is {snap.state.value}, not queued (DELETE /tasks/{snap.job} cancels it)")
    return ActionResult(**control.cancel(h, task_id, "taken out of the queue over the API").to_json())

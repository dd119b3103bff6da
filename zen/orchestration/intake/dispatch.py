"""zen dispatch: validate a task completely, then publish it to the spool. Nothing is written
for a bad task. Works with no supervisor running. Must stay free of libtmux/GitPython/watchdog."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import ValidationError

from zen.core.ids import make_job_id
from zen.core.model import JobStatus, Task
from zen.core.refs import resolve
from zen.core.schedule import find_cycle
from zen.errors import InvalidTask, ZenError
from zen.orchestration.intake.enqueue import ID_ATTEMPTS, prepare, refuse_when_full
from zen.orchestration.read.query import job_names, pending_tasks
from zen.store import spool
from zen.store.config import Config
from zen.store.home import Home
from zen.store.jobs import JobStore, describe_validation, dump_task, load_task_text, task_mapping


def build_task(home: Home, cfg: Config, fields: dict[str, Any], *, prepared: bool = False) -> Task:
    """A complete, validated Task from user-given fields (None = not given); `prepared`: the
    fields are enqueue.prepare's already (the fast lane's, handed on)."""
    f = dict(fields) if prepared else prepare(cfg, fields)   # refuses a prompt over limits.max_prompt_size too
    if f.get("depends_on"):
        f["depends_on"] = resolve_dependencies(home, [str(d) for d in f["depends_on"]], f["name"], f["id"])
    try:
        return Task.model_validate(f)
    except ValidationError as exc:
        raise InvalidTask(describe_validation(exc)) from None


def resolve_dependencies(home: Home, refs: list[str], own_name: str, own_id: str | None = None) -> list[str]:
    names = job_names(home, include_pending=True)
    out: list[str] = []
    for ref in refs:
        if ref in (own_name, own_id):
            raise InvalidTask(f"the task cannot depend on itself ({ref!r})")
        try:
            out.append(resolve(ref, names, what="dependency"))
        except ZenError as exc:
            raise InvalidTask(str(exc)) from None
    out = sorted(set(out), key=out.index)
    if own_id is not None:
        _refuse_cycles(home, own_id, out)
    return out


def _refuse_cycles(home: Home, own_id: str, deps: list[str]) -> None:
    """A task file may carry its own id; make sure no chain of dependencies leads back to it."""
    graph: dict[str, list[str]] = {own_id: deps}
    store = JobStore(home)
    for job_id in store.ids():
        try:
            graph.setdefault(job_id, list(store.task(job_id).depends_on))
        except ZenError:
            continue
    for t in pending_tasks(home):
        graph.setdefault(t.id, list(t.depends_on))
    cycle = find_cycle(graph)
    if cycle:
        raise InvalidTask("dependency cycle: " + " -> ".join(cycle))


def dispatch(home: Home, fields: dict[str, Any], task_file: Path | None = None, *,
             prepared: dict[str, Any] | None = None) -> Task:
    """Validate and publish a task. `prepared`: what enqueue.prepare made of `fields` already (the
    fast lane declined the task), used as it is: a dispatch prepares its task once."""
    cfg = Config.load(home)
    if prepared is not None and task_file is None:
        task = build_task(home, cfg, prepared, prepared=True)
        return _publish(home, cfg, task)
    if task_file is not None:
        fields = with_task_file(fields, task_file)
    return _publish(home, cfg, build_task(home, cfg, fields))


def with_task_file(fields: dict[str, Any], task_file: Path) -> dict[str, Any]:
    """A task file's fields with the given ones over them (a flag overrides the file)."""
    try:
        text = task_file.read_text()
    except OSError as exc:
        raise InvalidTask(f"cannot read {task_file}: {exc.strerror}") from None
    data = task_mapping(text, str(task_file))
    data.pop("zen", None)
    return {**data, **{k: v for k, v in fields.items() if v is not None and v != []}}


def _publish(home: Home, cfg: Config, task: Task) -> Task:
    refuse_when_full(home, cfg)
    for _ in range(ID_ATTEMPTS):
        if not spool.id_taken(home, task.id):
            text = dump_task(task)
            load_task_text(text, "the task")  # what we publish must read back
            if spool.publish(home, task, text):
                return task
        task = task.model_copy(update={"id": make_job_id(task.name)})
    raise ZenError("could not find a free job id (is the clock stuck?)")


__all__ = ["JobStatus", "build_task", "dispatch"]

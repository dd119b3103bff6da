"""zen dispatch: validate a task completely, then publish it to the spool. Nothing is written
for a bad task. Works with no supervisor running. Must stay free of libtmux/GitPython/watchdog."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import ValidationError

from zen.adapters import git_probe as git
from zen.core.ids import iso, make_job_id, name_from_prompt, utcnow
from zen.core.model import JobStatus, Task
from zen.core.refs import resolve
from zen.core.schedule import find_cycle
from zen.errors import InvalidTask, ZenError
from zen.orchestration.lanes import get_lane
from zen.orchestration.query import job_names, pending_tasks, queued_count
from zen.store import spool
from zen.store.config import Config
from zen.store.home import Home
from zen.store.jobs import JobStore, describe_validation, dump_task, load_task_text, task_mapping


def build_task(home: Home, cfg: Config, fields: dict[str, Any]) -> Task:
    """A complete, validated Task from user-given fields (None = not given)."""
    f = {k: v for k, v in fields.items() if v is not None and v != []}
    prompt = f.get("prompt")
    if prompt is None or not str(prompt).strip():
        raise InvalidTask("the prompt is empty (give the task as text, or - to read it from stdin)")
    defaults = cfg.section("defaults")
    f.setdefault("agent", defaults.get("agent", "sim"))
    f.setdefault("priority", defaults.get("priority", 3))
    f.setdefault("timeout", defaults.get("timeout", "30m"))
    f.setdefault("max_retries", cfg.get("retry", "max_retries"))
    f.setdefault("created_by", "human")

    if "lane" in f and "repo" in f:
        raise InvalidTask("give either --lane or --repo, not both")
    if "repo" not in f and "lane" not in f:
        lanes = cfg.lanes
        if len(lanes) == 1:
            f["lane"] = next(iter(lanes))
        else:
            hint = "no lanes yet: add one with zen lane add" if not lanes else "known: " + ", ".join(sorted(lanes))
            raise InvalidTask(f"say which lane the task is for with --lane ({hint}) or --repo PATH")
    if "lane" in f:
        lane = get_lane(cfg, str(f["lane"]))
        repo = Path(str(lane.get("path")))
        f.setdefault("base", lane.get("base"))
        f.setdefault("domain", lane.get("domain") or defaults.get("domain"))
    else:
        repo = Path(str(f["repo"])).expanduser().absolute()
        if not git.is_repo(repo):
            raise InvalidTask(f"--repo {repo} is not a git repository")
        f["repo"] = str(git.toplevel(repo) or repo)
        repo = Path(f["repo"])
        f.setdefault("base", git.current_branch(repo) or "HEAD")
        f.setdefault("domain", defaults.get("domain"))
    if git.resolve_commit(repo, str(f["base"])) is None:
        raise InvalidTask(f"base {f['base']!r} does not resolve to a commit in {repo}")

    name = f.get("name") or name_from_prompt(str(prompt))
    f["name"] = name
    f.setdefault("created_at", iso(utcnow()))
    f.setdefault("id", make_job_id(name))
    if f.get("priority") is not None:
        try:
            f["priority"] = int(f["priority"])
        except (TypeError, ValueError):
            raise InvalidTask(f"priority {f['priority']!r} must be a whole number from 1 to 5") from None
        if not 1 <= f["priority"] <= 5:
            raise InvalidTask(f"priority {f['priority']} must be from 1 (first) to 5 (last)")
    if f.get("depends_on"):
        f["depends_on"] = resolve_dependencies(home, [str(d) for d in f["depends_on"]], name, f["id"])
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


def dispatch(home: Home, fields: dict[str, Any], task_file: Path | None = None) -> Task:
    cfg = Config.load(home)
    if task_file is not None:
        try:
            text = task_file.read_text()
        except OSError as exc:
            raise InvalidTask(f"cannot read {task_file}: {exc.strerror}") from None
        data = task_mapping(text, str(task_file))
        data.pop("zen", None)
        merged = {**data, **{k: v for k, v in fields.items() if v is not None and v != []}}
        fields = merged
    limit = int(cfg.get("supervisor", "max_queue_size"))
    task = build_task(home, cfg, fields)
    if queued_count(home) >= limit:
        raise ZenError(f"the queue is full ({limit} tasks waiting; raise supervisor.max_queue_size in zen.yaml or wait)")
    for _ in range(50):
        if not spool.id_taken(home, task.id):
            text = dump_task(task)
            load_task_text(text, "the task")  # what we publish must read back
            if spool.publish(home, task, text):
                return task
        task = task.model_copy(update={"id": make_job_id(task.name)})
    raise ZenError("could not find a free job id (is the clock stuck?)")


__all__ = ["JobStatus", "build_task", "dispatch"]

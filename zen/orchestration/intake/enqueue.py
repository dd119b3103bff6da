"""zen dispatch's fast lane (issue 21): a plain task checked and published with the stdlib alone.

`prepare` turns the user's fields into a complete task (defaults, lane, base, name, id, priority)
for both lanes; `enqueue` then checks it without the model (zen.core.taskcheck.quick) and writes
it (taskcheck.yaml_text) when it is sure, and returns None whenever it is not (dependencies, a
task file, anything the quick check leaves to the model): zen.orchestration.intake.dispatch then does it
all with the model. The queue's size comes from the spool and the jobs the index of finished ones
does not hold, so a dispatch reads no finished job.
"""

from __future__ import annotations

from pathlib import Path

from zen.adapters import git_probe as git
from zen.core.ids import iso, make_job_id, name_from_prompt, utcnow
from zen.core.sizes import format_size
from zen.core.taskcheck import quick, yaml_text
from zen.errors import InvalidTask, ZenError
from zen.store import snapshots, spool
from zen.store.config import Config
from zen.store.layout import Home

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

ID_ATTEMPTS = 50


def prepare(cfg: Config, fields: dict[str, Any]) -> dict[str, Any]:
    """A complete task from user-given fields (None = not given), not yet validated as a whole;
    dependencies stay as the user named them."""
    f = {k: v for k, v in fields.items() if v is not None and v != []}
    prompt = f.get("prompt")
    if prompt is None or not str(prompt).strip():
        raise InvalidTask("the prompt is empty (give the task as text, or - to read it from stdin)")
    size, limit = len(str(prompt).encode()), cfg.size("limits", "max_prompt_size")
    if size > limit:
        raise InvalidTask(f"the prompt is {format_size(size)}, over the limit of {format_size(limit)} "
                          "(limits.max_prompt_size in zen.yaml); give the agent a file to read instead")
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
        lane = cfg.lane(str(f["lane"]))
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
            given = f["priority"]
            if isinstance(given, bool) or (isinstance(given, float) and not given.is_integer()):
                raise ValueError(given)   # int() would make 2.5 a 2 and yes a 1
            f["priority"] = int(given)
        except (TypeError, ValueError):
            raise InvalidTask(f"priority {f['priority']!r} must be a whole number from 1 to 5") from None
        if not 1 <= f["priority"] <= 5:
            raise InvalidTask(f"priority {f['priority']} must be from 1 (first) to 5 (last)")
    return f


def refuse_when_full(home: Home, cfg: Config) -> None:
    limit = int(cfg.get("supervisor", "max_queue_size"))
    if snapshots.queued_count(home) >= limit:
        raise ZenError(f"the queue is full ({limit} tasks waiting; raise supervisor.max_queue_size in zen.yaml or wait)")


def enqueue(home: Home, fields: dict[str, Any]) -> dict[str, Any] | None:
    """The task as published (as the model dumps it), or None: the model's lane must do it."""
    return enqueue_or_prepare(home, fields)[0]


def enqueue_or_prepare(home: Home, fields: dict[str, Any]) -> tuple[dict[str, Any] | None, dict[str, Any]]:
    """(the task as published, or None when the model's lane must do it; the prepared fields),
    so that lane starts from them (dispatch(prepared=)) instead of preparing them again: a
    dispatch prepares its task once (issue 34)."""
    cfg = Config.load(home)
    f = prepare(cfg, fields)
    if f.get("depends_on"):
        return None, f
    task = quick(f)
    if task is None or yaml_text(task) is None:
        return None, f
    refuse_when_full(home, cfg)
    for _ in range(ID_ATTEMPTS):
        if not spool.id_taken(home, task["id"]):
            text = yaml_text(task)
            if text is not None and spool.publish_text(home, task["id"], text):
                return task, f
        task["id"] = make_job_id(task["name"])
    raise ZenError("could not find a free job id (is the clock stuck?)")

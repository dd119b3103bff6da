"""Job records: jobs/<id>/ with task.yaml (never rewritten), events.jsonl and state.json.

state.json is a cache of `replay(events)`: it remembers the byte offset it has folded up to,
so bringing it up to date reads only the new lines. Any process may refresh it; the job lock
serialises the refreshes so an older snapshot never replaces a newer one.
"""

from __future__ import annotations

import json
import logging
import os
import re
from io import StringIO
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from zen.core import states, taskcheck
from zen.core.events import EventType
from zen.core.model import JobSnapshot, Task
from zen.errors import InvalidTask, NotFound
from zen.store import events as ev_store
from zen.store import index
from zen.store.atomic import atomic_write, create_exclusive, flocked, fsync_dir
from zen.store.faults import crash_point
from zen.store.layout import EVENTS, EVENTS_LOCK, STATE, TASK, Home, JobPaths
from zen.store.snapshots import catch_up

log = logging.getLogger(__name__)


def _yaml() -> Any:
    # ruamel costs 30 ms: `zen status` over many jobs reads state.json only and must not pay it
    from ruamel.yaml import YAML

    return YAML


_OPTIONAL = ("script", "model", "max_tokens", "executor", "goal", "request_id", "budget", "group")  # written only when set
# `key: ` / `- ` ending a line: an empty scalar, which only a None can be (a plain scalar never
# ends in a space, a folded quoted one breaks after a non-space), written `key:` as by hand
_EMPTY_TAIL = re.compile(r"([:-]) $", re.M)
_TRAILING = re.compile(r" +$", re.M)
_DUMPER: list[Any] = []


def _task_yaml(pure: bool = False) -> Any:
    """A safe YAML writer on ruamel's C emitter (ruamel.yaml.clib; the pure one where it is
    missing or asked for), as readable as the round-trip dumper it replaces (3x slower): fields
    in the model's order, unicode as is, block style, None as an empty value (`repo:`), a
    multi-line string double-quoted with its line breaks escaped."""
    if not _DUMPER:
        YAML = _yaml()

        class TaskRepresenter(YAML(typ="safe").Representer):  # type: ignore[misc]  # SafeRepresenter
            pass

        def none(rep: Any, _: None) -> Any:
            return rep.represent_scalar("tag:yaml.org,2002:null", "")

        def text(rep: Any, data: str) -> Any:
            return rep.represent_scalar("tag:yaml.org,2002:str", data, style='"' if "\n" in data else None)

        TaskRepresenter.add_representer(type(None), none)
        TaskRepresenter.add_representer(str, text)
        _DUMPER.append((YAML, TaskRepresenter))
    YAML, representer = _DUMPER[0]
    y = YAML(typ="safe", pure=pure)   # one per dump: a YAML object keeps its emitter between calls
    y.Representer = representer
    y.sort_base_mapping_type_on_output = False
    y.allow_unicode = True
    y.default_flow_style = False
    return y


def dump_task(task: Task) -> str:
    return _task_text(task)[0]


def _task_text(task: Task) -> tuple[str, dict[str, Any]]:
    """task.yaml's text, and the plain data it holds (what reading that text gives back)."""
    data = task.model_dump(mode="json", exclude_none=False)
    for optional in _OPTIONAL:
        if data.get(optional) is None:
            data.pop(optional, None)
    text = _EMPTY_TAIL.sub(r"\1", _dump(data))
    if "\\U" in text:
        # libyaml escapes every character beyond the BMP (an emoji becomes \U0001F389); the pure
        # emitter writes them as they are, but it slips (a raw U+0085, a fold after an escape, text
        # no parser reads): its text, trailing spaces cut, is taken when it reads back
        readable = _TRAILING.sub("", _dump(data, pure=True))
        if _reads_as(readable, data):
            text = readable
    return text, data


def _reads_as(text: str, data: dict[str, Any]) -> bool:
    try:
        return bool(_yaml()(typ="safe").load(text) == data)
    except Exception:   # the pure emitter can even write what no parser reads
        return False


def _dump(data: dict[str, Any], pure: bool = False) -> str:
    buf = StringIO()
    _task_yaml(pure).dump(data, buf)
    return buf.getvalue()


def task_mapping(text: str, source: str) -> dict[str, Any]:
    """The YAML mapping of a task file, or InvalidTask with one sentence naming `source`."""
    try:
        data = _yaml()(typ="safe").load(text)
    except Exception as exc:
        raise InvalidTask(f"{source} is not valid YAML: {str(exc).splitlines()[0]}") from None
    if not isinstance(data, dict):
        raise InvalidTask(f"{source} is not a task (expected a YAML mapping)")
    return data


def load_task_text(text: str, source: str) -> Task:
    data = task_mapping(text, source)
    try:
        return Task.model_validate(data)
    except ValidationError as exc:
        raise InvalidTask(f"{source}: {describe_validation(exc)}") from None


def describe_validation(exc: Any) -> str:
    err = exc.errors()[0]
    loc = ".".join(str(p) for p in err.get("loc", ()))
    msg = str(err.get("msg", "invalid")).removeprefix("Value error, ")
    return f"{loc}: {msg}" if loc else msg


_TASKS: dict[str, Task] = {}


def _remember(path: Path, task: Task) -> None:
    if len(_TASKS) > 4096:
        _TASKS.clear()
    _TASKS[str(path)] = task


def _written_by_zen(text: str, task: Task) -> bool:
    """Whether `text` is what zen dispatch publishes for `task`, by either of its writers (the
    fast lane's taskcheck.yaml_text, the model's dump_task), so it may stand as task.yaml."""
    quick = taskcheck.yaml_text(task.model_dump(mode="json"))
    return text == quick or text == _task_text(task)[0]


def _link_claimed(claimed: tuple[Path, str], dest: Path, task: Task) -> bool | None:
    """Make `dest` (task.yaml) a hard link of the claimed spool file. True if linked, False if
    `dest` exists already (a record half made before a crash), None when it cannot stand as
    task.yaml (not zen's text, or no link here): the caller writes a copy."""
    path, text = claimed
    if not _written_by_zen(text, task):
        return None
    try:
        _sync_data(path)   # durable before it is the record (zen's publish synced it already)
        os.link(path, dest)
    except FileExistsError:
        return False
    except OSError:
        return None
    fsync_dir(dest.parent)
    return True


def _sync_data(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    try:
        os.fdatasync(fd)
    finally:
        os.close(fd)


def _validated(job_id: str, raw: Any) -> JobSnapshot | None:
    """state.json's JSON as this job's JobSnapshot; None when it is not (another job's, from a
    copied folder; another version's; damaged): then it is replayed from the timeline."""
    if not isinstance(raw, dict):
        return None
    try:
        snap = JobSnapshot.model_validate({k: v for k, v in raw.items() if k != "_offset"})
    except Exception:  # a snapshot written by another version: rebuild it
        return None
    return snap if snap.job == job_id else None


class JobStore:
    def __init__(self, home: Home) -> None:
        self.home = home

    # -- paths ---------------------------------------------------------------
    def dir(self, job_id: str) -> Path:
        return self.home.job_dir(job_id)

    def paths(self, job_id: str) -> JobPaths:
        return self.home.job(job_id)

    def events_path(self, job_id: str) -> Path:
        return self.paths(job_id).events

    def ids(self) -> list[str]:
        try:
            return sorted(p.name for p in self.home.jobs.iterdir() if (p / TASK).is_file())
        except FileNotFoundError:
            return []

    def exists(self, job_id: str) -> bool:
        return (self.dir(job_id) / TASK).is_file()

    # -- writing ---------------------------------------------------------------
    def create(self, task: Task, claimed: tuple[Path, str] | None = None) -> bool:
        """Create the record for a claimed task. Idempotent: finishing a half-made record is fine.
        `claimed`: the claimed spool file and its text, as `task` was read from it. When zen wrote
        that text (as it would write task.yaml), task.yaml is a hard link of it, not a copy: the
        record then costs no second write and fsync while the worktree is checked out.

        Returns True when this call recorded `task.received` (the job is new).
        """
        d = self.dir(task.id)
        d.mkdir(parents=True, exist_ok=True)
        linked = None if claimed is None else _link_claimed(claimed, d / TASK, task)
        if linked:
            _remember(d / TASK, task)   # the very text `task` was read from
        elif linked is None:
            text, data = _task_text(task)
            if create_exclusive(d / TASK, text):
                # what task() would parse from the file just written (its data, validated again: a
                # date the spool's YAML gave the script is a string there), so the start reads no YAML
                _remember(d / TASK, Task.model_validate(data))
        crash_point("intake.task_written")
        with flocked(d / EVENTS_LOCK):
            seq, _ = ev_store.last_seq(d / EVENTS)
        if seq > 0:
            return False
        # both in one write and one fsync: a record is never left received but not queued
        ev_store.append_many(d, task.id, [
            (EventType.TASK_RECEIVED, "supervisor", {"task": task.model_dump(mode="json", exclude={"script"})}),
            (EventType.JOB_QUEUED, "supervisor", {"priority": task.priority})])
        return True

    def append(self, job_id: str, etype: str, actor: str = "supervisor", **fields: Any) -> dict[str, Any]:
        return ev_store.append(self.dir(job_id), job_id, etype, actor, **fields)

    def append_unsynced(self, job_id: str, etype: str, actor: str = "supervisor", **fields: Any) -> dict[str, Any]:
        """append() whose fsync is left to the job's next durable append (ev_store.append_unsynced)."""
        return ev_store.append_unsynced(self.dir(job_id), job_id, etype, actor, **fields)

    # -- reading ---------------------------------------------------------------
    def task(self, job_id: str) -> Task:
        """task.yaml is written once and never rewritten, so a parsed copy can be kept."""
        path = self.dir(job_id) / TASK
        hit = _TASKS.get(str(path))
        if hit is not None:
            return hit
        try:
            text = path.read_text()
        except FileNotFoundError:
            raise NotFound(f"job {job_id} has no record") from None
        task = load_task_text(text, str(path))
        _remember(path, task)
        return task

    def events(self, job_id: str) -> list[dict[str, Any]]:
        return list(ev_store.read_events(self.events_path(job_id)))

    def snapshot(self, job_id: str, *, write: bool = True) -> JobSnapshot:
        """state.json brought up to date with events.jsonl (and saved when it moved)."""
        d = self.dir(job_id)
        got = catch_up(d, job_id, lambda raw: _validated(job_id, raw), lambda: JobSnapshot(job=job_id))
        if got.replayed and write and (d / EVENTS).exists():
            return self.rebuild(job_id)     # under the job's lock, published
        if got.replayed:
            return got.snap                 # no timeline (yet): nothing to publish
        if not got.moved or not write:
            return got.snap
        try:
            with flocked(d / EVENTS_LOCK):
                current, _ = self._load_state(d, job_id)
                if current.seq < got.snap.seq:
                    self._save_state(d, got.snap, got.end)
        except OSError as exc:
            # state.json is a cache of the timeline: a disk that cannot take it (full,
            # failing, read-only) must not stop what reads the job; the next refresh catches up
            log.info("job %s: state.json not refreshed: %s", job_id, exc)
        return got.snap

    def rebuild(self, job_id: str) -> JobSnapshot:
        d = self.dir(job_id)
        with flocked(d / EVENTS_LOCK):
            events, end = ev_store.read_from(d / EVENTS, 0)
            snap = states.replay(job_id, events)
            self._save_state(d, snap, end)
        if not snap.state.final:
            index.update(self.home, {}, drop=(job_id,))
        return snap

    def _load_state(self, d: Path, job_id: str) -> tuple[JobSnapshot, int]:
        try:
            raw = json.loads((d / STATE).read_text())
        except (OSError, ValueError):
            return JobSnapshot(job=job_id), 0
        snap = _validated(job_id, raw)
        offset = raw.get("_offset", 0) if snap is not None else 0
        return (snap, int(offset)) if snap is not None else (JobSnapshot(job=job_id), 0)

    def _save_state(self, d: Path, snap: JobSnapshot, offset: int) -> None:
        data = snap.model_dump(mode="json")
        data["_offset"] = offset
        # a cache of the timeline: one that a power loss empties reads as none, and is replayed
        atomic_write(d / STATE, json.dumps(data, indent=2) + "\n", cache=True)
        if snap.state.final:  # finished jobs are read from the index (a final state never moves back)
            index.update(self.home, {snap.job: (offset, data)})

    def reindex(self) -> int:
        """Put every finished job missing from jobs/.index.json (or out of date there) into it,
        from its state.json (a home from before the index, a crash between the two writes); the
        number put. The supervisor runs it on start."""
        known = index.read(str(self.home.jobs))
        put: dict[str, tuple[int, dict[str, Any]]] = {}
        for job_id in self.ids():
            try:
                size = self.events_path(job_id).stat().st_size
            except OSError:
                continue
            if known.get(job_id, {}).get("offset") == size:
                continue
            snap = self.snapshot(job_id)
            if snap.state.final:
                _, offset = self._load_state(self.dir(job_id), job_id)
                put[job_id] = (offset, snap.model_dump(mode="json"))
        if put:
            index.update(self.home, put)
        return len(put)

    def snapshots(self, *, write: bool = True) -> list[JobSnapshot]:
        return [self.snapshot(i, write=write) for i in self.ids()]

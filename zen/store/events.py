"""events.jsonl: the append-only timeline of a job, the source of truth (DESIGN section 2).

Kept free of heavy imports: hook processes append through this module on every agent action.
Several processes append to one job (supervisor, hooks, CLI), so each append takes the job's
flock, reads the last seq, and writes one fsynced line; `seq` stays gap-free. A torn last line
(a crash mid-write) is skipped by readers and closed off by the next writer.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from zen.core.events import Actor, home_event, job_event
from zen.store.atomic import append_whole, flocked
from zen.store.follow import Follower
from zen.store.follow import timeline_record as _parse
from zen.store.layout import EVENTS, EVENTS_LOCK, Home

LOCK = EVENTS_LOCK
_TAIL = 65536

__all__ = ["EVENTS", "LOCK", "append", "append_control", "append_line_to", "append_many", "append_unless",
           "last_seq", "read_events", "read_events_any", "read_from", "scan_lines"]


def last_seq(path: Path) -> tuple[int, bool]:
    """(seq of the last complete event, whether the file ends mid-line)."""
    try:
        with path.open("rb") as f:
            f.seek(0, os.SEEK_END)
            size = f.tell()
            if size == 0:
                return 0, False
            start = max(0, size - _TAIL)
            f.seek(start)
            chunk = f.read()
    except FileNotFoundError:
        return 0, False
    torn = not chunk.endswith(b"\n")
    lines = chunk.split(b"\n")
    if torn:
        lines = lines[:-1]
    for line in reversed(lines):
        ev = _parse(line)
        if ev is not None:
            return int(ev["seq"]), torn
    if start > 0:  # a line longer than the tail window: read it all
        seq = 0
        for ev in read_events(path):
            seq = int(ev["seq"])
        return seq, torn
    return 0, torn


def append(job_dir: Path, job_id: str, etype: str, actor: str = Actor.SUPERVISOR, **fields: Any) -> dict[str, Any]:
    """Append one event and return it with its seq. Durable when this returns."""
    ev = append_unless(job_dir, job_id, etype, None, actor, **fields)
    assert ev is not None
    return ev


def append_unsynced(job_dir: Path, job_id: str, etype: str, actor: str = Actor.SUPERVISOR,
                    **fields: Any) -> dict[str, Any]:
    """append() without its fsync: the next durable append to the same timeline (its fsync covers
    the whole file) makes this one durable too; until then only a crash of the machine can take it."""
    ev = append_unless(job_dir, job_id, etype, None, actor, durable=False, **fields)
    assert ev is not None
    return ev


def append_unless(job_dir: Path, job_id: str, etype: str,
                  skip: Callable[[list[dict[str, Any]]], bool] | None, actor: str = Actor.SUPERVISOR,
                  *, durable: bool = True, known: tuple[list[dict[str, Any]], int] | None = None,
                  **fields: Any) -> dict[str, Any] | None:
    """Append one event unless `skip(events so far)` says it is already recorded, deciding and
    writing under the job's lock, so two processes can never both record the same thing.
    `known`: the timeline up to a byte offset, read already; only what follows is read here."""
    path = job_dir / EVENTS
    with flocked(job_dir / LOCK):
        if skip is not None and skip(_so_far(path, known)):
            return None
        seq, torn = last_seq(path)
        ev = job_event(seq + 1, job_id, etype, actor, fields)
        line = json.dumps(ev, separators=(",", ":"), default=str).encode() + b"\n"
        if torn:
            line = b"\n" + line
        append_whole(path, line, durable=durable)  # under the lock: a failed write is cut back, never torn
    return ev


def _so_far(path: Path, known: tuple[list[dict[str, Any]], int] | None) -> list[dict[str, Any]]:
    if known is None:
        return list(read_events(path))
    tail = Follower(path, known[1])
    new = tail.read()
    return new if tail.restarted else [*known[0], *new]


def append_many(job_dir: Path, job_id: str, items: list[tuple[str, str, dict[str, Any]]]) -> list[dict[str, Any]]:
    """Append (type, actor, fields) events in order under one lock, with one write and one fsync
    (a process recording many at once, the resident guardian, pays one fsync for all). Durable
    when this returns."""
    if not items:
        return []
    path = job_dir / EVENTS
    with flocked(job_dir / LOCK):
        seq, torn = last_seq(path)
        evs = [job_event(seq + 1 + i, job_id, etype, actor, fields) for i, (etype, actor, fields) in enumerate(items)]
        data = b"".join(json.dumps(ev, separators=(",", ":"), default=str).encode() + b"\n" for ev in evs)
        if torn:
            data = b"\n" + data
        append_whole(path, data)
    return evs


def read_events(path: Path, offset: int = 0) -> Iterator[dict[str, Any]]:
    """Every complete event from byte `offset`; a torn or garbled line is skipped."""
    try:
        f = path.open("rb")
    except FileNotFoundError:
        return
    with f:
        if offset:
            f.seek(offset)
        for line in f:
            if not line.endswith(b"\n"):
                return
            ev = _parse(line)
            if ev is not None:
                yield ev


def read_from(path: Path, offset: int) -> tuple[list[dict[str, Any]], int]:
    """Complete events after byte `offset`, and the offset just past the last complete line (a
    timeline that shrank below `offset` is read from its start: zen.store.follow)."""
    f = Follower(path, offset)
    return f.read(), f.offset


def scan_lines(path: Path) -> Iterator[tuple[int, dict[str, Any] | None, bool]]:
    """Every line of a timeline with its number (from 1): (number, the JSON object or None when
    the line is not one, whether the line is complete). Only the last line can be incomplete
    (a crash mid-write). For `zen doctor`, which must see what the readers skip."""
    try:
        f = path.open("rb")
    except FileNotFoundError:
        return
    with f:
        for number, line in enumerate(f, 1):
            complete = line.endswith(b"\n")
            try:
                rec = json.loads(line)
            except ValueError:
                rec = None
            yield number, rec if isinstance(rec, dict) else None, complete


def read_events_any(path: Path) -> Iterator[dict[str, Any]]:
    """Every complete JSON object line of an append-only file (no seq required)."""
    try:
        f = path.open("rb")
    except FileNotFoundError:
        return
    with f:
        for line in f:
            if not line.endswith(b"\n"):
                return
            try:
                rec = json.loads(line)
            except ValueError:
                continue
            if isinstance(rec, dict):
                yield rec


def append_line_to(path: Path, rec: dict[str, Any], lock: Path | None = None, *, durable: bool = True) -> None:
    """One JSON line appended to an append-only log with a single write, fsynced when `durable`
    (under `lock` when given; O_APPEND alone keeps concurrent whole lines apart)."""
    line = json.dumps(rec, separators=(",", ":"), ensure_ascii=False, default=str).encode() + b"\n"
    path.parent.mkdir(parents=True, exist_ok=True)
    with flocked(lock) if lock is not None else contextlib.nullcontext():
        append_whole(path, line, durable=durable, undo=lock is not None)


def append_control(home: Home, etype: str, **fields: Any) -> dict[str, Any]:
    """A home-wide event (supervisor start/stop, kill switch) appended to logs/control.jsonl."""
    rec = home_event(etype, fields)
    append_line_to(home.control_log, rec, lock=home.control_log_lock)
    return rec

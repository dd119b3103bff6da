"""zen queue: the order queued work will start in, and why each waits."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import typer

from zen.cli import common, render
from zen.cli.common import JSON
from zen.orchestration.read.query import pending_tasks, quarantine_json, quarantine_lines
from zen.orchestration.read.schedule import breaker_status, plan
from zen.store import spool


@dataclass(frozen=True)
class Next:
    job: str
    action: str          # intake | start | wait | fail
    why: str
    name: str | None = None

    def to_json(self) -> dict[str, Any]:
        out = {"job": self.job, "name": self.name} if self.name is not None else {"job": self.job}
        return {**out, "action": self.action, "why": self.why}


@dataclass(frozen=True)
class Queue:
    queue: list[Next]
    breaker: Mapping[str, Any]
    quarantined: list[tuple[str, str]]

    def to_json(self) -> dict[str, Any]:
        return {"queue": [n.to_json() for n in self.queue], "breaker": dict(self.breaker),
                "quarantined": quarantine_json(self.quarantined)}


def _text(q: Queue) -> Iterator[render.Out]:
    b = q.breaker
    if b["open"]:
        yield render.Note(f"circuit breaker OPEN: automatic work is held ({b['automatic_in_window']} automatic "
                          f"starts in the window, limit {b['limit']})")
    if not q.queue:
        yield "the queue is empty"
    else:
        yield render.Table(["#", "job", "next", "why"],
                           [[str(i + 1), r.job, r.action, r.why] for i, r in enumerate(q.queue)])
    for line in quarantine_lines(q.quarantined):
        yield render.clean(line)


def queue(json_out: bool = JSON) -> int:
    """Queued work in the order it will start, each with why it waits (slot, dependency,
    backoff, circuit breaker); tasks not yet taken in by a supervisor are listed first."""
    home = common.home()
    rows = [Next(t.id, "intake", "in the spool; a running supervisor takes it in", t.name) for t in pending_tasks(home)]
    rows += [Next(d.job, d.action, d.why) for d in plan(home)]
    render.emit(Queue(rows, breaker_status(home), spool.quarantined(home)), json_out, _text)
    return 0


def register(app: typer.Typer) -> None:
    app.command("queue")(queue)

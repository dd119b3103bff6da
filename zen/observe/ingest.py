"""OTLP log payloads into the timelines of a home's jobs.

Each record names its job in the `zen.job` resource attribute (zen sets OTEL_RESOURCE_ATTRIBUTES
at spawn); a payload's records for one job are appended together (one lock, one write, one
fsync). An exporter retries a batch it thinks failed, so every record's key (zen.observe.otlp
`record_key`) is remembered per job, seeded from the job's timeline the first time the job is
seen: a retried record is never counted twice, even across a restart of the receiver.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from zen.core.events import Actor, EventType
from zen.observe import otlp
from zen.store.events import append_many, read_events
from zen.store.layout import Home, valid_job_id

OTEL_TYPES = frozenset({EventType.API_REQUEST, EventType.API_ERROR, EventType.TOOL_RESULT})


@dataclass
class Ingested:
    accepted: int = 0           # events appended to timelines
    duplicates: int = 0         # records already recorded (a retried batch)
    ignored: int = 0            # records zen does not count, or of no job it knows

    def add(self, other: Ingested) -> None:
        self.accepted += other.accepted
        self.duplicates += other.duplicates
        self.ignored += other.ignored


class Ingest:
    def __init__(self, home: Home, prices: Callable[[], Mapping[str, Any]] | None = None) -> None:
        self.home = home
        self.prices = prices or (lambda: {})
        self.seen: dict[str, set[str]] = {}
        self.total = Ingested()

    def _seen(self, job: str) -> set[str] | None:
        """The record keys already in `job`'s timeline; None when there is no such job."""
        got = self.seen.get(job)
        if got is not None:
            return got
        if not valid_job_id(job):
            return None
        paths = self.home.job(job)
        if not paths.events.is_file():
            return None
        got = {str(ev["otel"]) for ev in read_events(paths.events)
               if ev.get("type") in OTEL_TYPES and ev.get("otel")}
        self.seen[job] = got
        return got

    def payload(self, data: Any, job: str | None = None) -> Ingested:
        """Record a decoded OTLP logs payload; what was appended, skipped and ignored.

        `job`: the job the sender is (the receiver's token says): its records may leave out
        `zen.job`, and a record naming any other job is ignored."""
        out = Ingested()
        prices = self.prices()
        per_job: dict[str, list[tuple[str, dict[str, Any]]]] = {}
        fresh: set[tuple[str, str]] = set()
        for rec in otlp.records(data):
            owner = rec.job or job or ""
            if job is not None and owner != job:
                out.ignored += 1
                continue
            seen = self._seen(owner) if owner else None
            found = otlp.to_event(rec, prices) if seen is not None else None
            if found is None or seen is None:
                out.ignored += 1
                continue
            key = str(found[1]["otel"])
            batch = per_job.setdefault(owner, [])
            if key in seen or (owner, key) in fresh:
                out.duplicates += 1
                continue
            fresh.add((owner, key))
            batch.append(found)
        for to, items in per_job.items():
            if items:
                append_many(self.home.job(to).dir, to, [(t, Actor.TELEMETRY, f) for t, f in items])
                self.seen[to].update(str(f["otel"]) for _, f in items)
                out.accepted += len(items)
        self.total.add(out)
        return out

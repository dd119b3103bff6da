"""Autonomy earned from evidence (DESIGN section 6): pure rules, no I/O.

Evidence lines (evidence/<domain>.jsonl) have a `kind`:
  accepted   a human accepted a job's result (`level` = the domain's level when the job ran)
  corrected  a human rejected it with a correction
  promoted / demoted / override   level changes, so "since the last demotion" needs no other file
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from zen.core.model import Level

DEFAULT_THRESHOLDS: dict[str, dict[str, int]] = {
    "suggest": {"accepted": 3, "corrections": 0},
    "act-and-report": {"accepted": 5, "corrections": 0},
    "autonomous": {"accepted": 10, "corrections": 0, "incidents": 0},
}


@dataclass(frozen=True)
class Progress:
    domain: str
    level: Level
    next_level: Level | None
    accepted: int            # accepted jobs at the level below the next one, since the last demotion
    corrections: int         # since the last demotion
    incidents: int           # incidents tagged with the domain since the last demotion
    needed: Mapping[str, int]

    @property
    def missing(self) -> str | None:
        """None when promotion is earned; else one sentence saying what is missing."""
        if self.next_level is None:
            return f"{self.domain} is already {self.level.label}, the highest level"
        parts = []
        need_acc = self.needed.get("accepted", 0)
        if self.accepted < need_acc:
            parts.append(f"{need_acc - self.accepted} more accepted {self.level.label} job(s) "
                         f"({self.accepted} of {need_acc})")
        if self.corrections > self.needed.get("corrections", 0):
            parts.append(f"no corrections since the last demotion ({self.corrections} recorded)")
        if "incidents" in self.needed and self.incidents > self.needed["incidents"]:
            parts.append(f"no incidents since the last demotion ({self.incidents} recorded)")
        if not parts:
            return None
        return f"promoting {self.domain} to {self.next_level.label} needs " + " and ".join(parts)

    def as_dict(self) -> dict[str, Any]:
        return {
            "domain": self.domain,
            "level": self.level.label,
            "next_level": self.next_level.label if self.next_level is not None else None,
            "accepted": self.accepted,
            "corrections": self.corrections,
            "incidents": self.incidents,
            "needed": dict(self.needed),
            "eligible": self.missing is None,
            "missing": self.missing,
        }


def since_last_demotion(records: Iterable[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    out: list[Mapping[str, Any]] = []
    for rec in records:
        if rec.get("kind") == "demoted":
            out = []
        else:
            out.append(rec)
    return out


def last_demotion_ts(records: Iterable[Mapping[str, Any]]) -> str | None:
    ts = None
    for rec in records:
        if rec.get("kind") == "demoted":
            ts = str(rec.get("ts"))
    return ts


def progress(domain: str, level: Level, records: list[Mapping[str, Any]],
             thresholds: Mapping[str, Mapping[str, int]], incidents_since: int = 0) -> Progress:
    recent = since_last_demotion(records)
    next_level = Level(level + 1) if level < Level.autonomous else None
    needed: Mapping[str, int] = {}
    if next_level is not None:
        needed = thresholds.get(next_level.label) or DEFAULT_THRESHOLDS.get(next_level.label, {})
    # evidence counts at the current level: suggestions earn act-and-report, and so on
    accepted = sum(1 for r in recent if r.get("kind") == "accepted" and r.get("level") == level.label)
    corrections = sum(1 for r in recent if r.get("kind") == "corrected")
    return Progress(domain, level, next_level, accepted, corrections, incidents_since, needed)


def demoted(level: Level) -> Level:
    return Level(max(Level.observe, level - 1))

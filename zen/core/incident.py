"""Incident records (DESIGN section 7): what happened, why, and the controls that now prevent it.

Controls are live: `guardian_rules` use the rule language of policy/guardian.yaml and are loaded
by the guardian; `preflight_checks` run before every spawn; `handoff_warnings` reach the agents
whose lane, domain or paths match.
"""

from __future__ import annotations

import fnmatch
import re
from datetime import date
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

INCIDENT_VERSION = 1
_ID = re.compile(r"^[a-z0-9][a-z0-9-]{2,80}$")


class PreflightCheck(BaseModel):
    """One check run by `zen preflight` for every lane the incident concerns.

    kinds: env_absent (variable must not be set, or must not match `pattern`), env_present,
    file_absent / file_present (path relative to the lane's checkout), command (run in the lane's
    checkout with `sh -c`; exit 0 passes).
    """

    model_config = ConfigDict(extra="forbid")

    id: str
    kind: Literal["env_absent", "env_present", "file_absent", "file_present", "command"]
    description: str
    severity: Literal["fail", "warn"] = "fail"
    var: str | None = None
    pattern: str | None = None
    path: str | None = None
    run: str | None = None
    timeout_s: float = 10.0

    @field_validator("pattern")
    @classmethod
    def _regex(cls, v: str | None) -> str | None:
        if v is not None:
            try:
                re.compile(v)
            except re.error as exc:
                raise ValueError(f"pattern is not a valid regular expression: {exc}") from None
        return v

    def model_post_init(self, _ctx: Any) -> None:
        need = {"env_absent": "var", "env_present": "var", "file_absent": "path", "file_present": "path",
                "command": "run"}[self.kind]
        if getattr(self, need) in (None, ""):
            raise ValueError(f"preflight check {self.id!r} of kind {self.kind} needs `{need}`")


class Controls(BaseModel):
    model_config = ConfigDict(extra="forbid")

    guardian_rules: list[dict[str, Any]] = Field(default_factory=list)
    preflight_checks: list[PreflightCheck] = Field(default_factory=list)
    handoff_warnings: list[str] = Field(default_factory=list)


class Incident(BaseModel):
    model_config = ConfigDict(extra="forbid")

    zen: int = INCIDENT_VERSION
    id: str
    title: str
    date: date
    domain: str
    lanes: list[str] = Field(default_factory=list)     # empty = every lane
    paths: list[str] = Field(default_factory=list)     # globs; empty = any path
    tags: list[str] = Field(default_factory=list)
    what_happened: str
    root_cause: str
    impact: str
    prevention: str                                    # what would have prevented it
    mitigations: list[str] = Field(default_factory=list)
    controls: Controls = Field(default_factory=Controls)
    example: bool = False                              # shipped with zen: teaches, is not history
    recorded_at: str | None = None

    @field_validator("zen")
    @classmethod
    def _version(cls, v: int) -> int:
        if v != INCIDENT_VERSION:
            raise ValueError(f"incident format version {v} is not supported (this zen reads {INCIDENT_VERSION})")
        return v

    @field_validator("id")
    @classmethod
    def _id(cls, v: str) -> str:
        if not _ID.match(v):
            raise ValueError("id must be lower-case letters, digits and dashes (e.g. 2026-03-14-force-push)")
        return v

    def matches(self, lane: str | None, domain: str | None, paths: list[str] | None = None) -> bool:
        """Does this incident concern a job on `lane` in `domain` touching `paths`?"""
        if self.lanes and lane in self.lanes:
            return True
        if domain is not None and self.domain == domain and not self.lanes:
            return True
        if self.paths and paths:
            return any(fnmatch.fnmatch(p, g) or fnmatch.fnmatch(p, g.rstrip("/") + "/*")
                       for p in paths for g in self.paths)
        return False

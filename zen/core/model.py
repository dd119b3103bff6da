"""The shapes that cross the disk: tasks, job snapshots, and the vocabulary they use.

Format versions: task files carry `zen: 1`, event lines `"v": 1` (zen.core.events keeps that
version and its changelog), state.json `"v": 1`, control/heartbeat and control/breaker.json
`"v": 1`. Bump the constant and note the change here when a format changes incompatibly.
"""

from __future__ import annotations

import shlex
from enum import IntEnum
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from zen.core.agents import AgentKind
from zen.core.breaker import CONTROL_VERSION
from zen.core.durations import parse_duration
from zen.core.events import FORMAT_VERSION
from zen.core.ids import NAME_RE, valid_id
from zen.core.jobstate import JobStatus

__all__ = ["CONTROL_VERSION", "AgentKind", "JobSnapshot", "JobStatus", "Level", "Task"]

TASK_VERSION = 1
EVENT_VERSION = FORMAT_VERSION
STATE_VERSION = 1


class Level(IntEnum):
    """Autonomy levels, lowest first (DESIGN section 6)."""

    observe = 0
    suggest = 1
    act_and_report = 2
    autonomous = 3

    @property
    def label(self) -> str:
        return self.name.replace("_", "-")

    @classmethod
    def parse(cls, text: str) -> Level:
        key = text.strip().lower().replace("-", "_")
        try:
            return cls[key]
        except KeyError:
            names = ", ".join(level.label for level in cls)
            raise ValueError(f"unknown autonomy level {text!r} (one of {names})") from None


GOALS = ("until-done",)


class Budget(BaseModel):
    """A goal's hard caps (DESIGN 13): whichever is reached first stops the goal."""

    model_config = ConfigDict(extra="forbid")

    tokens: int | None = Field(default=None, ge=1)
    cost_usd: float | None = Field(default=None, gt=0)
    wall: str | float | None = None      # a duration: 90s, 30m, 2h

    @field_validator("wall")
    @classmethod
    def _wall(cls, v: str | float | None) -> str | float | None:
        if v is not None and parse_duration(v) <= 0:
            raise ValueError("budget.wall must be positive")
        return v

    @property
    def wall_s(self) -> float | None:
        return None if self.wall is None else parse_duration(self.wall)


class Task(BaseModel):
    """A task file as written to the spool and kept as jobs/<id>/task.yaml."""

    model_config = ConfigDict(extra="forbid")

    zen: int = TASK_VERSION
    id: str
    name: str
    prompt: str
    lane: str | None = None
    repo: str | None = None
    base: str | None = None
    agent: AgentKind = AgentKind.sim
    command: list[str] | None = None
    domain: str | None = None
    priority: int = Field(default=3, ge=1, le=5)
    depends_on: list[str] = Field(default_factory=list)
    timeout: str | float = "30m"
    max_retries: int = Field(default=0, ge=0, le=20)
    parent: str | None = None
    paths: list[str] = Field(default_factory=list)  # leased for the job when it starts (DESIGN 10)
    created_at: str
    created_by: str = "human"
    script: list[dict[str, Any]] | None = None  # for agent: sim, the steps it follows
    # agent settings where the agent has them (claude/codex/aider/gemini --model, ...); both also
    # reach every agent as ZEN_MODEL / ZEN_MAX_TOKENS. Absent from task.yaml when not set.
    model: str | None = Field(default=None, min_length=1, max_length=200)
    max_tokens: int | None = Field(default=None, ge=1)
    executor: str | dict[str, Any] | None = None  # local | ray | {kind: ray, ...}: else the lane's (DESIGN 14)
    # agent teams (DESIGN 13); absent from task.yaml when not set
    goal: str | None = None              # "until-done": continued after each turn until it reports done
    request_id: str | None = Field(default=None, min_length=1, max_length=200)  # agent_spawn replays
    group: str | None = Field(default=None, min_length=1, max_length=200)  # attempts of one prompt (issue 37)
    budget: Budget | None = None         # hard caps of a goal: tokens, cost, wall time

    @field_validator("goal")
    @classmethod
    def _goal(cls, v: str | None) -> str | None:
        if v is not None and v not in GOALS:
            raise ValueError(f"goal {v!r} is not known (one of: {', '.join(GOALS)})")
        return v

    @field_validator("zen")
    @classmethod
    def _version(cls, v: int) -> int:
        if v != TASK_VERSION:
            raise ValueError(f"task format version {v} is not supported (this zen reads {TASK_VERSION})")
        return v

    @field_validator("id")
    @classmethod
    def _id(cls, v: str) -> str:
        if not valid_id(v):
            raise ValueError(f"id {v[:80]!r} is not a job id (like 20261129T101500Z-fix-login-3fa9)")
        return v

    @field_validator("prompt")
    @classmethod
    def _prompt(cls, v: str) -> str:
        if not v.strip():
            raise ValueError("the prompt is empty")
        return v

    @field_validator("name")
    @classmethod
    def _name(cls, v: str) -> str:
        if not NAME_RE.match(v):
            raise ValueError(
                f"name {v!r} must be lower-case letters, digits and dashes, starting with a letter or digit"
            )
        return v

    @field_validator("timeout")
    @classmethod
    def _timeout(cls, v: str | float) -> str | float:
        seconds = parse_duration(v)
        if seconds <= 0:
            raise ValueError("timeout must be positive")
        return v

    @field_validator("paths")
    @classmethod
    def _paths(cls, v: list[str]) -> list[str]:
        for p in v:
            parts = p.strip().split("/")
            if not p.strip() or p.startswith("/") or ".." in parts:
                raise ValueError(f"paths: {p!r} must be a path or glob inside the repository "
                                 "(relative, no '..')")
        return v

    @field_validator("command", mode="before")
    @classmethod
    def _command(cls, v: Any) -> Any:
        if isinstance(v, str):
            try:
                return shlex.split(v)
            except ValueError as exc:
                raise ValueError(f"--cmd cannot be split like a shell would: {exc}") from None
        return v

    @model_validator(mode="after")
    def _coherent(self) -> Task:
        if self.agent is AgentKind.cmd and not self.command:
            raise ValueError("agent 'cmd' needs a command (--cmd \"ARGV\")")
        if self.lane and self.repo:
            raise ValueError("give either a lane or a repo, not both")
        if not self.lane and not self.repo:
            raise ValueError("the task names no lane or repo (use --lane NAME or --repo PATH)")
        return self

    @property
    def timeout_s(self) -> float:
        return parse_duration(self.timeout)


class JobSnapshot(BaseModel):
    """state.json: everything derivable from events.jsonl, replaced atomically after each event."""

    model_config = ConfigDict(extra="allow")

    v: int = STATE_VERSION
    job: str
    name: str = ""
    state: JobStatus = JobStatus.queued
    reason: str | None = None
    revision: int = 0
    seq: int = 0
    agent: str | None = None
    lane: str | None = None
    domain: str | None = None
    priority: int = 3
    tmux_session: str | None = None
    tmux_target: str | None = None
    worktree: str | None = None
    branch: str | None = None
    review_branch: str | None = None
    base_commit: str | None = None
    harvest_commit: str | None = None
    exit_code: int | None = None
    exit_signal: int | None = None
    turns: int = 0
    attempts: int = 0
    retry_at: str | None = None
    usage: dict[str, float] = Field(default_factory=dict)
    created_at: str | None = None
    started_at: str | None = None
    updated_at: str | None = None
    ended_at: str | None = None
    last_output_at: str | None = None
    cancelled: bool = False
    timed_out: bool = False
    paused_from: str | None = None      # the state (and its reason) a paused job returns to on resume
    paused_reason: str | None = None
    paused_at: str | None = None
    paused_s: float = 0.0               # total time paused (the timeout clock stops meanwhile)
    landed_commit: str | None = None    # the base branch's merge commit after zen land
    guard: dict[str, int] = Field(default_factory=dict)
    anomalies: int = 0                  # anomaly.flagged findings (issue 38): what is far from the baseline
    anomaly: str | None = None          # the latest one's message
    checks: str | None = None           # the lane's checks on the harvest: running | passed | failed (issue 37)
    checks_left: int = 0                # of the run under way, the checks not done yet
    executor: str = "local"             # where the agent's turns run: local | ray (DESIGN 14)
    remote_job: str | None = None       # the current turn's Ray submission id
    remote_address: str | None = None   # the cluster's job API
    remote_host: str | None = None      # the node the current turn runs on
    parent: str | None = None           # the job that spawned this one (agent teams, DESIGN 13)
    created_by: str | None = None       # human | job:<id>
    group: str | None = None            # attempts of one prompt (zen dispatch --attempts, issue 37)

"""Request and response bodies of the HTTP API: what the OpenAPI schema at /api/v1/openapi.json
describes and every endpoint validates. Field names follow the files they come from (task.yaml,
state.json, events.jsonl), so a script can move between `cat` and the API without a glossary."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

AgentName = Literal["claude", "codex", "aider", "gemini", "sim", "cmd"]


class Problem(BaseModel):
    """Every error: one sentence."""

    error: str


class Ok(BaseModel):
    ok: bool = True


# -- tasks ---------------------------------------------------------------------------------------

class TaskConfig(BaseModel):
    """Settings handed to the agent where it has them (e.g. claude --model)."""

    model_config = ConfigDict(extra="forbid")

    model: str | None = Field(default=None, min_length=1, max_length=200)
    max_tokens: int | None = Field(default=None, ge=1, le=10_000_000)


class TaskCreate(BaseModel):
    """A new task. `description` is the prompt when `prompt` is absent; the rest are zen's own
    task fields (DESIGN section 2), validated exactly as `zen dispatch` validates them."""

    model_config = ConfigDict(extra="forbid")

    name: str | None = Field(default=None, max_length=100)
    description: str | None = Field(default=None, max_length=200_000)
    prompt: str | None = Field(default=None, max_length=200_000)
    priority: int | None = Field(default=None, ge=1, le=5)
    depends_on: list[str] = Field(default_factory=list, max_length=100)
    config: TaskConfig | None = None
    lane: str | None = Field(default=None, max_length=200)
    repo: str | None = Field(default=None, max_length=4096)
    base: str | None = Field(default=None, max_length=400)
    agent: AgentName | None = None
    command: list[str] | None = Field(default=None, max_length=200)
    domain: str | None = Field(default=None, max_length=100)
    timeout: str | None = Field(default=None, max_length=40)
    max_retries: int | None = Field(default=None, ge=0, le=20)
    script: list[dict[str, Any]] | None = Field(default=None, max_length=1000)


class TaskOut(BaseModel):
    """A task as written to the spool (task.yaml), with the state of its job."""

    model_config = ConfigDict(extra="allow")

    id: str
    name: str
    prompt: str
    lane: str | None = None
    repo: str | None = None
    agent: str
    priority: int
    depends_on: list[str] = Field(default_factory=list)
    timeout: str | float
    created_at: str
    created_by: str
    state: str = "pending"
    model: str | None = None
    max_tokens: int | None = None


class TaskList(BaseModel):
    tasks: list[TaskOut]


class TaskDetail(BaseModel):
    task: TaskOut
    session: Session | None = None
    review: str | None = None
    log_tail: str = ""


# -- sessions ------------------------------------------------------------------------------------

class Session(BaseModel):
    """A job's state.json."""

    model_config = ConfigDict(extra="allow")

    job: str
    name: str = ""
    state: str
    reason: str | None = None
    revision: int = 0
    seq: int = 0
    agent: str | None = None
    lane: str | None = None
    worktree: str | None = None
    branch: str | None = None
    review_branch: str | None = None
    exit_code: int | None = None
    turns: int = 0
    usage: dict[str, float] = Field(default_factory=dict)
    created_at: str | None = None
    started_at: str | None = None
    updated_at: str | None = None
    ended_at: str | None = None


class SessionList(BaseModel):
    sessions: list[Session]
    supervisor: dict[str, Any]
    kill_switch: bool


class SessionDetail(BaseModel):
    session: Session
    task: TaskOut
    events: list[dict[str, Any]]


class Metrics(BaseModel):
    """Figures of one job, or of the fleet (job = null), from its timeline."""

    model_config = ConfigDict(extra="allow")

    job: str | None = None
    input_tokens: float = 0
    output_tokens: float = 0
    cache_read_tokens: float = 0
    cache_write_tokens: float = 0
    cost_usd: float = 0
    api_calls: int = 0
    api_errors: int = 0
    tool_calls: int = 0
    guard_allowed: int = 0
    guard_denied: int = 0
    file_reads: int = 0
    file_writes: int = 0
    file_deletes: int = 0
    turns: int = 0
    inputs: int = 0
    wall_s: float = 0
    turn_latency_p50_s: float | None = None
    turn_latency_p95_s: float | None = None


class FleetMetrics(BaseModel):
    total: Metrics
    jobs: list[Metrics]
    active_sessions: int
    tasks_in_progress: int


class InputBody(BaseModel):
    model_config = ConfigDict(extra="forbid")

    text: str = Field(min_length=1, max_length=100_000)
    force: bool = False


class KeysBody(BaseModel):
    """Typing in a terminal tile: literal text and named keys (Enter, BSpace, Up, C-c, ...), in order."""

    model_config = ConfigDict(extra="forbid")

    items: list[KeyItem] = Field(min_length=1, max_length=500)


class KeyItem(BaseModel):
    model_config = ConfigDict(extra="forbid")

    text: str | None = Field(default=None, min_length=1, max_length=10_000)
    key: str | None = Field(default=None, min_length=1, max_length=20, pattern=r"^[A-Za-z0-9\-]+$")


class ActionResult(BaseModel):
    """What a control did: the job, its state after, and what the control reports."""

    model_config = ConfigDict(extra="allow")

    job: str
    state: str | None = None
    seq: int | None = None
    revision: int | None = None
    exit_code: int | None = None
    signal: int | None = None
    review_branch: str | None = None
    branch: str | None = None
    commit: str | None = None
    files: int | None = None
    path: str | None = None
    sha: str | None = None
    paused_s: float | None = None


class Screen(BaseModel):
    job: str
    text: str
    cursor_x: int
    cursor_y: int
    width: int
    height: int
    live: bool


class FileEntry(BaseModel):
    path: str
    status: str          # "" unchanged, M modified, A added, D deleted, ? untracked


class FileList(BaseModel):
    job: str
    worktree: str
    base_commit: str | None
    files: list[FileEntry]


class FileContent(BaseModel):
    job: str
    path: str
    content: str
    sha: str
    binary: bool = False


class FileWrite(BaseModel):
    model_config = ConfigDict(extra="forbid")

    path: str = Field(min_length=1, max_length=4096)
    content: str = Field(max_length=5_000_000)
    expected_sha: str | None = Field(default=None, max_length=64)


class Diff(BaseModel):
    job: str
    base_commit: str | None
    diff: str
    stat: str


class LandResult(BaseModel):
    job: str
    lane: str
    into: str
    branch: str
    commit: str
    base_was: str
    seq: int


# -- guardrails, approvals, kill switch -------------------------------------------------------------

class Guardrails(BaseModel):
    model_config = ConfigDict(extra="allow")

    path: str
    yaml: str
    sha: str
    valid: bool
    error: str | None = None
    require_approval: dict[str, bool]
    rules: list[dict[str, Any]]
    kill_switch: bool
    autonomy: list[dict[str, Any]]
    usage: dict[str, Any]
    recent_denied: list[dict[str, Any]]
    approvals: list[dict[str, Any]]


class GuardrailsUpdate(BaseModel):
    """Either the whole file (`yaml`), or `changes` merged into it (comments kept)."""

    model_config = ConfigDict(extra="forbid")

    yaml: str | None = Field(default=None, max_length=1_000_000)
    changes: dict[str, Any] | None = None
    expected_sha: str | None = Field(default=None, max_length=64)


class Approval(BaseModel):
    model_config = ConfigDict(extra="allow")

    id: str
    state: str
    job: str | None = None
    tool: str | None = None
    command: str | None = None
    file_path: str | None = None
    rule: str | None = None
    reason: str | None = None
    created_at: str | None = None


class ApprovalList(BaseModel):
    approvals: list[Approval]


class KillSwitch(BaseModel):
    model_config = ConfigDict(extra="allow")

    engaged: bool
    reason: str | None = None
    engaged_at: str | None = None
    by: str | None = None


class KillSwitchBody(BaseModel):
    model_config = ConfigDict(extra="forbid")

    reason: str | None = Field(default=None, max_length=2000)
    stop_agents: bool = False


# -- lanes and status ------------------------------------------------------------------------------

class Lane(BaseModel):
    name: str
    path: str
    base: str | None = None
    domain: str | None = None
    live: int = 0
    jobs: int = 0


class LaneList(BaseModel):
    lanes: list[Lane]


class Status(BaseModel):
    model_config = ConfigDict(extra="allow")

    home: str
    supervisor: dict[str, Any]
    kill_switch: bool
    counts: dict[str, int]
    version: str


TaskDetail.model_rebuild()
KeysBody.model_rebuild()


# -- the coordinator (DESIGN section 10) ----------------------------------------------------------

class LockBody(BaseModel):
    model_config = ConfigDict(extra="forbid")

    job: str = Field(min_length=1, max_length=200)
    path: str = Field(min_length=1, max_length=4096)
    shared: bool = False
    ttl: str | None = Field(default=None, max_length=40, description="e.g. 10m; default: as long as the job")
    reason: str = Field(default="", max_length=500)


class LeaseOut(BaseModel):
    id: str
    lane: str
    job: str
    path: str
    mode: str
    glob: bool
    reason: str
    by: str
    created: str
    expires: str
    revision: int
    fixed: bool
    live: bool
    job_state: str | None = None


class LeaseList(BaseModel):
    locks: list[LeaseOut]


class ChangeOut(BaseModel):
    model_config = ConfigDict(extra="allow")

    id: str
    ts: str
    job: str
    type: str


class ChangeList(BaseModel):
    changes: list[ChangeOut]

"""Running turns somewhere else (DESIGN section 14): the executor a lane or task names, the spec of
one remote turn, and the framing of what a worker writes to its Ray job log. Pure: no I/O.

An executor is `local` (tmux on this machine, the default) or a Ray cluster:

    executor:
      kind: ray
      address: http://10.0.0.5:8265     # the cluster's job API (the dashboard)
      resources: {zen_slot: 1}          # what each turn reserves on a node (custom resources cap
                                        # how many turns a node runs at once)
      num_cpus: 0                       # CPUs each turn reserves (default: Ray's, 0)
      env: {ANTHROPIC_BASE_URL: ...}    # variables set for the agent on the worker
      pass_env: [ANTHROPIC_API_KEY]     # variables passed on from the supervisor's environment
      zen_command: zen                  # how the nodes run zen (e.g. /opt/zen/bin/zen)

Each turn is one Ray job with submission id `<job>-<attempt>` (`attempt` counts the job's
submissions: a retry or the next turn is a new one), so a supervisor that crashed between
asking and recording never gets a second run of the same turn: Ray refuses a known id.

A worker's log is the agent's output and zen's events in one ordered stream. Every line the
worker writes is framed: RS (0x1e) then a JSON object, `{"o": TEXT}` for output or
`{"n": N, "e": EVENT}` for the N-th event of the turn. The agent's bytes only ever travel inside
"o", so nothing an agent prints can pose as an event; lines without the frame (Ray's own notes,
a worker that crashed before it could frame) are output as they are. The supervisor takes from
a worker only the event types in WORKER_EVENTS.
"""

from __future__ import annotations

import base64
import json
import zlib
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from zen.core.events import EventType as E
from zen.errors import ExecutorError

SPEC_VERSION = 1
SPEC_ENV = "ZEN_TURN_SPEC"            # the Ray job's environment variable holding the turn's spec
FRAME = "\x1e"
LOCAL = "local"
RAY = "ray"
KINDS = (LOCAL, RAY)
REF_PREFIX = "refs/zen/"

# what a worker may add to the supervisor's timeline: the turn's own story. Never a harvest,
# an approval granted, a cancel or anything else only a human or the supervisor records.
WORKER_EVENTS = frozenset({
    E.TURN_WORKING, E.TURN_WAITING, E.SESSION_ENDED, E.USAGE, E.API_REQUEST, E.API_ERROR,
    E.TOOL_RESULT, E.GUARD_ALLOWED, E.GUARD_DENIED, E.GATE_CALLED,
    E.FILES_EDITED, E.SETUP_DONE, E.SETUP_FAILED, E.REMOTE_STARTED, E.REMOTE_PUSHED, E.REMOTE_FINISHED,
})
# the envelope a worker's event arrives with; the supervisor writes its own
_ENVELOPE = ("v", "seq", "ts", "job", "type", "actor")


class Executor(BaseModel):
    """Where a lane's (or a task's) turns run."""

    model_config = ConfigDict(extra="forbid")

    kind: str = LOCAL
    address: str | None = None
    resources: dict[str, float] = Field(default_factory=dict)
    num_cpus: float | None = None
    env: dict[str, str] = Field(default_factory=dict)
    pass_env: list[str] = Field(default_factory=list)
    zen_command: str = "zen"            # how the nodes run zen (the entrypoint is `<this> remote-turn`)

    @field_validator("kind")
    @classmethod
    def _kind(cls, v: str) -> str:
        if v not in KINDS:
            raise ValueError(f"executor kind {v!r} is not one of {', '.join(KINDS)}")
        return v

    @property
    def remote(self) -> bool:
        return self.kind != LOCAL

    def describe(self) -> str:
        return f"ray {self.address}" if self.kind == RAY else "local"


def parse_executor(value: Any, where: str = "executor") -> Executor:
    """`local`, `ray`, or a mapping with `kind:` (see the module docstring) -> Executor."""
    if value is None or value == "":
        return Executor()
    if isinstance(value, str):
        value = {"kind": value}
    if not isinstance(value, dict):
        raise ExecutorError(f"{where} must be local, ray, or a mapping with kind: and address:")
    try:
        ex = Executor.model_validate({str(k): v for k, v in value.items()})
    except ValidationError as exc:
        first = exc.errors()[0]
        loc = ".".join(str(p) for p in first.get("loc", ()))
        raise ExecutorError(f"{where}{'.' + loc if loc else ''}: {first.get('msg')}") from None
    if ex.kind == RAY and not ex.address:
        raise ExecutorError(f"{where}: a ray executor needs address: (the job API, e.g. http://127.0.0.1:8265)")
    return ex


def choose(lane_value: Any, task_value: Any) -> Executor:
    """The task's executor when it names one, else its lane's, else local."""
    if task_value not in (None, ""):
        return parse_executor(task_value, "the task's executor")
    return parse_executor(lane_value, "the lane's executor")


def submission_id(job_id: str, attempt: int) -> str:
    return f"{job_id}-{attempt}"


def base_ref(job_id: str) -> str:
    """Where the supervisor puts the job's base commit on the shared remote."""
    return f"{REF_PREFIX}{job_id}/base"


def turn_ref(job_id: str, turn: int) -> str:
    """Where a worker pushes what turn `turn` made."""
    return f"{REF_PREFIX}{job_id}/turn-{turn}"


class TurnSpec(BaseModel):
    """Everything `zen remote-turn` needs to run one turn on a node: it crosses a process (and a
    machine) boundary, as one compressed string in the Ray job's environment."""

    model_config = ConfigDict(extra="forbid")

    v: int = SPEC_VERSION
    job: str
    submission: str
    turn: int
    attempt: int
    lane: str
    remote: str                         # the shared bare repository (a path or URL git can fetch)
    start_ref: str                      # on the remote: where this turn starts (base or last turn)
    start_head: str | None = None       # the agent's own head inside start_ref's snapshot (or None)
    push_ref: str                       # on the remote: where the result goes
    task_yaml: str                      # the task file as accepted
    prompt: str                         # this turn's input: the task's prompt, or what `zen send` sent
    resume: bool = False                # continue the agent's session (claude -p --resume, ...)
    handoff: str = ""
    supervisor_worktree: str = ""       # the supervisor's path for the worktree (rewritten in handoff)
    policy: dict[str, str] = Field(default_factory=dict)    # home-relative path -> text
    agent_settings: dict[str, Any] = Field(default_factory=dict)
    env: dict[str, str] = Field(default_factory=dict)
    setup: str | None = None
    switch_url: str = ""                # where the worker's guardian reads the kill switch
    switch_token: str = ""
    workdir: str = ""                   # the node's scratch root (default: ~/.cache/zen/remote)

    def encode(self) -> str:
        raw = json.dumps(self.model_dump(), separators=(",", ":")).encode()
        return base64.b64encode(zlib.compress(raw, 6)).decode()

    @classmethod
    def decode(cls, text: str) -> TurnSpec:
        try:
            data = json.loads(zlib.decompress(base64.b64decode(text.encode(), validate=True)))
        except (ValueError, zlib.error) as exc:
            raise ExecutorError(f"the turn spec is garbled: {exc}") from None
        if not isinstance(data, dict) or data.get("v") != SPEC_VERSION:
            raise ExecutorError(f"the turn spec has version {data.get('v') if isinstance(data, dict) else '?'}; "
                                f"this zen reads {SPEC_VERSION}")
        try:
            return cls.model_validate(data)
        except ValidationError as exc:
            raise ExecutorError(f"the turn spec is invalid: {exc.errors()[0].get('msg')}") from None


# -- the worker's log ----------------------------------------------------------------------------

def frame_output(text: str) -> str:
    return FRAME + json.dumps({"o": text}, separators=(",", ":")) + "\n"


def frame_event(n: int, event: dict[str, Any]) -> str:
    return FRAME + json.dumps({"n": n, "e": event}, separators=(",", ":"), default=str) + "\n"


@dataclass(frozen=True)
class Output:
    text: str


@dataclass(frozen=True)
class WorkerEvent:
    n: int
    type: str
    actor: str
    fields: dict[str, Any]
    ts: str | None = None


def parse_log(text: str, offset: int) -> tuple[list[Output | WorkerEvent], int]:
    """The complete lines of a worker's log after character `offset`, read as output and events,
    and the offset just past the last complete line (a line still being written waits)."""
    end = text.rfind("\n", offset)
    if end < 0:
        return [], offset
    items: list[Output | WorkerEvent] = []
    # split on newlines only: str.splitlines also splits at the frame's own RS (0x1e)
    for line in text[offset:end + 1].split("\n")[:-1]:
        item = parse_line(line + "\n")
        if item is not None:
            items.append(item)
    return items, end + 1


def parse_line(line: str) -> Output | WorkerEvent | None:
    if not line.startswith(FRAME):
        return Output(line)
    try:
        obj = json.loads(line[1:])
    except ValueError:
        return Output(line[1:])
    if not isinstance(obj, dict):
        return None
    if "o" in obj:
        return Output(str(obj["o"]))
    ev, n = obj.get("e"), obj.get("n")
    if not isinstance(ev, dict) or not isinstance(n, int) or isinstance(n, bool) or not isinstance(ev.get("type"), str):
        return None
    fields = {k: v for k, v in ev.items() if k not in _ENVELOPE}
    return WorkerEvent(n=n, type=ev["type"], actor=str(ev.get("actor") or "worker"), fields=fields,
                       ts=ev.get("ts") if isinstance(ev.get("ts"), str) else None)


__all__ = ["FRAME", "KINDS", "LOCAL", "RAY", "SPEC_ENV", "WORKER_EVENTS", "Executor", "ExecutorError", "Output",
           "TurnSpec", "WorkerEvent", "base_ref", "choose", "frame_event", "frame_output", "parse_executor",
           "parse_line", "parse_log", "submission_id", "turn_ref"]

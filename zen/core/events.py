"""The event catalogue: every event type zen writes, its fields, and the line format's version.

A job's timeline (`jobs/<id>/events.jsonl`) holds one JSON object per line:

    {"v":1,"seq":7,"ts":"2026-11-29T10:15:02.456Z","job":"<id>","type":"turn.waiting","actor":"supervisor",...}

the envelope (`v`, `seq`, `ts`, `job`, `type`, `actor`) followed by the type's own fields. The
home-wide logs (`logs/control.jsonl`, `logs/guard-audit.jsonl`) hold lines with `v`, `ts`, `type`
and the type's fields. `JOB_EVENTS` and `HOME_EVENTS` list every type with its fields; `validate`
checks a line against them (`zen doctor`). Types are never renamed; readers keep lines of types
they do not know (the state machine ignores them), so adding a type or an optional field is
compatible and needs no version bump. Types marked `emitted=False` are reserved for the second
half (DESIGN sections 8, 10-13; issues 15, 19, 22) so that their names are settled before the
code that writes them exists.

Pure and lean (stdlib `enum`, `time`, `typing`): the guard hook imports it for every decision.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from enum import StrEnum
from typing import Any

FORMAT_VERSION = 1
# Changelog of the event line format. Bump FORMAT_VERSION only for an incompatible change; a new
# type or a new optional field is compatible and gets a line here without a bump.
#   v1  0.1.0     the first format: envelope v, seq, ts, job, type, actor + per-type fields.
#   v1  issue 12  this catalogue; guard-audit.jsonl lines carry "v" too; reserved second-half
#                 types (approvals, leases, changes, teams, goals, recovery, spawn intent).
#   v1  issue 18  notify.sent, notify.failed, finish.requested.
#   v1  issue 16  usage gains source, ledger, n, rollout, api_calls, api_errors and the 1 h share
#                 of cache writes; api.request, api.error, tool.result (OpenTelemetry).
#   v1  issue 19  the coordinator writes files.changed, lock.*, coord.overlap, coord.conflict and
#                 base.moved (with optional fields); webhook.sent, webhook.dead (logs/control.jsonl).
#   v1  issue 22  team.spawned, team.report, team.control, team.message written (zen mcp serve, zen
#                 team); team.delivered; actor "agent" (a team tool call); goal.* written (goal
#                 continuation), goal.turn, goal.held, goal.stopped added; recovery.* written
#                 (zen recover).
#   v1  issue 17  job.paused, job.resumed, job.landed, files.edited written (zen pause / resume /
#                 land, the dashboard's editor); job state `paused`.
#   v1  issue 14  usage gains chat (a Gemini CLI chat log) and analytics (aider's log); turn.* by
#                 "agent" (the agent's own
#                 state report in its output)
#   v1  issue 20  remote.*: turns run as Ray jobs (submit, submitted, started, pushed, finished,
#                 ended, fetched); a worker's events carry `via` (<submission>#<n>).
#   v1  issue 12  turn.waiting gains `error` (Claude Code's StopFailure hook: the API error that
#                 ended the turn, e.g. overloaded).

TS_FORMAT = "%Y-%m-%dT%H:%M:%S"


def stamp(utc: time.struct_time, ms: int) -> str:
    """ISO 8601 UTC with milliseconds and a Z, as every file of zen writes time."""
    return time.strftime(TS_FORMAT, utc) + f".{ms:03d}Z"


def timestamp(t: float | None = None) -> str:
    """Now (or epoch seconds `t`) in zen's time format, e.g. 2026-11-29T10:15:02.456Z."""
    ms = int((time.time() if t is None else t) * 1000)
    return stamp(time.gmtime(ms // 1000), ms % 1000)


class EventType(StrEnum):
    # intake and scheduling
    TASK_RECEIVED = "task.received"
    TASK_REJECTED = "task.rejected"
    JOB_QUEUED = "job.queued"
    RETRY_SCHEDULED = "retry.scheduled"
    # starting
    PREFLIGHT_PASSED = "preflight.passed"
    PREFLIGHT_FAILED = "preflight.failed"
    WORKTREE_CREATED = "worktree.created"
    SETUP_DONE = "setup.done"
    SETUP_FAILED = "setup.failed"
    FILES_INCLUDED = "files.included"
    SPAWN_INTENT = "spawn.intent"
    AGENT_SPAWNED = "agent.spawned"
    # turns
    TURN_WORKING = "turn.working"
    TURN_WAITING = "turn.waiting"
    INPUT_SENT = "input.sent"
    INPUT_FAILED = "input.failed"
    OUTPUT = "output"
    SESSION_ENDED = "session.ended"
    USAGE = "usage"
    API_REQUEST = "api.request"
    API_ERROR = "api.error"
    TOOL_RESULT = "tool.result"
    # the guardian
    GUARD_ALLOWED = "guard.allowed"
    GUARD_DENIED = "guard.denied"
    GATE_CALLED = "gate.called"
    ANOMALY_FLAGGED = "anomaly.flagged"     # issue 38: zen/observe/anomalies.py, insight/watch.py
    APPROVAL_REQUESTED = "approval.requested"
    APPROVAL_GRANTED = "approval.granted"
    APPROVAL_DENIED = "approval.denied"
    # the end of an agent
    AGENT_EXITED = "agent.exited"
    FINISH_REQUESTED = "finish.requested"
    JOB_TIMEOUT = "job.timeout"
    JOB_CANCELLED = "job.cancelled"
    JOB_FAILED = "job.failed"
    JOB_PAUSED = "job.paused"
    LIMIT_REACHED = "limit.reached"
    JOB_RESUMED = "job.resumed"
    HARVEST_DONE = "harvest.done"
    HARVEST_FAILED = "harvest.failed"
    WORKTREE_REMOVED = "worktree.removed"
    REVIEW_ACCEPTED = "review.accepted"
    REVIEW_REJECTED = "review.rejected"
    JOB_LANDED = "job.landed"
    CHECK_STARTED = "check.started"
    COMMENT_QUEUED = "comment.queued"
    REVIEW_COMMENTS = "review.comments"
    PR_OPENED = "pr.opened"
    ATTEMPT_PICKED = "attempt.picked"
    ATTEMPT_PASSED_OVER = "attempt.passed_over"
    CHECK_PASSED = "check.passed"
    CHECK_FAILED = "check.failed"
    # kill switch and supervisor (home-wide, some also on every live job)
    KILLSWITCH_ENGAGED = "killswitch.engaged"
    KILLSWITCH_RELEASED = "killswitch.released"
    SUPERVISOR_STARTED = "supervisor.started"
    SUPERVISOR_STOPPED = "supervisor.stopped"
    # notices to a human (a job needs them, or ended)
    NOTIFY_SENT = "notify.sent"
    NOTIFY_FAILED = "notify.failed"
    # coordinator (DESIGN 10)
    FILES_CHANGED = "files.changed"
    FILES_EDITED = "files.edited"
    LOCK_ACQUIRED = "lock.acquired"
    LOCK_RELEASED = "lock.released"
    LOCK_CONFLICT = "lock.conflict"
    COORD_OVERLAP = "coord.overlap"
    COORD_CONFLICT = "coord.conflict"
    BASE_MOVED = "base.moved"
    WEBHOOK_SENT = "webhook.sent"
    WEBHOOK_DEAD = "webhook.dead"
    # teams, goals and recovery (DESIGN 13)
    TEAM_SPAWNED = "team.spawned"
    TEAM_REPORT = "team.report"
    TEAM_CONTROL = "team.control"
    TEAM_MESSAGE = "team.message"
    TEAM_DELIVERED = "team.delivered"
    GOAL_TURN = "goal.turn"
    GOAL_HELD = "goal.held"
    GOAL_CONTINUED = "goal.continued"
    GOAL_BLOCKED = "goal.blocked"
    GOAL_DONE = "goal.done"
    GOAL_STOPPED = "goal.stopped"
    RECOVERY_STARTED = "recovery.started"
    RECOVERY_DONE = "recovery.done"
    # turns on another machine (DESIGN 14)
    REMOTE_SUBMIT = "remote.submit"
    REMOTE_SUBMITTED = "remote.submitted"
    REMOTE_STARTED = "remote.started"
    REMOTE_PUSHED = "remote.pushed"
    REMOTE_FINISHED = "remote.finished"
    REMOTE_ENDED = "remote.ended"
    REMOTE_FETCHED = "remote.fetched"


class Actor(StrEnum):
    """Who appended an event."""

    SUPERVISOR = "supervisor"
    HOOK = "hook"
    GUARD = "guard"
    GATE = "gate"
    HARVEST = "harvest"
    HUMAN = "human"
    TELEMETRY = "telemetry"     # the agent's own OpenTelemetry, through zen's receiver
    WORKER = "worker"
    AGENT = "agent"             # an agent's own call of zen's team tools (zen mcp serve)


# the reasons a turn waits (turn.waiting "reason")
WAIT_REASONS = ("idle", "question", "approval", "dialog")

# value kinds a field may hold; bool is never accepted as a number
NONE: type = type(None)
STR: tuple[type, ...] = (str,)
INT: tuple[type, ...] = (int,)
NUM: tuple[type, ...] = (int, float)
BOOL: tuple[type, ...] = (bool,)
LIST: tuple[type, ...] = (list,)
DICT: tuple[type, ...] = (dict,)


class Field:
    """One field of an event: its name, the kinds of value it may hold, whether it must be there.
    (Plain classes rather than NamedTuple or dataclasses: those cost the hook milliseconds.)"""

    __slots__ = ("kinds", "name", "required")

    def __init__(self, name: str, kinds: tuple[type, ...], required: bool = False) -> None:
        self.name = name
        self.kinds = kinds
        self.required = required

    def __repr__(self) -> str:
        return f"{'req' if self.required else 'opt'}({self.name!r}, {_names(self.kinds)})"


class EventSpec:
    """A catalogue entry: the type, its own fields, what it means, and whether zen writes it yet."""

    __slots__ = ("doc", "emitted", "fields", "type")

    def __init__(self, etype: EventType, fields: tuple[Field, ...], doc: str, emitted: bool = True) -> None:
        self.type = etype
        self.fields = fields
        self.doc = doc
        self.emitted = emitted          # False: reserved, nothing writes it yet

    def __repr__(self) -> str:
        return f"EventSpec({self.type.value!r}, emitted={self.emitted})"

    def field(self, name: str) -> Field | None:
        return next((f for f in self.fields if f.name == name), None)


def req(name: str, *kinds: tuple[type, ...] | type) -> Field:
    return Field(name, _flat(kinds), True)


def opt(name: str, *kinds: tuple[type, ...] | type) -> Field:
    return Field(name, _flat(kinds), False)


def _flat(kinds: tuple[tuple[type, ...] | type, ...]) -> tuple[type, ...]:
    out: list[type] = []
    for k in kinds:
        out.extend(k if isinstance(k, tuple) else (k,))
    return tuple(out)


E = EventType

# the envelope of every line in a job's timeline, then of every line in a home-wide log
JOB_ENVELOPE = (req("v", INT), req("seq", INT), req("ts", STR), req("job", STR), req("type", STR),
                req("actor", STR))
HOME_ENVELOPE = (req("v", INT), req("ts", STR), req("type", STR))

_GUARD = (req("decision", STR), req("rule", STR), req("reason", STR), req("tool", STR),
          opt("command", STR), opt("file_path", STR, NONE), opt("cwd", STR), opt("level", STR),
          opt("job", STR), opt("replay", DICT))    # replay: what judging it again needs (guard/audit.py)
_GATE = (req("integration", STR), req("method", STR), req("path", STR), req("status", INT, NONE),
         opt("error", STR), opt("job", STR))
_TOKENS = (opt("input_tokens", NUM), opt("output_tokens", NUM), opt("cache_read_input_tokens", NUM),
           opt("cache_creation_input_tokens", NUM), opt("cache_creation_1h_input_tokens", NUM),
           opt("cost_usd", NUM))
_SETUP = (req("command", STR), req("exit_code", INT), req("output", STR))
_VERDICT = (req("domain", STR), opt("correction", STR, NONE))
_CHECK = (req("check", STR), req("exit_code", INT, NONE), req("seconds", NUM), req("log", STR),
          opt("timed_out", BOOL))


def _spec(t: EventType, doc: str, *fields: Field, emitted: bool = True) -> tuple[EventType, EventSpec]:
    return t, EventSpec(t, fields, doc, emitted)


# -- a job's timeline: jobs/<id>/events.jsonl (data table) --------------------------------------
JOB_EVENTS: dict[EventType, EventSpec] = dict([
    _spec(E.TASK_RECEIVED, "the supervisor took the task in; the job exists", req("task", DICT)),
    _spec(E.JOB_QUEUED, "waiting for its turn to start", opt("priority", INT), opt("reason", STR)),
    _spec(E.RETRY_SCHEDULED, "a failed start will be retried at `at`",
          req("attempt", INT), req("of", INT), req("delay_s", NUM), req("at", STR), req("reason", STR)),
    _spec(E.PREFLIGHT_PASSED, "the checks before a spawn passed", opt("warnings", LIST)),
    _spec(E.PREFLIGHT_FAILED, "the checks before a spawn failed; the start fails", req("report", LIST)),
    _spec(E.WORKTREE_CREATED, "the job's worktree exists (never created twice)",
          req("path", STR), req("branch", STR), req("base_commit", STR), opt("base", STR), opt("lane", STR)),
    _spec(E.SETUP_DONE, "the lane's setup command succeeded in the worktree", *_SETUP),
    _spec(E.SETUP_FAILED, "the lane's setup command failed; the start fails", *_SETUP),
    _spec(E.FILES_INCLUDED, "untracked files copied from the lane's checkout",
          req("files", LIST), req("missing", LIST)),
    _spec(E.SPAWN_INTENT, "about to start the agent of this attempt (spawn exactly once, issue 15)",
          req("attempt", INT), req("session", STR)),
    _spec(E.AGENT_SPAWNED, "the agent runs in its tmux session (adopted: found running after a crash cut "
          "its start short)",
          req("session", STR), req("target", STR), opt("pid", INT, NONE), opt("argv", LIST),
          opt("socket", STR), opt("adopted", BOOL), opt("initial_input", STR)),
    _spec(E.TURN_WORKING, "the agent works", opt("by", STR), opt("hook", STR)),
    _spec(E.TURN_WAITING, "the agent waits for a human (reason: idle | question | approval | dialog)",
          req("reason", STR), opt("by", STR), opt("hook", STR), opt("tool", STR), opt("error", STR)),
    _spec(E.INPUT_SENT, "text typed into the agent's terminal",
          req("text", STR), req("chars", INT), opt("forced", BOOL), opt("initial", BOOL),
          opt("via", STR), opt("keys", LIST)),
    _spec(E.INPUT_FAILED, "typing into the terminal failed", req("reason", STR)),
    _spec(E.OUTPUT, "the agent printed something (read by the state machine)", emitted=False),
    _spec(E.SESSION_ENDED, "the agent's own hook says its session ended (tmux tells the exit code)",
          opt("hook", STR), opt("why", STR)),
    _spec(E.USAGE, "tokens, cost and API calls added since the ledger's last usage event (a count "
          "may be negative: a correction)",
          opt("transcript", STR), opt("rollout", STR), opt("chat", STR), opt("analytics", STR), opt("source", STR),
          opt("ledger", STR), opt("n", INT), opt("model", STR), *_TOKENS, opt("api_calls", INT),
          opt("api_errors", INT), opt("unpriced", LIST)),
    _spec(E.API_REQUEST, "one API call the agent reported over OpenTelemetry",
          req("source", STR), req("otel", STR), opt("model", STR), *_TOKENS, opt("duration_ms", NUM),
          opt("agent_cost_usd", NUM), opt("at_ns", INT), opt("unpriced", LIST)),
    _spec(E.API_ERROR, "one failed API call the agent reported over OpenTelemetry",
          req("source", STR), req("otel", STR), opt("model", STR), opt("status_code", INT),
          opt("error", STR), opt("attempt", INT), opt("duration_ms", NUM), opt("at_ns", INT)),
    _spec(E.TOOL_RESULT, "a tool call the agent finished, reported over OpenTelemetry",
          req("source", STR), req("otel", STR), req("tool", STR), opt("success", BOOL),
          opt("error", STR), opt("duration_ms", NUM), opt("at_ns", INT)),
    _spec(E.GUARD_ALLOWED, "the guardian allowed a command or file edit", *_GUARD),
    _spec(E.GUARD_DENIED, "the guardian denied a command or file edit", *_GUARD),
    _spec(E.GATE_CALLED, "a call through an integration gate", *_GATE),
    _spec(E.ANOMALY_FLAGGED, "what the job does is far from its baseline, or a known pattern (a loop, ...)",
          req("what", STR), req("key", STR), req("message", STR), opt("kind", STR), opt("value", NUM),
          opt("typical", NUM, NONE), opt("score", NUM, NONE), opt("evidence", LIST), opt("turn", INT),
          opt("action", STR)),
    _spec(E.APPROVAL_REQUESTED, "a call waits for a human's approval",
          req("id", STR), opt("rule", STR), opt("reason", STR), emitted=False),
    _spec(E.APPROVAL_GRANTED, "a human approved the call once", req("id", STR), opt("by", STR), emitted=False),
    _spec(E.APPROVAL_DENIED, "a human refused the call", req("id", STR), opt("by", STR), emitted=False),
    _spec(E.AGENT_EXITED, "the agent's process ended",
          req("exit_code", INT, NONE), req("signal", INT, NONE), opt("why", STR)),
    _spec(E.FINISH_REQUESTED, "a human asked the agent to finish (zen finish)"),
    _spec(E.JOB_TIMEOUT, "the task's timeout passed; the agent is stopped", req("after_s", NUM)),
    _spec(E.JOB_CANCELLED, "a human cancelled the job", opt("reason", STR)),
    _spec(E.JOB_FAILED, "the job failed", req("reason", STR)),
    _spec(E.LIMIT_REACHED, "a policy/guardian.yaml limit of the job was reached; job.failed follows",
          req("limit", STR), req("max", INT), req("used", INT), opt("reason", STR)),
    _spec(E.JOB_PAUSED, "the agent's process group was stopped (SIGSTOP); its timeout clock stops",
          opt("by", STR), opt("pid", INT, NONE)),
    _spec(E.JOB_RESUMED, "the agent's process group was continued (SIGCONT)",
          opt("by", STR), opt("paused_s", NUM), opt("pid", INT, NONE)),
    _spec(E.HARVEST_DONE, "the work is on the review branch and in review.md",
          req("branch", STR, NONE), req("commit", STR), req("files", INT), req("insertions", INT),
          req("deletions", INT), opt("clean_merge", BOOL, NONE), opt("head", STR, NONE),
          opt("base_commit", STR), opt("snapshot", BOOL), opt("observe", BOOL)),
    _spec(E.HARVEST_FAILED, "the harvest could not be done (retry: the disk was full or failing, so the "
          "supervisor tries again)", req("reason", STR), opt("retry", BOOL)),
    _spec(E.WORKTREE_REMOVED, "zen clean removed the job's worktree", req("path", STR)),
    _spec(E.REVIEW_ACCEPTED, "a human accepted the work (evidence for the domain)", *_VERDICT),
    _spec(E.REVIEW_REJECTED, "a human corrected the work (evidence for the domain)", *_VERDICT),
    _spec(E.JOB_LANDED, "a human merged the review branch into the lane's base (DESIGN 11)",
          req("branch", STR), req("commit", STR), opt("into", STR), opt("base_was", STR),
          opt("tip", STR), opt("by", STR), opt("forced", BOOL)),
    _spec(E.CHECK_STARTED, "the lane's checks run on the merge of the harvested commit into the base's tip "
          "(stale: the base moved since the job started)",
          req("checks", LIST), req("base", STR), req("tip", STR), req("merge", STR), opt("stale", BOOL)),
    _spec(E.COMMENT_QUEUED, "a reviewer's comment on a line of the harvested work, waiting for a send",
          req("path", STR), req("line", INT), req("line_text", STR), req("text", STR)),
    _spec(E.REVIEW_COMMENTS, "the queued comments typed into the agent as one message (a review round)",
          req("round", INT), req("count", INT), req("comments", LIST)),
    _spec(E.PR_OPENED, "the harvested work pushed as the review branch and proposed on the forge (never merged)",
          req("remote", STR), req("branch", STR), req("base", STR), req("commit", STR), opt("forge", STR, NONE),
          opt("url", STR, NONE)),
    _spec(E.ATTEMPT_PICKED, "of its group's attempts, a human landed this one (zen pick)",
          req("group", STR), req("others", LIST)),
    _spec(E.ATTEMPT_PASSED_OVER, "another attempt of the group was picked; this one's review branch stays",
          req("group", STR), req("picked", STR)),
    _spec(E.CHECK_PASSED, "one lane check passed", *_CHECK),
    _spec(E.CHECK_FAILED, "one lane check failed (or ran past its timeout)", *_CHECK),
    _spec(E.KILLSWITCH_ENGAGED, "the kill switch clamps this live job to observe",
          opt("reason", STR), opt("by", STR)),
    _spec(E.KILLSWITCH_RELEASED, "the kill switch was released", opt("by", STR)),
    _spec(E.NOTIFY_SENT, "a notice was claimed for this wait or end, then sent (once per wait)",
          req("kind", STR), req("for_seq", INT), opt("reason", STR), opt("channels", LIST)),
    _spec(E.NOTIFY_FAILED, "a notice channel failed", req("channel", STR), opt("for_seq", INT),
          opt("error", STR)),
    _spec(E.FILES_CHANGED, "paths changed in the worktree against its base (DESIGN 10)",
          req("paths", LIST), opt("by", STR), opt("added", LIST), opt("dropped", LIST)),
    _spec(E.FILES_EDITED, "file operations the guardian let through (observatory, DESIGN 8), or a "
          "human's save in the dashboard's editor (actor human)",
          req("op", STR), req("paths", LIST), opt("bytes", INT), opt("sha", STR)),
    _spec(E.LOCK_ACQUIRED, "the job holds a lease on a path or glob",
          req("lease", STR), req("path", STR), req("mode", STR), opt("expires", STR), opt("by", STR),
          opt("lane", STR), opt("reason", STR), opt("renewed", BOOL)),
    _spec(E.LOCK_RELEASED, "a lease ended", req("lease", STR), req("path", STR), opt("why", STR),
          opt("lane", STR), opt("by", STR)),
    _spec(E.LOCK_CONFLICT, "a write to a path another live job holds",
          req("path", STR), req("holder", STR), req("resolution", STR), opt("lease", STR),
          opt("expires", STR), opt("tool", STR), opt("lane", STR)),
    _spec(E.COORD_OVERLAP, "another live job of the lane changed the same paths",
          req("other", STR), req("paths", LIST)),
    _spec(E.COORD_CONFLICT, "git merge-tree predicts a conflict (paths empty: no longer)",
          req("other", STR), req("paths", LIST), opt("against", STR), opt("resolved", BOOL),
          opt("commit", STR), opt("other_commit", STR)),
    _spec(E.BASE_MOVED, "the lane's base branch moved under the job",
          req("base", STR), req("old", STR), req("new", STR)),
    _spec(E.TEAM_SPAWNED, "this job started a worker job (agent_spawn; the worker's task names it as parent)",
          req("worker", STR), opt("request_id", STR), opt("goal", STR), opt("agent", STR), opt("depth", INT)),
    _spec(E.TEAM_REPORT, "a worker reported to its parent (done | blocked | progress)",
          req("status", STR), opt("summary", STR), opt("blocker", STR), opt("parent", STR, NONE)),
    _spec(E.TEAM_CONTROL, "a parent (or a human) controlled this job, compare-and-set on its revision",
          req("target", STR), req("action", STR), opt("expected_revision", INT), opt("ok", BOOL),
          opt("by", STR)),
    _spec(E.TEAM_MESSAGE, "a message for this job from its parent, a worker or a human: typed in when it "
          "waits, else queued for its next turn boundary", req("target", STR), req("text", STR),
          opt("id", STR), opt("sender", STR), opt("queued", BOOL), opt("kind", STR)),
    _spec(E.TEAM_DELIVERED, "a queued message reached the agent (via: hook | typed | wait)",
          req("id", STR), opt("via", STR)),
    _spec(E.GOAL_TURN, "a turn of a goal ended: what zen read of it (the goal clock, blocker, progress)",
          req("turn", INT), req("at", NUM), opt("blocker", STR), opt("fingerprint", STR), opt("progress", BOOL),
          opt("done", BOOL), opt("head", STR), opt("tree", STR), opt("tokens", NUM), opt("cost_usd", NUM)),
    _spec(E.GOAL_HELD, "the next continuation waits (a repeated blocker, or the circuit breaker)",
          req("until", NUM), req("reason", STR), opt("streak", INT), opt("turn", INT)),
    _spec(E.GOAL_CONTINUED, "the supervisor continued a goal after a turn", req("turn", INT), opt("at", NUM)),
    _spec(E.GOAL_BLOCKED, "the same blocker persisted: the goal stops as blocked",
          req("blocker", STR), req("turns", INT), opt("span_s", NUM), opt("at", NUM), opt("reason", STR)),
    _spec(E.GOAL_DONE, "the agent reported its goal done; zen finishes it", opt("summary", STR), opt("turns", INT)),
    _spec(E.GOAL_STOPPED, "a budget or the turn limit stopped the goal; zen finishes it",
          req("reason", STR), opt("turns", INT)),
    _spec(E.RECOVERY_STARTED, "zen recover: a new agent session in the same worktree, under the recovery lease",
          opt("session", STR), opt("attempt", INT), opt("handoff", STR)),
    _spec(E.RECOVERY_DONE, "the recovery session runs", opt("session", STR), opt("attempt", INT)),
    _spec(E.REMOTE_SUBMIT, "about to submit this turn as a Ray job (the id is reserved first: "
          "a crash before the answer never submits it twice)",
          req("submission_id", STR), req("turn", INT), req("attempt", INT), req("address", STR),
          opt("start", STR)),
    _spec(E.REMOTE_SUBMITTED, "the cluster accepted the turn's Ray job",
          req("submission_id", STR), opt("turn", INT), opt("address", STR), opt("recovered", BOOL)),
    _spec(E.REMOTE_STARTED, "the worker runs the agent (actor worker)",
          opt("host", STR), opt("worktree", STR), opt("commit", STR), opt("argv", LIST), opt("pid", INT),
          opt("via", STR)),
    _spec(E.REMOTE_PUSHED, "the worker pushed the turn's work to the shared remote",
          req("ref", STR), req("commit", STR), opt("head", STR), opt("snapshot", BOOL), opt("via", STR)),
    _spec(E.REMOTE_FINISHED, "the worker's turn ended (the agent's exit code)",
          req("exit_code", INT, NONE), opt("signal", INT, NONE), opt("error", STR), opt("via", STR)),
    _spec(E.REMOTE_ENDED, "the cluster reports the turn's Ray job ended",
          req("submission_id", STR), req("status", STR), opt("exit_code", INT, NONE), opt("message", STR)),
    _spec(E.REMOTE_FETCHED, "the turn's work fetched from the remote; the job's worktree moved to it",
          req("ref", STR), req("commit", STR), opt("turn", INT)),
])

# -- home-wide logs: logs/control.jsonl and logs/guard-audit.jsonl (data table) ------------------
HOME_EVENTS: dict[EventType, EventSpec] = dict([
    _spec(E.SUPERVISOR_STARTED, "a supervisor took the home's lock", req("pid", INT)),
    _spec(E.SUPERVISOR_STOPPED, "the supervisor stopped; agents keep running",
          req("pid", INT), opt("live_agents", INT), opt("why", STR)),
    _spec(E.KILLSWITCH_ENGAGED, "every domain is observe-only",
          opt("zen", INT), opt("engaged_at", STR), opt("by", STR), opt("reason", STR)),
    _spec(E.KILLSWITCH_RELEASED, "the kill switch was released", opt("released_at", STR), opt("by", STR)),
    _spec(E.TASK_REJECTED, "a spool entry was moved to spool/quarantine/ (file: its name there)",
          req("file", STR), req("reason", STR)),
    _spec(E.GUARD_ALLOWED, "a decision made outside any job", opt("actor", STR), *_GUARD),
    _spec(E.GUARD_DENIED, "a decision made outside any job", opt("actor", STR), *_GUARD),
    _spec(E.GATE_CALLED, "a gate call made outside any job", opt("actor", STR), *_GATE),
    _spec(E.WEBHOOK_SENT, "the webhook receiver took a notification (coord/outbox, DESIGN 10)",
          req("id", STR), req("event", STR), req("status", INT), req("attempts", INT)),
    _spec(E.WEBHOOK_DEAD, "a notification was given up on: coord/outbox/dead/ holds it with the reason",
          req("id", STR), req("event", STR), req("reason", STR), req("attempts", INT)),
])

ALL_TYPES = frozenset(EventType)


def job_event(seq: int, job: str, etype: str, actor: str, fields: Mapping[str, Any]) -> dict[str, Any]:
    """A timeline line: the envelope (format version, seq, now, job, type, actor), then `fields`."""
    ev: dict[str, Any] = {"v": FORMAT_VERSION, "seq": seq, "ts": timestamp(), "job": job,
                          "type": str(etype), "actor": str(actor)}
    ev.update(fields)
    return ev


def home_event(etype: str, fields: Mapping[str, Any]) -> dict[str, Any]:
    """A line of a home-wide log: format version, now, type, then `fields`."""
    return {"v": FORMAT_VERSION, "ts": timestamp(), "type": str(etype), **fields}


def _kind_ok(value: object, kinds: tuple[type, ...]) -> bool:
    if isinstance(value, bool):
        return bool in kinds
    return isinstance(value, kinds)


def _names(kinds: tuple[type, ...]) -> str:
    return " or ".join("null" if k is NONE else k.__name__ for k in kinds)


def validate(ev: object, *, home: bool = False) -> list[str]:
    """What is wrong with one line (a job timeline's, or with `home` a home-wide log's): one
    sentence per problem; empty when it is a well-formed event of a known type."""
    if not isinstance(ev, Mapping):
        return ["the line is not a JSON object"]
    problems: list[str] = []
    catalogue = HOME_EVENTS if home else JOB_EVENTS
    for f in HOME_ENVELOPE if home else JOB_ENVELOPE:
        problems += _check(ev, f)
    etype = ev.get("type")
    if not isinstance(etype, str):
        return problems
    if isinstance(ev.get("v"), int) and ev["v"] > FORMAT_VERSION:
        problems.append(f"format version {ev['v']} is newer than this zen reads ({FORMAT_VERSION})")
    try:
        spec = catalogue[EventType(etype)]
    except (ValueError, KeyError):
        return [*problems, f"unknown event type {etype!r}"]
    for f in spec.fields:
        problems += _check(ev, f)
    return problems


def _check(ev: Mapping[str, Any], f: Field) -> list[str]:
    if f.name not in ev:
        return [f"{ev.get('type', 'the event')}: missing field {f.name!r}"] if f.required else []
    if not _kind_ok(ev[f.name], f.kinds):
        got = "null" if ev[f.name] is None else type(ev[f.name]).__name__
        return [f"{ev.get('type', 'the event')}: field {f.name!r} is {got}, not {_names(f.kinds)}"]
    return []


def _checks(fields: tuple[Field, ...]) -> dict[str, tuple[frozenset[type], tuple[tuple[type, ...], ...]]]:
    """Field name -> (the exact types that pass at once, every kinds tuple the value must match):
    what `usable` looks up for each key of an event. A name in the envelope and in the type's own
    fields (a guard event's `job`) must satisfy both."""
    kinds: dict[str, list[tuple[type, ...]]] = {}
    for f in fields:
        kinds.setdefault(f.name, []).append(f.kinds)
    return {name: (frozenset.intersection(*(frozenset(k) for k in ks)), tuple(ks)) for name, ks in kinds.items()}


_ENVELOPE_CHECKS = _checks(JOB_ENVELOPE)
_CHECKS_BY_NAME = {t.value: _checks(JOB_ENVELOPE + s.fields) for t, s in JOB_EVENTS.items()}


def usable(ev: object) -> bool:
    """Whether a job timeline's line may be folded into state: a string `type` and no field of
    the wrong kind (a missing field, even a required one, is tolerated: the reducers read fields
    with defaults). Unknown types are usable (readers keep and ignore them). A line that is not
    is skipped by the reducers and reported by `zen doctor`. The fast twin of `validate` for
    every replay (no sentence is built; each key of the event is one dict lookup and, for the
    common case of a value of exactly an allowed type, one set lookup)."""
    if not isinstance(ev, Mapping):
        return False
    etype = ev.get("type")
    if not isinstance(etype, str):
        return False
    checks = _CHECKS_BY_NAME.get(etype, _ENVELOPE_CHECKS)
    for name, value in ev.items():
        check = checks.get(name)
        if check is not None and type(value) not in check[0] and not all(_kind_ok(value, k) for k in check[1]):
            return False
    return True


def spec(etype: str, *, home: bool = False) -> EventSpec | None:
    """The catalogue entry of `etype`, or None for a type zen does not know."""
    try:
        return (HOME_EVENTS if home else JOB_EVENTS).get(EventType(etype))
    except ValueError:
        return None

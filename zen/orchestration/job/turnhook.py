"""`zen hook EVENT`: an agent's turn signals (Stop, Notification, ...) appended to its timeline.

It runs on every agent turn, so it stays lean: stdlib json/os plus zen.store.events, layout and
readers and the zen.core event catalogue, nothing else (no typer, pydantic or ruamel). It never blocks or fails the agent: with no job context it
does nothing, and whatever happens it exits 0 without a traceback.

    Stop                                  -> turn.waiting  idle (question if the last message asks)
    StopFailure                           -> turn.waiting  idle, with the API error that ended the
                                             turn (`error`: overloaded, rate_limit, ...)
    Notification permission_prompt        -> turn.waiting  approval (Gemini CLI: ToolPermission)
    Notification idle_prompt              -> turn.waiting  idle
    PermissionRequest                     -> turn.waiting  approval
    UserPromptSubmit                      -> turn.working
    SessionEnd                            -> session.ended (a hint: tmux tells the exit code)
    codex-notify '<json>'                 -> turn.waiting  idle (agent-turn-complete; not the
                                             session-title side turn Codex's TUI also reports)
    aider-notify [--usage-file LOG]       -> turn.waiting  idle (and usage from aider's analytics log)

`--agent NAME` after the event says whose hook it is (Codex and Gemini CLI register theirs so):
their Stop carries a transcript of another format, read for token usage by that agent's parser.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

from zen.adapters import procs
from zen.core import messages
from zen.core.events import Actor, EventType
from zen.guard.resident import client
from zen.store import events
from zen.store.layout import JobPaths
from zen.store.panes import pane_pid
from zen.store.readers import job_dir as job_dir_of

E = EventType


def _read_stdin() -> dict[str, Any]:
    try:
        if sys.stdin is None or sys.stdin.isatty():
            return {}
        text = sys.stdin.read()
    except (OSError, ValueError):
        return {}
    try:
        data = json.loads(text) if text.strip() else {}
    except ValueError:
        return {}
    return data if isinstance(data, dict) else {}


def _asks(message: Any) -> bool:
    return isinstance(message, str) and message.rstrip().endswith("?")


def _title_turn(payload: dict[str, Any]) -> bool:
    """Codex's TUI titles each new session in a side turn of its own, and reports it to notify."""
    msgs = payload.get("input-messages")
    first = msgs[0] if isinstance(msgs, list) and msgs else ""
    return isinstance(first, str) and first.startswith("Generate a concise, single-line task title")


def translate(event: str, payload: dict[str, Any]) -> tuple[str, dict[str, Any]] | None:
    """(event type, fields) to record for one hook call, or None to record nothing."""
    if event == "Stop":
        reason = "question" if _asks(payload.get("last_assistant_message")) else "idle"
        return E.TURN_WAITING, {"reason": reason, "hook": event}
    if event == "StopFailure":
        return E.TURN_WAITING, {"reason": "idle", "hook": event, "error": str(payload.get("error") or "unknown")}
    if event == "Notification":
        kind = payload.get("notification_type") or ""
        if kind in ("permission_prompt", "ToolPermission"):   # Claude Code, Gemini CLI
            return E.TURN_WAITING, {"reason": "approval", "hook": event}
        if kind == "idle_prompt":
            return E.TURN_WAITING, {"reason": "idle", "hook": event}
        message = str(payload.get("message") or "")
        if "permission" in message.lower():
            return E.TURN_WAITING, {"reason": "approval", "hook": event}
        return None
    if event == "PermissionRequest":
        fields: dict[str, Any] = {"reason": "approval", "hook": event}
        if payload.get("tool_name"):
            fields["tool"] = str(payload["tool_name"])
        return E.TURN_WAITING, fields
    if event == "UserPromptSubmit":
        return E.TURN_WORKING, {"hook": event}
    if event == "SessionEnd":
        return E.SESSION_ENDED, {"hook": event, "why": str(payload.get("reason") or "")}
    if event == "codex-notify":
        if payload.get("type", "agent-turn-complete") != "agent-turn-complete" or _title_turn(payload):
            return None
        reason = "question" if _asks(payload.get("last-assistant-message")) else "idle"
        return E.TURN_WAITING, {"reason": reason, "hook": event}
    if event == "aider-notify":
        return E.TURN_WAITING, {"reason": "idle", "hook": event}
    return None


# what changes where a turn stands: a hook's turn.waiting repeats the last one unless one of these
# came between (usage, files.changed, telemetry and guard decisions change nothing)
_TURN_TYPES = frozenset({E.TURN_WAITING, E.TURN_WORKING, E.INPUT_SENT, E.AGENT_SPAWNED, E.SESSION_ENDED})
_TURN_NEEDLES = tuple(f'"{t}"'.encode() for t in _TURN_TYPES)   # as a line spells them


def _last_turn_event(path: Path, window: int = 65536) -> dict[str, Any] | None:
    """The last event in the timeline's tail that says where the turn stands, or None."""
    try:
        with path.open("rb") as f:
            f.seek(0, os.SEEK_END)
            size = f.tell()
            f.seek(max(0, size - window))
            lines = f.read().split(b"\n")
    except OSError:
        return None
    for line in reversed(lines):
        if not any(n in line for n in _TURN_NEEDLES):
            continue  # not one of them (a cheap look before parsing)
        try:
            ev = json.loads(line)
        except ValueError:
            continue  # the first line of the window, cut
        if isinstance(ev, dict) and ev.get("type") in _TURN_TYPES:
            return ev
    return None


def _deliver_queued(paths: JobPaths, job: str) -> bool:
    """Messages queued for the agent while it worked (team tools, DESIGN 13) are delivered at
    its turn's end: the Stop hook answers "block" with them, so the agent goes on with them as
    its next prompt (Claude Code's protocol; the sim follows it). Each is claimed once under the
    job's lock, so the supervisor never types one the hook delivered. True when any went out."""
    queued = messages.pending(events.read_events(paths.events))
    claimed = []
    for m in queued:
        msg_id = str(m.get("id"))
        def seen(evs: list[dict[str, Any]], i: str = msg_id) -> bool:
            return messages.delivered(evs, i)

        ev = events.append_unless(paths.dir, job, E.TEAM_DELIVERED, seen, Actor.HOOK, id=msg_id, via="hook")
        if ev is not None:
            claimed.append(m)
    if not claimed:
        return False
    sys.stdout.write(json.dumps({"decision": "block", "reason": messages.text(claimed)}) + "\n")
    sys.stdout.flush()
    return True


def main(argv: list[str]) -> int:
    try:
        return _main(argv)
    except BaseException:  # never fail the agent's turn, never print a traceback into its pane
        return 0


def _opt(argv: list[str], name: str) -> str | None:
    """`NAME VALUE` (or NAME=VALUE) among the arguments after the event."""
    for i, arg in enumerate(argv):
        if arg == name and i + 1 < len(argv):
            return argv[i + 1]
        if arg.startswith(name + "="):
            return arg.split("=", 1)[1]
    return None


def _agent(argv: list[str]) -> str:
    """`--agent NAME` after the event, else claude."""
    return _opt(argv, "--agent") or "claude"


def _record_usage(agent: str, event: str, job_dir: Path, job: str, home: Path, payload: dict[str, Any]) -> None:
    """Token usage since the last usage event, from the agent's transcript (Claude Code's, a Codex
    rollout, a Gemini CLI chat log), after the turn event, so turn.waiting is never held up by it."""
    transcript = payload.get("transcript_path")
    if event == "aider-notify" and payload.get("usage_file"):
        # aider says nothing to its notification command: the adapter names its analytics log
        transcript, event = payload["usage_file"], "Stop"
    if not transcript or event not in ("Stop", "StopFailure", "SessionEnd"):
        return
    # only after a turn with a transcript: keeps every other call lean
    from zen.observe import record as usage

    kind = agent if agent in usage.PARSERS else "claude"
    last = payload.get("last_assistant_message") if event == "Stop" else None
    if kind == "claude" and isinstance(last, str) and last.strip():
        usage.wait_for_text(str(transcript), last)
    usage.record(job_dir, job, kind, str(transcript), prices=lambda: usage.home_prices(home))


def _main(argv: list[str]) -> int:
    event = argv[0] if argv else ""
    agent = _agent(argv[1:])
    if event == "codex-notify":
        # Codex passes its JSON as the last argument, not on stdin
        try:
            payload = json.loads(argv[-1]) if len(argv) > 1 else {}
        except ValueError:
            payload = {}
        if not isinstance(payload, dict):
            payload = {}
    elif event == "aider-notify":
        payload = {"usage_file": _opt(argv[1:], "--usage-file")}
    else:
        payload = _read_stdin()
    home = os.environ.get("ZEN_HOME")
    job = os.environ.get("ZEN_JOB_ID")
    if not home or not job:
        return 0
    found_dir = job_dir_of(home, job)
    reachable = found_dir is not None and JobPaths(found_dir).events.is_file()
    if not reachable and os.path.exists(client.socket_path(home)):
        # inside zen's wall (a Gemini CLI job): zen's home is not there but the resident guardian's
        # socket is; it records the signal for us, once it has seen we run under the job's pane
        client.ask(home, ["turn", event, *argv[1:]], json.dumps(payload).encode())
        return 0
    return apply(event, agent, payload, home, job, os.getpid())


def relayed(argv: list[str], data: bytes, env: dict[str, str], caller: int) -> None:
    """A turn signal from a walled agent's hook (`turn EVENT ...` to the resident guardian, whose
    caller `caller` it checked runs under the job's pane), recorded as that hook would."""
    home, job = env.get("ZEN_HOME"), env.get("ZEN_JOB_ID")
    if not argv or not home or not job:
        return
    try:
        payload = json.loads(data) if data.strip() else {}
    except ValueError:
        payload = {}
    apply(argv[0], _agent(argv[1:]), payload if isinstance(payload, dict) else {}, home, job, caller)


def apply(event: str, agent: str, payload: dict[str, Any], home: str, job: str, caller: int) -> int:
    """Record one turn signal of process `caller` (the hook) in the job's timeline."""
    found_dir = job_dir_of(home, job)
    if found_dir is None:
        return 0
    paths = JobPaths(found_dir)
    if not paths.events.is_file():
        return 0
    pane = pane_pid(home, job)
    if pane is not None and pane not in procs.ancestors(caller):
        return 0    # not from under that job's pane: a turn signal in its name is not believed (M14)
    found = translate(event, payload)
    if found is None:
        return 0
    etype, fields = found
    # messages queued while the agent worked go out now: it goes on with them, so no turn ended
    went_on = event == "Stop" and _deliver_queued(paths, job)
    last = _last_turn_event(paths.events)
    # A Notification(idle) after the Stop that already said so adds nothing
    if not went_on and not (last and last.get("type") == etype and last.get("actor") == Actor.HOOK
            and last.get("reason") == fields.get("reason") and etype != E.SESSION_ENDED):
        events.append(paths.dir, job, etype, actor=Actor.HOOK, **fields)
    _record_usage(agent, event, paths.dir, job, Path(home), payload)
    return 0

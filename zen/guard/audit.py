"""Audit: every hook and single check decision is written down.

With $ZEN_JOB_ID set the decision joins the job's timeline (`guard.allowed` / `guard.denied` in
jobs/<id>/events.jsonl, through zen.store.events so seq stays gap-free); without a job it is one
JSON line in <home>/logs/guard-audit.jsonl (nothing when there is no home at all).

Failure policy: writing the audit can never turn a deny into an allow (the decision is made
before the audit and the caller acts on it whatever happens here). An allow whose audit fails is
still an allow, with a line on stderr: the call is safe by the policy, and blocking the agent
because the disk is full would turn a logging fault into an outage. `record` never raises.

Replay (issue 38): each record carries `replay`, what `zen policy simulate` needs to judge the
same call again under another policy: the whole call (command, path, content and tool input, not
cut), the worktree, domain, whether an agent made it, $HOME, the kill switch, the environment
variables the command names or the guardian reads (secret-looking ones as a placeholder, never
their value), and `core`, the policy's own decision when an approval or a lease turned it into
another. A call whose text is larger than REPLAY_LIMIT is recorded without it (`partial`).

Lean: imported by the hook.
"""

from __future__ import annotations

import json
import os
import re
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from zen.core.events import Actor, EventType, home_event
from zen.guard.api import ALLOW, Context, Decision, ToolCall
from zen.store import layout
from zen.store.events import append, append_line_to, append_many
from zen.store.readers import job_dir as job_dir_of

MAX_COMMAND = 500
AUDIT_LOG = layout.GUARD_AUDIT_LOG
REPLAY_LIMIT = 65536          # characters of a call's text kept for replay
# variables the guardian reads whatever the command says (PATH lookups, cd, tmux, scripts' imports)
READ_VARS = ("PATH", "CDPATH", "TMUX", "TMPDIR", "PYTHONPATH", "PWD", "OLDPWD")
_NAMED = re.compile(r"\$\{?([A-Za-z_][A-Za-z0-9_]*)")
_SECRET = re.compile(r"KEY|TOKEN|SECRET|PASS|CRED|AUTH|COOKIE|SESSION", re.I)
SECRET_PLACEHOLDER = "<secret: not recorded>"


def replay_env(call: ToolCall, env: Any) -> dict[str, str]:
    """The variables a decision on `call` can depend on: those the guardian always reads and those
    the command names; a secret-looking one is recorded as set, never with its value."""
    if not env:
        return {}
    names = set(READ_VARS)
    if call.command:
        names.update(_NAMED.findall(call.command))
    return {n: (SECRET_PLACEHOLDER if _SECRET.search(n) and n not in READ_VARS else str(env[n]))
            for n in sorted(names) if n in env}


def replay_call(call: ToolCall) -> dict[str, Any]:
    """The call as data: its tool input (`raw`), and each of command, file_path and content only
    where it is not what the tool input gives (ToolCall.from_hook): a Write's text is kept once."""
    out: dict[str, Any] = {"tool": call.tool}
    derived = ToolCall.from_hook(call.tool, call.raw) if call.raw else ToolCall(call.tool)
    if call.raw:
        out["raw"] = dict(call.raw)
    for key in ("command", "file_path", "content"):
        value = getattr(call, key)
        if value != getattr(derived, key):
            out[key] = value
    return out


def rebuild_call(c: Mapping[str, Any]) -> ToolCall:
    """The ToolCall a replay_call() record stands for."""
    tool = str(c["tool"])
    raw = c.get("raw") if isinstance(c.get("raw"), Mapping) else None
    base = ToolCall.from_hook(tool, raw) if raw else ToolCall(tool)
    return ToolCall(tool=tool, command=c.get("command", base.command), file_path=c.get("file_path", base.file_path),
                    content=c.get("content", base.content), raw=raw)


def replay(call: ToolCall, ctx: Context, core: Decision | None) -> dict[str, Any]:
    """What judging `call` again needs (see the module's docstring)."""
    out: dict[str, Any] = {"worktree": ctx.worktree, "domain": ctx.domain, "agent": ctx.agent,
                           "user_home": ctx.user_home, "job": ctx.job_id,
                           "kill": bool(ctx.level == "observe" and ctx.home and os.path.exists(
                               os.path.join(ctx.home, layout.CONTROL, layout.KILL))),
                           "env": replay_env(call, ctx.env)}
    c = replay_call(call)
    try:
        size = len(json.dumps(c, ensure_ascii=False, default=str))
    except (TypeError, ValueError):
        size = REPLAY_LIMIT + 1
    if size <= REPLAY_LIMIT:
        out["call"] = c
    else:
        out["call"] = {"tool": call.tool}
        out["partial"] = f"the call's text ({size} characters) is over {REPLAY_LIMIT}: not recorded"
    if core is not None:
        out["core"] = {"decision": core.decision, "rule": core.rule}
    return out


def fields(call: ToolCall, decision: Decision, ctx: Context | None,
           core: Decision | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {"decision": decision.decision, "rule": decision.rule,
                           "reason": decision.reason, "tool": call.tool}
    if call.command is not None:
        cmd = call.command
        out["command"] = cmd if len(cmd) <= MAX_COMMAND else cmd[:MAX_COMMAND] + "…"
    elif call.file_path is not None:
        out["file_path"] = call.file_path
    if ctx is not None:
        out["cwd"] = ctx.cwd
        out["level"] = ctx.level
        out["replay"] = replay(call, ctx, core if core is not None and core != decision else None)
    return out


def _where(ctx: Context | None, call: ToolCall, decision: Decision,
           job_id: str | None, core: Decision | None = None) -> tuple[str | None, str | None, str, dict[str, Any]]:
    """(the job directory to append to or None, the home, event type, fields) of one record."""
    etype = EventType.GUARD_ALLOWED if decision.decision == ALLOW else EventType.GUARD_DENIED
    data = fields(call, decision, ctx, core)
    home = ctx.home if ctx is not None else None
    job_dir = job_dir_of(home, job_id) if job_id and home else None
    if job_id and job_dir is not None and os.path.isdir(job_dir):
        return job_dir, home, etype, data
    if job_id:
        data["job"] = job_id              # a job id with no record: the home log keeps it
    return None, home, etype, data


def _failed(exc: BaseException) -> bool:
    try:
        sys.stderr.write(f"zen guardian: could not write the audit record ({type(exc).__name__}: {exc})\n")
    except BaseException:
        pass
    return False


def record(ctx: Context | None, call: ToolCall, decision: Decision, job_id: str | None,
           core: Decision | None = None) -> bool:
    """Write the decision down (`core`: the policy's own decision, when an approval or a lease
    check made it another); False (and a line on stderr) when that failed. Never raises."""
    try:
        job_dir, home, etype, data = _where(ctx, call, decision, job_id, core)
        if job_dir is not None and job_id:
            append(Path(job_dir), job_id, etype, actor=Actor.GUARD, **data)
        elif home:
            write_home_log(home, etype, actor=Actor.GUARD, **data)
        return True
    except BaseException as exc:  # the audit must not change the decision
        return _failed(exc)


Entry = tuple[Context | None, ToolCall, Decision, str | None] | tuple[
    Context | None, ToolCall, Decision, str | None, Decision | None]


def record_many(entries: list[Entry]) -> list[bool]:
    """record() for several decisions at once, in order: each job's records in one append (one
    fsync for all of them). Never raises."""
    done = [False] * len(entries)
    jobs: dict[tuple[str, str], list[int]] = {}
    items: list[tuple[str, dict[str, Any]]] = []
    for i, entry in enumerate(entries):
        ctx, call, decision, job_id = entry[:4]
        core = entry[4] if len(entry) > 4 else None
        try:
            job_dir, home, etype, data = _where(ctx, call, decision, job_id, core)
            items.append((etype, data))
            if job_dir is not None and job_id:
                jobs.setdefault((job_dir, job_id), []).append(i)
            else:
                if home:
                    write_home_log(home, etype, actor=Actor.GUARD, **data)
                done[i] = True
        except BaseException as exc:
            items.append(("", {}))
            _failed(exc)
    for (job_dir, job_id), idx in jobs.items():
        try:
            append_many(Path(job_dir), job_id, [(items[i][0], Actor.GUARD, items[i][1]) for i in idx])
        except BaseException as exc:
            _failed(exc)
            continue
        for i in idx:
            done[i] = True
    return done


def write_home_log(home: str, etype: str, **fields: Any) -> None:
    """One whole line appended to logs/guard-audit.jsonl with a single write (O_APPEND keeps
    concurrent lines whole; not fsynced: the hook answers before every agent command)."""
    append_line_to(layout.Home(home).guard_audit_log, home_event(etype, fields), durable=False)

"""Audit: every hook and single check decision is written down.

With $ZEN_JOB_ID set the decision joins the job's timeline (`guard.allowed` / `guard.denied` in
jobs/<id>/events.jsonl, through zen.store.events so seq stays gap-free); without a job it is one
JSON line in <home>/logs/guard-audit.jsonl (nothing when there is no home at all).

Failure policy: writing the audit can never turn a deny into an allow (the decision is made
before the audit and the caller acts on it whatever happens here). An allow whose audit fails is
still an allow, with a line on stderr: the call is safe by the policy, and blocking the agent
because the disk is full would turn a logging fault into an outage. `record` never raises.

Lean: imported by the hook.
"""

from __future__ import annotations

import json
import os
import sys
import time
from typing import Any

from zen.guard.api import ALLOW, Context, Decision, ToolCall

MAX_COMMAND = 500
AUDIT_LOG = "guard-audit.jsonl"


def _now() -> str:
    t = time.time()
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(t)) + f".{int(t * 1000) % 1000:03d}Z"


def fields(call: ToolCall, decision: Decision, ctx: Context | None) -> dict[str, Any]:
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
    return out


def record(ctx: Context | None, call: ToolCall, decision: Decision, job_id: str | None) -> bool:
    """Write the decision down; False (and a line on stderr) when that failed. Never raises."""
    try:
        etype = "guard.allowed" if decision.decision == ALLOW else "guard.denied"
        data = fields(call, decision, ctx)
        home = ctx.home if ctx is not None else None
        if job_id and home and "/" not in job_id and job_id not in (".", ".."):
            job_dir = os.path.join(home, "jobs", job_id)
            if os.path.isdir(job_dir):
                from pathlib import Path

                from zen.store.events import append

                append(Path(job_dir), job_id, etype, actor="guard", **data)
                return True
            data["job"] = job_id              # a job id with no record: the home log keeps it
        if not home:
            return True
        write_home_log(home, {"ts": _now(), "type": etype, "actor": "guard", **data})
        return True
    except BaseException as exc:  # the audit must not change the decision
        try:
            sys.stderr.write(f"zen guardian: could not write the audit record ({type(exc).__name__}: {exc})\n")
        except BaseException:
            pass
        return False


def write_home_log(home: str, rec: dict[str, Any]) -> None:
    """One whole line appended with a single write (O_APPEND keeps concurrent lines whole)."""
    directory = os.path.join(home, "logs")
    os.makedirs(directory, exist_ok=True)
    line = json.dumps(rec, separators=(",", ":"), ensure_ascii=False, default=str).encode() + b"\n"
    fd = os.open(os.path.join(directory, AUDIT_LOG), os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        view = memoryview(line)
        while view:
            n = os.write(fd, view)
            view = view[n:]
    finally:
        os.close(fd)

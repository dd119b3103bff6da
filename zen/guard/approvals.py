"""Approvals: a call that a rule marks `approval` waits for a human, then runs once.

    approvals/pending/<id>.yaml   written by the hook when such a call is denied
    approvals/granted/<id>.yaml   `zen approve <id>` moved it here: the next identical call from
                                  the same job is allowed once (the file is renamed to
                                  <id>.used-<ts>.yaml as it is consumed, so exactly one wins)
    approvals/denied/<id>.yaml    `zen deny <id>`: the call stays denied, no new request

The id is a short stable hash of (job id, tool, command or file path), so an agent retrying the
same call finds the same request. Every move is one rename (atomic); the files are a tiny YAML
subset (`key: <JSON value>`), written without ruamel because the hook writes them.

Lean: imported by the hook (stdlib + zen.guard.api).
"""

from __future__ import annotations

import _thread  # the thread's id in a temp name (the resident guardian writes from threads)
import hashlib
import json
import os
from typing import Any

from zen.core.events import timestamp
from zen.errors import ApprovalError, ApprovalNotFound, BadApprovalId
from zen.guard.api import ALLOW, DENY, Context, Decision, ToolCall, subject
from zen.store import layout

STATES = layout.APPROVAL_STATES
FIELDS = ("id", "job", "tool", "command", "file_path", "cwd", "rule", "reason", "created_at")


def approval_id(job: str | None, tool: str, subject: str) -> str:
    h = hashlib.sha256(f"{job or ''}\0{tool}\0{subject}".encode("utf-8", "surrogateescape"))
    return h.hexdigest()[:12]


def dump(record: dict[str, Any]) -> str:
    """`key: value` lines, each value a JSON scalar (valid YAML flow scalars)."""
    return "".join(f"{k}: {json.dumps(v, ensure_ascii=True)}\n" for k, v in record.items())


def load(text: str) -> dict[str, Any]:
    """Read what dump() wrote; a hand-edited file falls back to a real YAML parser."""
    out: dict[str, Any] = {}
    try:
        for line in text.splitlines():
            if not line.strip() or line.lstrip().startswith("#"):
                continue
            key, sep, value = line.partition(": ")
            if not sep:
                raise ValueError(line)
            out[key.strip()] = json.loads(value)
        return out
    except ValueError:
        # a hand-edited file only: ruamel is too heavy for the hook's import path
        from ruamel.yaml import YAML

        data = YAML(typ="safe", pure=True).load(text)
        return dict(data) if isinstance(data, dict) else {}


def _dir(home: str, state: str) -> str:
    return os.path.join(home, layout.APPROVALS, state)


def _publish(directory: str, name: str, text: str, *, exclusive: bool) -> bool:
    """Write `text` to directory/name via a temp file and a link (exclusive) or rename."""
    os.makedirs(directory, exist_ok=True)
    tmp = os.path.join(directory, f".{name}.{os.getpid()}.{_thread.get_ident()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    try:
        os.write(fd, text.encode("utf-8", "surrogateescape"))
        os.fsync(fd)
    finally:
        os.close(fd)
    try:
        if exclusive:
            try:
                os.link(tmp, os.path.join(directory, name))
            except FileExistsError:
                return False
        else:
            os.replace(tmp, os.path.join(directory, name))
            tmp = ""
    finally:
        if tmp:
            try:
                os.unlink(tmp)
            except OSError:
                pass
    return True


def resolve(ctx: Context, call: ToolCall, decision: Decision, *, act: bool) -> Decision:
    """What an `approval` decision becomes: allow once (a grant is consumed), or deny.

    With `act` (the hook) a grant is consumed and a missing request is written to pending/;
    without it (a check from a shell) the state is only read."""
    what = subject(call)
    aid = approval_id(ctx.job_id, call.tool, what)
    if not ctx.home:
        return Decision(DENY, decision.rule, f"{decision.reason} (needs a human's approval, and there "
                        "is no zen home to record the request in)")
    granted = os.path.join(_dir(ctx.home, "granted"), f"{aid}.yaml")
    if os.path.exists(os.path.join(_dir(ctx.home, "denied"), f"{aid}.yaml")):
        return Decision(DENY, decision.rule, f"{decision.reason} (a human denied approval {aid})")
    if os.path.exists(granted):
        if not act:
            return Decision(ALLOW, decision.rule, f"approved once by a human (approval {aid}, not used yet)")
        used = os.path.join(_dir(ctx.home, "granted"), f"{aid}.used-{timestamp().replace(':', '')}-{os.getpid()}.yaml")
        try:
            os.rename(granted, used)          # exactly one caller wins the grant
        except FileNotFoundError:
            pass
        else:
            return Decision(ALLOW, decision.rule, f"approved once by a human (approval {aid})")
    if act:
        record = {"id": aid, "job": ctx.job_id, "tool": call.tool}
        if call.command is not None:
            record["command"] = call.command
        else:
            record["file_path"] = call.file_path
        record.update({"cwd": ctx.cwd, "rule": decision.rule, "reason": decision.reason,
                       "created_at": timestamp()})
        _publish(_dir(ctx.home, "pending"), f"{aid}.yaml", dump(record), exclusive=True)
    return Decision("approval", decision.rule,
                    f"{decision.reason}; needs a human's approval: `zen approve {aid}` allows it once "
                    f"(`zen deny {aid}` refuses it)")


# ---------------------------------------------------------------------------------------------
# the CLI side: list, approve, deny

def _valid_id(aid: str) -> bool:
    return bool(aid) and all(c in "0123456789abcdef" for c in aid) and len(aid) <= 64


def listing(home: str) -> list[dict[str, Any]]:
    """Every request, oldest first: pending, granted (unused), denied, with `state`."""
    out = []
    for state in STATES:
        d = _dir(home, state)
        try:
            names = sorted(os.listdir(d))
        except FileNotFoundError:
            continue
        for name in names:
            if name.startswith(".") or not name.endswith(".yaml") or ".used-" in name:
                continue
            try:
                with open(os.path.join(d, name), encoding="utf-8") as f:
                    rec = load(f.read())
            except (OSError, UnicodeDecodeError, Exception):
                rec = {"id": name[:-5], "reason": "unreadable request file"}
            rec["state"] = state
            rec.setdefault("id", name[:-5])
            out.append(rec)
    out.sort(key=lambda r: (STATES.index(r["state"]), str(r.get("created_at", ""))))
    return out


def decide_request(home: str, aid: str, verdict: str, by: str | None = None) -> dict[str, Any]:
    """Move pending/<id>.yaml to granted/ or denied/ (one rename), then note who and when."""
    aid = aid.strip()
    target = "granted" if verdict == "granted" else "denied"
    if not _valid_id(aid):
        raise BadApprovalId(f"{aid!r} is not an approval id (zen approvals lists them)")
    src_dir = _dir(home, "pending")
    src = os.path.join(src_dir, f"{aid}.yaml")
    dst_dir = _dir(home, target)
    dst = os.path.join(dst_dir, f"{aid}.yaml")
    try:
        with open(src, encoding="utf-8") as f:
            rec = load(f.read())
    except FileNotFoundError:
        rec = None
    except Exception:
        rec = {"id": aid}
    if rec is not None:
        # note who and when in place (the hook never reads pending/), then move it in one rename:
        # a granted file is never rewritten, so a grant cannot come back after it is consumed
        rec.update({"decided": target, "decided_at": timestamp(),
                    "decided_by": by or os.environ.get("USER") or "human"})
        try:
            _publish(src_dir, f"{aid}.yaml", dump(rec), exclusive=False)
        except OSError:
            pass
        os.makedirs(dst_dir, exist_ok=True)
        try:
            os.rename(src, dst)
        except FileNotFoundError:
            rec = None
    if rec is None:
        for state in ("granted", "denied"):
            if os.path.exists(os.path.join(_dir(home, state), f"{aid}.yaml")):
                if state == target:
                    raise ApprovalError(f"approval {aid} is already {state}")
                raise ApprovalError(f"approval {aid} was already {state}; it is not pending")
        raise ApprovalNotFound(f"no pending approval {aid} (zen approvals lists them)")
    rec["state"] = target
    return rec

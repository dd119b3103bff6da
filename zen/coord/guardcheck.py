"""The lease check inside the guardian's hook: a write to a path another live job of the lane holds.

    check_writes(ctx, call, writes, act) -> (decision or None, note or None)

The guardian has already resolved every path the call writes or deletes (Edit/Write/MultiEdit/
NotebookEdit targets, redirects, `sed -i`, `mv`/`cp` targets, `rm`, ...) and allowed it; `writes`
is that list of (op, Target). This turns the ones inside the job's worktree into lane-relative
paths and asks the lane's leases (zen.coord.leases.blocking):

- another live job holds one exclusively: `conflict_resolution` decides: `deny` (a deny naming the
  holder, the expiry and how to ask), `warn` (allowed; the note goes into the agent's context),
  `last-write-wins` (allowed); each records `lock.conflict` in the writer's timeline;
- otherwise, with `act` (the real hook), the job takes an exclusive lease on each file it writes
  for the first time (shared when another job holds it shared), recorded as `lock.acquired`.

Reads never get here. A call with no job (a `zen guard check` from a shell), no home or no
worktree is not the coordinator's business. Zen's own files in the worktree (`.zen/`, `.zen-tmp/`)
are never leased. Exceptions propagate: the hook turns them into a block (fail closed).

Lean: runs in the hook (stdlib, zen.guard.api, zen.coord.leases and zen.coord.settings).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from fnmatch import fnmatchcase
from typing import Any

from zen.coord import leases
from zen.coord.settings import hook_settings
from zen.core.events import EventType as E
from zen.errors import Conflict
from zen.guard.api import DENY, Context, Decision, ToolCall
from zen.store import layout
from zen.store.readers import read_state

RULE_DENY = "coord.lease"
RULE_WARN = "coord.lease-warn"
RULE_LWW = "coord.lease-lww"
PRIVATE = (layout.WORKTREE_PRIVATE, layout.WORKTREE_TMP, ".git")
MAX_GLOB = 2000          # entries of one directory a shell glob is expanded against


def relative_targets(ctx: Context, writes: Sequence[tuple[str, Any]]) -> list[str]:
    """Lane-relative paths (or globs) of the written targets inside the worktree."""
    wt = ctx.worktree
    if not wt:
        return []
    roots = [wt.rstrip("/")]
    real = os.path.realpath(wt)
    if real not in roots:
        roots.append(real)
    out: list[str] = []
    for op, t in writes:
        path = str(t.path)
        rel = next((path[len(r) + 1:] for r in roots if path.startswith(r + "/")), None)
        if rel is None and path not in roots:
            continue
        rel = rel or ""
        if rel.split("/", 1)[0] in PRIVATE:
            continue
        if getattr(t, "children", False):
            for x in _expand(path, rel, getattr(t, "pattern", "")):
                if x not in out:
                    out.append(x)
            continue
        if not rel:
            continue
        elif op == "delete" and os.path.isdir(path):
            rel = rel + "/**"                    # removing a directory reaches everything in it
        if rel not in out:
            out.append(rel)
    return out


def _expand(directory: str, rel: str, pattern: str) -> list[str]:
    """What a shell glob (`src/*.py`) in a write reaches, as the shell will expand it now: the
    matching entries of the directory, a directory standing for everything below it. Without a
    pattern (find, xargs), or a directory too big to list, everything below `rel`."""
    prefix = f"{rel}/" if rel else ""
    if not pattern:
        return [f"{prefix}**"]
    entries: list[tuple[str, bool]] = []
    try:
        with os.scandir(directory) as it:
            for e in it:
                entries.append((e.name, e.is_dir(follow_symlinks=False)))
                if len(entries) > MAX_GLOB:
                    break
    except OSError:
        return []
    if len(entries) > MAX_GLOB:
        return [f"{prefix}{pattern}", f"{prefix}{pattern}/**"]
    hidden = pattern.startswith(".")
    out = []
    for name, is_dir in entries:
        if (name.startswith(".") and not hidden) or not fnmatchcase(name, pattern) or (
                not rel and name in PRIVATE):
            continue
        out.append(f"{prefix}{name}/**" if is_dir else f"{prefix}{name}")
    return out


def _reason(target: str, lease: leases.Lease) -> str:
    holder = str(lease.get("job"))
    return (f"{leases.describe_holder(lease, target)}: another agent is changing it, and this write "
            f"would clash with its work. Leave it to that job, or ask for it (your parent, or a human: "
            f"`zen locks` shows the lease, `zen unlock {holder}` ends it)")


def _note(target: str, lease: leases.Lease) -> str:
    return (f"zen coordinator: {leases.describe_holder(lease, target)}. Your write is allowed, but "
            f"that job is changing the same file: keep your change small and expect a merge "
            f"conflict, or leave {target} to it.")


def check_writes(ctx: Context, call: ToolCall, writes: Sequence[tuple[str, Any]], act: bool
                 ) -> tuple[Decision | None, str | None]:
    home, job = ctx.home, ctx.job_id
    if not home or not job or not ctx.worktree or not writes:
        return None, None
    settings = hook_settings(home)
    if not settings.leases:
        return None, None
    state = read_state(home, job)
    lane = str((state or {}).get("lane") or "")
    if not lane:
        return None, None
    targets = relative_targets(ctx, writes)
    if not targets:
        return None, None
    group = str((state or {}).get("group") or "") or None    # attempts of one prompt share their files
    conflicts, own, shared = leases.blocking(home, lane, job, targets, group)
    if not conflicts and act:
        conflicts = _take(home, lane, job, call, [t for t in targets if t not in own and not leases.is_glob(t)],
                          shared, settings.lock_timeout_s, group)
    if not conflicts:
        return None, None
    target, lease = conflicts[0]
    if act:
        for t, held in conflicts:
            leases.record_event(home, job, E.LOCK_CONFLICT, path=t, holder=str(held.get("job")),
                           resolution=settings.resolution, lease=str(held.get("id")),
                           expires=str(held.get("expires")), tool=call.tool, lane=lane, by="guard")
    if settings.resolution == "deny":
        return Decision(DENY, RULE_DENY, _reason(target, lease)), None
    if settings.resolution == "warn":
        note = " ".join(_note(t, held) for t, held in conflicts[:3])
        return Decision("allow", RULE_WARN, note), note
    return Decision("allow", RULE_LWW, f"{leases.describe_holder(lease, target)}; last write wins"), None


def _take(home: str, lane: str, job: str, call: ToolCall, fresh: list[str], shared: set[str],
          ttl_s: float, group: str | None = None) -> list[tuple[str, leases.Lease]]:
    """The job's first write to each of `fresh`: lease it. A lease another job took in the
    meantime comes back as a conflict."""
    out: list[tuple[str, leases.Lease]] = []
    for t in fresh:
        mode = leases.SHARED if t in shared else leases.EXCLUSIVE
        try:
            leases.acquire(home, lane, job, t, mode=mode, ttl_s=ttl_s, reason=f"first write ({call.tool})",
                           by="guard", group=group)
        except Conflict:
            got, _, _ = leases.blocking(home, lane, job, [t], group)
            out += got
    return out

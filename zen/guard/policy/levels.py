"""The effective autonomy level of a guarded call: the kill switch, then the domain's level.

    level_for(home, job_id=None, cwd=None, autonomy=None) -> (level, domain)

- `<home>/control/KILL` present: "observe" for every domain (one stat on every call, so running
  agents are clamped the moment `zen kill-switch` lands and lifted the moment it is released).
  On a Ray worker's home (`control/remote-switch.json`) the supervisor is asked instead, and an
  unanswered question counts as engaged (zen.guard.policy.remote_switch).
- Otherwise the domain's level from the compiled autonomy settings (policy/autonomy.yaml, as
  `load_policy` returns them: default_level, domains).
- The domain: the job's (`jobs/<id>/state.json` "domain", else the `domain:` line of its
  task.yaml: zen.store.readers.job_domain); with no job, the job whose worktree
  (`<home>/worktrees/<x>`) holds the cwd, else the lane whose checkout holds the cwd (zen.yaml
  `lanes:`, zen.store.readers.read_lanes), else none (the default level).

Lean: runs inside the PreToolUse hook (stdlib and the lean zen.store readers only).
"""

from __future__ import annotations

import os
from typing import Any

from zen.guard.policy import remote_switch  # stdlib socket and json only: the hook stays lean
from zen.guard.policy.load import load_policy
from zen.store import layout
from zen.store.readers import job_domain, read_lanes

__all__ = ["domain_for", "job_domain", "kill_switch_on", "lane_domain", "level_for", "level_of", "read_lanes"]

DEFAULT_LEVEL = "suggest"
LANE_DEFAULT_DOMAIN = "code"


def kill_switch_on(home: str | None) -> bool:
    if not home:
        return False
    if os.path.exists(os.path.join(home, layout.CONTROL, layout.KILL)):
        return True
    if os.path.exists(os.path.join(home, layout.CONTROL, layout.REMOTE_SWITCH)):
        # a Ray worker's home (DESIGN 14): the switch is the supervisor's, asked over the network
        return remote_switch.engaged(home)
    return False


def level_for(home: str | None, job_id: str | None = None, cwd: str | None = None,
              autonomy: dict[str, Any] | None = None) -> tuple[str, str | None]:
    """(effective level, domain) for a call from `job_id` (or, without a job, from `cwd`)."""
    if not home:
        return DEFAULT_LEVEL, None
    domain = domain_for(home, job_id, cwd)
    if kill_switch_on(home):
        return "observe", domain
    if autonomy is None:
        autonomy = load_policy(home)[1]
    return level_of(autonomy, domain), domain


def level_of(autonomy: dict[str, Any], domain: str | None) -> str:
    default = autonomy.get("default_level") or DEFAULT_LEVEL
    if domain is None:
        return str(default)
    return str((autonomy.get("domains") or {}).get(domain, default))


def domain_for(home: str, job_id: str | None, cwd: str | None) -> str | None:
    if job_id:
        return job_domain(home, job_id)
    if cwd:
        wt_root = os.path.join(home, layout.WORKTREES) + os.sep
        for c in {os.path.abspath(cwd), os.path.realpath(cwd)}:
            for root in {wt_root, os.path.realpath(wt_root.rstrip(os.sep)) + os.sep}:
                if c.startswith(root):
                    x = c[len(root):].split(os.sep, 1)[0]
                    if x and os.path.isdir(os.path.join(home, layout.JOBS, x)):
                        return job_domain(home, x)
        return lane_domain(home, cwd)
    return None


def lane_domain(home: str, cwd: str) -> str | None:
    """The domain of the lane whose checkout holds `cwd` (the deepest match), or None."""
    best: tuple[int, str] | None = None
    cands = {os.path.abspath(cwd), os.path.realpath(cwd)}
    for spec in read_lanes(home).values():
        path = spec.get("path")
        if not path:
            continue
        path = os.path.abspath(os.path.expanduser(path))
        for root in {path, os.path.realpath(path)}:
            if any(c == root or c.startswith(root.rstrip(os.sep) + os.sep) for c in cands) and (
                    best is None or len(root) > best[0]):
                best = (len(root), spec.get("domain") or LANE_DEFAULT_DOMAIN)
    return best[1] if best else None

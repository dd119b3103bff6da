"""The effective autonomy level of a guarded call: the kill switch, then the domain's level.

    level_for(home, job_id=None, cwd=None, autonomy=None) -> (level, domain)

- `<home>/control/KILL` present: "observe" for every domain (one stat on every call, so running
  agents are clamped the moment `zen kill-switch` lands and lifted the moment it is released).
- Otherwise the domain's level from the compiled autonomy settings (policy/autonomy.yaml, as
  `load_policy` returns them: default_level, domains).
- The domain: the job's (`jobs/<id>/state.json` "domain", else the `domain:` line of its
  task.yaml); with no job, the job whose worktree (`<home>/worktrees/<x>`) holds the cwd, else
  the lane whose checkout holds the cwd (zen.yaml `lanes:`, read without ruamel), else none
  (the default level).

Lean: runs inside the PreToolUse hook (stdlib only, ruamel only as a fallback for a zen.yaml the
cheap reader cannot follow).
"""

from __future__ import annotations

import json
import os
from typing import Any

DEFAULT_LEVEL = "suggest"
LANE_DEFAULT_DOMAIN = "code"


def kill_switch_on(home: str | None) -> bool:
    if not home:
        return False
    return os.path.exists(os.path.join(home, "control", "KILL"))


def level_for(home: str | None, job_id: str | None = None, cwd: str | None = None,
              autonomy: dict[str, Any] | None = None) -> tuple[str, str | None]:
    """(effective level, domain) for a call from `job_id` (or, without a job, from `cwd`)."""
    if not home:
        return DEFAULT_LEVEL, None
    domain = domain_for(home, job_id, cwd)
    if kill_switch_on(home):
        return "observe", domain
    if autonomy is None:
        from zen.guard.policy import load_policy

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
        wt_root = os.path.join(home, "worktrees") + os.sep
        for c in {os.path.abspath(cwd), os.path.realpath(cwd)}:
            for root in {wt_root, os.path.realpath(wt_root.rstrip(os.sep)) + os.sep}:
                if c.startswith(root):
                    x = c[len(root):].split(os.sep, 1)[0]
                    if x and os.path.isdir(os.path.join(home, "jobs", x)):
                        return job_domain(home, x)
        return lane_domain(home, cwd)
    return None


def job_domain(home: str, job_id: str) -> str | None:
    if not job_id or "/" in job_id or job_id in (".", ".."):
        return None
    d = os.path.join(home, "jobs", job_id)
    try:
        with open(os.path.join(d, "state.json"), "rb") as f:
            state = json.loads(f.read())
        if isinstance(state, dict) and isinstance(state.get("domain"), str) and state["domain"]:
            return str(state["domain"])
    except (OSError, ValueError):
        pass
    try:
        with open(os.path.join(d, "task.yaml"), encoding="utf-8") as f:
            for line in f:
                if line.startswith("domain:"):
                    value = _scalar(line[len("domain:"):])
                    return value or None
    except (OSError, UnicodeDecodeError):
        pass
    return None


def _scalar(text: str) -> str:
    """A plain or quoted YAML scalar on one line, trailing comment removed."""
    text = text.strip()
    if text[:1] in ("'", '"'):
        q = text[0]
        end = text.find(q, 1)
        return text[1:end] if end > 0 else text[1:]
    if " #" in text:
        text = text[: text.index(" #")]
    text = text.strip()
    return "" if text in ("null", "~") else text


def read_lanes(home: str) -> dict[str, dict[str, str]]:
    """zen.yaml `lanes:` as {name: {key: value}} (scalars only), read without ruamel."""
    try:
        with open(os.path.join(home, "zen.yaml"), encoding="utf-8") as f:
            lines = f.read().splitlines()
    except (OSError, UnicodeDecodeError):
        return {}
    lanes: dict[str, dict[str, str]] = {}
    inside = False
    name_indent: int | None = None
    current: dict[str, str] | None = None
    pending: tuple[str, int] | None = None
    for raw in lines:
        stripped = raw.strip()
        if not stripped or stripped.startswith("#"):
            continue
        indent = len(raw) - len(raw.lstrip(" "))
        if indent == 0:
            if inside:
                break
            if raw.startswith("lanes:"):
                rest = _scalar(raw[len("lanes:"):])
                if rest in ("", "{}"):
                    inside = True
                    continue
                return _lanes_ruamel(home)        # flow style: let the real parser read it
            continue
        if not inside:
            continue
        if name_indent is None:
            name_indent = indent
        if indent == name_indent:
            pending = None
            key, sep, _ = stripped.partition(":")
            if not sep:
                return _lanes_ruamel(home)
            current = lanes.setdefault(_scalar(key), {})
        elif current is not None:
            if pending is not None and indent > pending[1]:
                # a long scalar that the writer moved to the next line(s)
                prev = current.get(pending[0], "")
                current[pending[0]] = (prev + " " + _scalar(stripped)).strip()
                continue
            key, sep, value = stripped.partition(":")
            if sep and (not value or value[0] in " \t"):
                current[key.strip()] = _scalar(value)
                pending = (key.strip(), indent) if not value.strip() else None
            else:
                pending = None
    return lanes


def _lanes_ruamel(home: str) -> dict[str, dict[str, str]]:
    try:
        from ruamel.yaml import YAML

        with open(os.path.join(home, "zen.yaml"), encoding="utf-8") as f:
            data = YAML(typ="safe", pure=True).load(f.read())
        lanes = (data or {}).get("lanes") or {}
        return {str(n): {str(k): str(v) for k, v in (s or {}).items()} for n, s in lanes.items()}
    except Exception:
        return {}


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

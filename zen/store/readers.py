"""Lean readers of a home: where it is, its lanes, a job's state.json and domain.

    discover_home(cwd, explicit=None, env=None) -> str | None    (raises HomeError)
    read_lanes(home) -> {name: {key: value}}
    read_state(home, job_id) -> dict | None
    job_domain(home, job_id) -> str | None

The single implementation for everyone: `find_home` (zen.store.home) wraps `discover_home`, the
guardian (hook, `zen guard check`, gates) calls these directly. They run on the guard hook's path
for every agent command, so: stdlib only, strings rather than Path objects, one syscall where one
will do, and ruamel only as the fallback for a zen.yaml the cheap reader cannot follow.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from typing import Any

from zen.errors import HomeError
from zen.store import layout


def is_home(path: str) -> bool:
    return os.path.isfile(os.path.join(path, layout.CONFIG))


def discover_home(cwd: str, explicit: str | None = None, env: Mapping[str, str] | None = None) -> str | None:
    """--home, then $ZEN_HOME, then the nearest ancestor of `cwd` holding zen.yaml; else None."""
    env = os.environ if env is None else env
    for candidate, source in ((explicit, "--home"), (env.get("ZEN_HOME"), "$ZEN_HOME")):
        if candidate:
            path = os.path.abspath(os.path.expanduser(candidate))
            if not is_home(path):
                raise HomeError(f"{source} points at {path}, which is not a zen home (run zen init {path})")
            return path
    here = os.path.abspath(cwd)
    while True:
        if is_home(here):
            return here
        parent = os.path.dirname(here)
        if parent == here:
            return None
        here = parent


def job_dir(home: str, job_id: str) -> str | None:
    """<home>/jobs/<id>, or None for an id that could name something else."""
    if not layout.valid_job_id(job_id):
        return None
    return os.path.join(home, layout.JOBS, job_id)


def read_state(home: str, job_id: str) -> dict[str, Any] | None:
    """The job's state.json as a dict; None when missing or unreadable."""
    d = job_dir(home, job_id)
    if d is None:
        return None
    try:
        with open(os.path.join(d, layout.STATE), "rb") as f:
            state = json.loads(f.read())
    except (OSError, ValueError):
        return None
    return state if isinstance(state, dict) else None


def task_field(home: str, job_id: str, key: str) -> str | None:
    """A top-level scalar of the job's task.yaml, read line by line without a YAML parser."""
    d = job_dir(home, job_id)
    if d is None:
        return None
    prefix = key + ":"
    try:
        with open(os.path.join(d, layout.TASK), encoding="utf-8") as f:
            for line in f:
                if line.startswith(prefix):
                    return scalar(line[len(prefix):]) or None
    except (OSError, UnicodeDecodeError):
        pass
    return None


def job_domain(home: str, job_id: str) -> str | None:
    """The job's domain: state.json's "domain", else the `domain:` line of its task.yaml."""
    state = read_state(home, job_id)
    if state is not None and isinstance(state.get("domain"), str) and state["domain"]:
        return str(state["domain"])
    return task_field(home, job_id, "domain")


def scalar(text: str) -> str:
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
        with open(os.path.join(home, layout.CONFIG), encoding="utf-8") as f:
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
                if scalar(raw[len("lanes:"):]) in ("", "{}"):
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
            current = lanes.setdefault(scalar(key), {})
        elif current is not None:
            if pending is not None and indent > pending[1]:
                # a long scalar that the writer moved to the next line(s)
                prev = current.get(pending[0], "")
                current[pending[0]] = (prev + " " + scalar(stripped)).strip()
                continue
            key, sep, value = stripped.partition(":")
            if sep and (not value or value[0] in " \t"):
                current[key.strip()] = scalar(value)
                pending = (key.strip(), indent)   # a plain scalar may go on, folded, on deeper lines
            else:
                pending = None
    return lanes


def _lanes_ruamel(home: str) -> dict[str, dict[str, str]]:
    try:
        # ruamel only for a zen.yaml the line reader cannot follow: it costs the hook 30 ms
        from ruamel.yaml import YAML

        with open(os.path.join(home, layout.CONFIG), encoding="utf-8") as f:
            data = YAML(typ="safe", pure=True).load(f.read())
        lanes = (data or {}).get("lanes") or {}
        return {str(n): {str(k): str(v) for k, v in (s or {}).items()} for n, s in lanes.items()}
    except Exception:
        return {}


"""Lanes: the repositories agents work on, registered in zen.yaml; and the one place that says
which lane (repository, base ref, setup) a task works on: `resolve_lane`."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from zen.adapters import git_probe as git
from zen.core.ids import NAME_RE
from zen.core.model import Task
from zen.errors import LaneGone, NotFound, ZenError
from zen.store.config import Config, edit_config, lane_path
from zen.store.home import Home


def _yaml_map(spec: Mapping[str, Any]) -> Any:
    """A mapping zen.yaml keeps in place (ruamel's, which keeps comments and order)."""
    from ruamel.yaml.comments import CommentedMap  # 30 ms: zen dispatch imports this module

    return CommentedMap(spec)


def add_lane(home: Home, name: str, path: str, base: str | None, domain: str | None,
             setup: str | None = None, include: list[str] | None = None, *,
             unguarded: str | None = None, unguarded_shell: bool = False,
             extra: dict[str, Any] | None = None) -> dict[str, Any]:
    if not NAME_RE.match(name):
        raise ZenError(f"lane name {name!r} must be lower-case letters, digits and dashes")
    if unguarded is not None and unguarded not in ("sandbox", "accept", "refuse"):
        raise ZenError(f"--unguarded must be sandbox, accept or refuse, not {unguarded!r}")
    repo = Path(path).expanduser().absolute()
    if not repo.exists():
        raise ZenError(f"{repo} does not exist")
    if not git.is_repo(repo):
        raise ZenError(f"{repo} is not a git repository (git init it, or point at a clone)")
    top = git.toplevel(repo) or repo
    base = base or git.current_branch(top) or "main"
    if git.resolve_commit(top, base) is None:
        raise ZenError(f"base {base!r} does not resolve to a commit in {top} (commit something first, or pass --base)")
    spec: dict[str, Any] = {"path": str(top), "base": base, "domain": domain or "code"}
    if setup:
        spec["setup"] = setup
    if include:
        spec["include"] = list(include)
    if unguarded:
        spec["unguarded"] = unguarded       # agents without a pre-execution hook: zen/agents/unguarded.py
    if unguarded_shell:
        spec["unguarded_shell"] = True
    spec.update(extra or {})  # e.g. executor: and remote: (zen.orchestration.remote.lanes)

    def change(cfg: Config) -> None:
        lanes = cfg.data.get("lanes")
        if not lanes:
            lanes = _yaml_map({})
            cfg.data["lanes"] = lanes
        if name in lanes:
            raise ZenError(f"lane {name!r} already exists (zen lane remove {name} first)")
        lanes[name] = _yaml_map(spec)

    edit_config(home, change)
    return {"name": name, **spec}


def remove_lane(home: Home, name: str) -> None:
    def change(cfg: Config) -> None:
        lanes = cfg.data.get("lanes") or {}
        if name not in lanes:
            raise NotFound(f"no lane named {name!r} (zen lane list shows them)")
        del lanes[name]

    edit_config(home, change)


def edit_lane(home: Home, name: str, edit: Callable[[dict[str, Any]], dict[str, Any]]) -> dict[str, Any]:
    """One lane's spec in zen.yaml replaced by `edit(spec)`, under the config's lock; the new spec."""
    result: dict[str, Any] = {}

    def change(cfg: Config) -> None:
        lanes = cfg.data.get("lanes") or {}
        if name not in lanes:
            known = ", ".join(sorted(lanes)) or "none yet"
            raise NotFound(f"no lane named {name!r} (known lanes: {known}; add one with zen lane add)")
        spec = edit(dict(lanes[name]))
        lanes[name] = _yaml_map(spec)
        result.update({"name": name, **spec})

    edit_config(home, change)
    return result


def update_lane(home: Home, name: str, values: Mapping[str, Any]) -> dict[str, Any]:
    """Set (or, with a value of None, remove) keys of one lane's spec in zen.yaml."""
    def edit(spec: dict[str, Any]) -> dict[str, Any]:
        kept = {k: v for k, v in spec.items() if values.get(k, v) is not None}
        return {**kept, **{k: v for k, v in values.items() if v is not None}}

    return edit_lane(home, name, edit)


def list_lanes(cfg: Config) -> list[dict[str, Any]]:
    return [{"name": name, **spec} for name, spec in cfg.lanes.items()]


def get_lane(cfg: Config, name: str) -> dict[str, Any]:
    return cfg.lane(name)


@dataclass(frozen=True)
class Lane:
    """Where a task's work happens: the lane's name, its main checkout, the base ref the
    worktree starts from, and its zen.yaml entry (empty for a task given --repo)."""

    name: str
    repo: Path
    base: str
    spec: Mapping[str, Any] = field(default_factory=dict)

    @property
    def setup(self) -> str | None:
        setup = self.spec.get("setup")
        return str(setup) if setup else None

    @property
    def includes(self) -> list[str]:
        return [str(p) for p in self.spec.get("include") or []]


def resolve_lane(cfg: Config, task: Task) -> Lane:
    """The lane of a task given a lane (from zen.yaml) or a repo (registered on the fly)."""
    if task.lane:
        lanes = cfg.lanes
        if task.lane not in lanes:
            raise LaneGone(f"lane {task.lane!r} is no longer in zen.yaml (zen lane add it again)")
        spec = lanes[task.lane]
        return Lane(task.lane, lane_path(spec), str(task.base or spec.get("base") or "HEAD"), spec)
    repo = Path(str(task.repo)).expanduser()
    return Lane(repo.name, repo, str(task.base or "HEAD"))

"""Lanes: the repositories agents work on, registered in zen.yaml."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from zen.adapters import git_probe as git
from zen.core.ids import NAME_RE
from zen.errors import NotFound, ZenError
from zen.store.config import Config, edit_config
from zen.store.home import Home


def add_lane(home: Home, name: str, path: str, base: str | None, domain: str | None,
             setup: str | None = None, include: list[str] | None = None) -> dict[str, Any]:
    if not NAME_RE.match(name):
        raise ZenError(f"lane name {name!r} must be lower-case letters, digits and dashes")
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

    def change(cfg: Config) -> None:
        from ruamel.yaml.comments import CommentedMap

        lanes = cfg.data.get("lanes")
        if not lanes:
            lanes = CommentedMap()
            cfg.data["lanes"] = lanes
        if name in lanes:
            raise ZenError(f"lane {name!r} already exists (zen lane remove {name} first)")
        lanes[name] = CommentedMap(spec)

    edit_config(home, change)
    return {"name": name, **spec}


def remove_lane(home: Home, name: str) -> None:
    def change(cfg: Config) -> None:
        lanes = cfg.data.get("lanes") or {}
        if name not in lanes:
            raise NotFound(f"no lane named {name!r} (zen lane list shows them)")
        del lanes[name]

    edit_config(home, change)


def list_lanes(cfg: Config) -> list[dict[str, Any]]:
    return [{"name": name, **spec} for name, spec in cfg.lanes.items()]


def get_lane(cfg: Config, name: str) -> dict[str, Any]:
    lanes = cfg.lanes
    if name not in lanes:
        known = ", ".join(sorted(lanes)) or "none yet"
        raise NotFound(f"no lane named {name!r} (known lanes: {known}; add one with zen lane add)")
    return lanes[name]

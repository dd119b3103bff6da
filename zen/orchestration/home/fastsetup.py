"""`zen init --fast` and `zen config fast-setup` (DESIGN 13): the recommended preset written into
zen.yaml in one save. Only fields that are missing are filled (what a user set stays as it is,
comments included), and the preset holds nothing that widens what agents may do: every value is
zen's default or stricter (leases on and enforced, workers capped, recovery manual, Claude Code in
acceptEdits, Codex asking for approval inside its workspace sandbox).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from ruamel.yaml.comments import CommentedMap  # the document's own mapping type keeps comments

from zen.errors import ZenError
from zen.store.config import Config, edit_config
from zen.store.home import Home

PRESET: dict[str, Any] = {
    "defaults": {"priority": 3, "timeout": "30m", "domain": "code"},
    "supervisor": {"max_concurrent_tasks": 5, "max_queue_size": 100, "tick": "0.25s", "idle_after": "2s",
                   "kill_grace": "5s", "auto_cleanup": False},
    "retry": {"max_retries": 0, "backoff_base": "5s", "backoff_factor": 2, "backoff_cap": "5m"},
    "breaker": {"window": "10m", "max_automatic": 20, "hold": "15m",
                "limits": {"spawn": 20, "continuation": 60, "recovery": 5, "worker_turn": 120}},
    "coordinator": {"leases": True, "lock_timeout": "5m", "conflict_resolution": "deny", "scan_interval": "3s"},
    "teams": {"max_active_workers": 4, "max_depth": 2, "wait_max": "10m", "goal_blocked_turns": 3,
              "goal_blocked_span": "60s", "goal_max_turns": 200, "recovery": "manual"},
    "notify": {"desktop": True, "ended": True},
    "observatory": {"history_retention": "7d"},
    "agents": {"claude": {"command": "claude", "permission_mode": "acceptEdits"},
               "codex": {"command": "codex", "approval": "on-request", "sandbox": "workspace-write"}},
}


def leaves(tree: Mapping[str, Any], prefix: tuple[str, ...] = ()) -> Iterator[tuple[tuple[str, ...], Any]]:
    for key, value in tree.items():
        if isinstance(value, Mapping):
            yield from leaves(value, (*prefix, key))
        else:
            yield (*prefix, key), value


def missing(data: Any, path: tuple[str, ...]) -> bool:
    node = data
    for key in path:
        if not hasattr(node, "get") or key not in node:
            return True
        node = node[key]
    return False


def fast_setup(home: Home) -> list[str]:
    """Fill the preset's missing fields in zen.yaml (one atomic save); the dotted names filled."""
    if not any(missing(Config.load(home).data, path) for path, _ in leaves(PRESET)):
        return []
    filled: list[str] = []

    def change(cfg: Config) -> None:
        for path, value in leaves(PRESET):
            if not missing(cfg.data, path):
                continue
            node = cfg.data
            for depth, key in enumerate(path[:-1], start=1):
                if node.get(key) is None:
                    node[key] = CommentedMap()
                node = node[key]
                if not hasattr(node, "get"):   # e.g. `teams: 5`: nothing is saved
                    raise ZenError(f"zen.yaml {'.'.join(path[:depth])} is {node!r}, not a section of "
                                   "settings: fix or remove it, then run fast-setup again")
            node[path[-1]] = value
            filled.append(".".join(path))

    edit_config(home, change)
    return filled

"""Claude Code's workspace trust, kept in ~/.claude.json projects[<repo>].hasTrustDialogAccepted.

Trust of a repository's main checkout covers its linked worktrees (reference/real-claude-code.md),
so trusting a lane once lets every job's Claude start without the "Quick safety check" dialog.
zen writes this file only when the user asks (`zen lane trust NAME`), atomically, keeping every
other key as it was.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from zen.errors import ZenError
from zen.store.atomic import atomic_write, flocked


def claude_json(home_dir: Path | None = None) -> Path:
    return (home_dir or Path(os.path.expanduser("~"))) / ".claude.json"


def repo_key(repo: Path) -> str:
    """How an agent's trust file names a folder: its absolute, resolved path."""
    return str(Path(repo).expanduser().resolve())


def load_object(path: Path, fix: str = "fix it (or let Claude Code rewrite it)") -> dict[str, Any]:
    """An agent's JSON settings file as an object ({} when absent or empty); ZenError when it is
    not one, so zen never overwrites a file it could not read."""
    try:
        text = path.read_text()
    except FileNotFoundError:
        return {}
    if not text.strip():
        return {}
    try:
        data = json.loads(text)
    except ValueError:
        raise ZenError(f"{path} is not valid JSON; {fix} and retry") from None
    if not isinstance(data, dict):
        raise ZenError(f"{path} does not hold a JSON object; zen will not overwrite it")
    return data


def is_trusted(repo: Path, home_dir: Path | None = None) -> bool:
    try:
        data = load_object(claude_json(home_dir))
    except ZenError:
        return False
    entry = (data.get("projects") or {}).get(repo_key(repo)) or {}
    return bool(isinstance(entry, dict) and entry.get("hasTrustDialogAccepted"))


def trust(repo: Path, home_dir: Path | None = None) -> bool:
    """Record that Claude Code may trust `repo`. Returns False when it already was trusted."""
    path = claude_json(home_dir)
    path.parent.mkdir(parents=True, exist_ok=True)
    with flocked(path.parent / ".claude.json.zen-lock"):
        data = load_object(path)
        projects = data.setdefault("projects", {})
        if not isinstance(projects, dict):
            raise ZenError(f"{path} has a 'projects' entry that is not an object; zen will not overwrite it")
        entry = projects.setdefault(repo_key(repo), {})
        if entry.get("hasTrustDialogAccepted") is True:
            return False
        entry["hasTrustDialogAccepted"] = True
        mode = path.stat().st_mode & 0o777 if path.exists() else 0o600
        atomic_write(path, json.dumps(data, indent=2) + "\n", mode=mode)
    return True


def trust_note(repo: Path, lane: str | None = None, home_dir: Path | None = None) -> str | None:
    """One sentence when Claude Code does not trust `repo` yet, else None."""
    if is_trusted(repo, home_dir):
        return None
    name = lane or "NAME"
    return (f"note: Claude Code does not trust {repo_key(repo)} yet, so a claude job would stop at its "
            f"trust dialog; run `zen lane trust {name}` to trust it (its worktrees are covered too)")

"""Gemini CLI's folder trust, kept in ~/.gemini/trustedFolders.json as {"<path>": "TRUST_FOLDER"}.

A job's worktree lies outside its lane's checkout, so Gemini would not see it as trusted by the
repository's entry; instead zen starts Gemini with `--skip-trust` for a lane trusted here (by
`zen lane trust`), and without it (so Gemini's own trust screen shows, and nothing runs until a
human answers it) for any other. zen writes this file only when the user asks, atomically,
keeping every other entry as it was.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from zen.agents.claude_trust import load_object, repo_key
from zen.errors import ZenError
from zen.store.atomic import atomic_write, flocked

TRUST_FOLDER = "TRUST_FOLDER"
TRUST_PARENT = "TRUST_PARENT"


def gemini_dir(home_dir: Path | None = None) -> Path:
    """The user's Gemini CLI settings folder (`$GEMINI_CLI_HOME/.gemini`, else ~/.gemini)."""
    if home_dir is None and os.environ.get("GEMINI_CLI_HOME"):
        return Path(os.environ["GEMINI_CLI_HOME"]).expanduser() / ".gemini"
    return (home_dir or Path(os.path.expanduser("~"))) / ".gemini"


def trusted_folders(home_dir: Path | None = None) -> Path:
    if home_dir is None and os.environ.get("GEMINI_CLI_TRUSTED_FOLDERS_PATH"):
        return Path(os.environ["GEMINI_CLI_TRUSTED_FOLDERS_PATH"]).expanduser()
    return gemini_dir(home_dir) / "trustedFolders.json"


def is_trusted(repo: Path, home_dir: Path | None = None) -> bool:
    """Whether Gemini trusts `repo`: its own entry, an ancestor's TRUST_FOLDER, or a child's
    TRUST_PARENT."""
    try:
        data = load_object(trusted_folders(home_dir))
    except ZenError:
        return False
    key = Path(repo_key(repo))
    for path, level in data.items():
        p = Path(path)
        if level == TRUST_FOLDER and (p == key or p in key.parents):
            return True
        if level == TRUST_PARENT and (p.parent == key or p.parent in key.parents):
            return True
    return False


def trust(repo: Path, home_dir: Path | None = None) -> bool:
    """Record that Gemini CLI may trust `repo`. Returns False when it already was trusted."""
    if is_trusted(repo, home_dir):
        return False
    path = trusted_folders(home_dir)
    path.parent.mkdir(parents=True, exist_ok=True)
    with flocked(path.parent / ".trustedFolders.json.zen-lock"):
        data = load_object(path, "fix it")
        data[repo_key(repo)] = TRUST_FOLDER
        mode = path.stat().st_mode & 0o777 if path.exists() else 0o600
        atomic_write(path, json.dumps(data, indent=2) + "\n", mode=mode)
    return True

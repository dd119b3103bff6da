"""The home: where it is, and how a new one is laid out (DESIGN sections 1 and 2).

The names of its parts are in zen.store.layout (`Home` is defined there and re-exported here);
finding it is zen.store.readers.discover_home, which the guardian uses too.
"""

from __future__ import annotations

import contextlib
from pathlib import Path

from zen.errors import NoHome, ZenError
from zen.store import defaults, layout
from zen.store.atomic import create_exclusive
from zen.store.config import DEFAULT_CONFIG, Config
from zen.store.layout import CONFIG, SUBDIRS, Home
from zen.store.readers import discover_home

# The home itself ("") and the folders that hold its secrets and records are the user's alone:
# 0700 at zen init, and zen doctor warns when other users can read or traverse one.
PRIVATE_DIRS = ("", layout.CONTROL, layout.LOGS, layout.JOBS)

# zen's runtime state, kept out of git when a user versions the home (policy and incidents stay)
GITIGNORE = ("# zen's runtime state; policy/ and incidents/ are worth keeping in git\n"
             + "".join(f"{d}/\n" for d in (layout.JOBS, layout.SPOOL, layout.WORKTREES, layout.CONTROL,
                                           layout.LOGS, layout.APPROVALS)))

__all__ = ["Home", "find_home", "init_home", "make_private"]


def find_home(explicit: str | Path | None = None, cwd: Path | None = None) -> Home:
    """--home, then $ZEN_HOME, then the nearest ancestor of the cwd holding zen.yaml."""
    root = discover_home(str(cwd or Path.cwd()), str(explicit) if explicit else None)
    if root is None:
        raise NoHome("no zen home here or above (run zen init DIR, then set ZEN_HOME or cd into it)")
    return Home(Path(root))


def init_home(root: Path) -> tuple[Home, list[str]]:
    """Create the layout; copy the default policy and seed incidents; never overwrite. Returns what
    was created. A home that cannot be filled (zen's package lacks a default, a file cannot be
    written) is a ZenError, raised before the layout is made when the defaults are missing."""
    home, created, _ = init_home_report(root)
    return home, created


def init_home_report(root: Path) -> tuple[Home, list[str], list[str]]:
    """init_home, and the private folders whose mode it tightened (see PRIVATE_DIRS)."""
    root = root.expanduser().absolute()
    files = defaults.home_files()     # first: a broken install makes no half a home
    created: list[str] = []
    if root.exists() and not root.is_dir():
        raise NoHome(f"{root} exists and is not a directory")
    root.mkdir(parents=True, exist_ok=True, mode=0o700)
    for sub in SUBDIRS:
        path = root / sub
        if not path.is_dir():
            path.mkdir(parents=True, exist_ok=True, mode=0o700)
            created.append(sub + "/")
    home = Home(root)
    tightened = make_private(home)
    if not home.config_path.exists() and create_exclusive(home.config_path, DEFAULT_CONFIG):
        created.append(CONFIG)
    with contextlib.suppress(ZenError):  # a broken zen.yaml is reported by the commands that read it
        Config.load(home, keep=True)      # its parse, for the read commands (zen.store.config)
    for rel, data in files.items():
        dst = root / rel
        try:
            if not dst.exists() and create_exclusive(dst, data):
                created.append(rel)
        except OSError as exc:
            raise ZenError(f"zen init could not write {dst} ({exc.strerror or exc}), so the home is "
                           "not complete: fix that and run zen init again") from None
        if not dst.is_file():
            raise ZenError(f"zen init could not fill {dst} (something else is there), so the home is "
                           "not complete: move it away and run zen init again")
    gitignore = root / ".gitignore"
    if not gitignore.exists():
        gitignore.write_text(GITIGNORE)
    return home, created, tightened


def make_private(home: Home) -> list[str]:
    """chmod 0700 each of PRIVATE_DIRS that other users could read, write or traverse; returns
    those changed (as paths inside the home, "." for the home itself)."""
    changed = []
    for rel in PRIVATE_DIRS:
        path = home.root / rel if rel else home.root
        try:
            if path.stat().st_mode & 0o077:
                path.chmod(0o700)
                changed.append(rel or ".")
        except FileNotFoundError:
            continue
    return changed

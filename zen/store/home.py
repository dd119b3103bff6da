"""The home: where it is, and how a new one is laid out (DESIGN sections 1 and 2).

The names of its parts are in zen.store.layout (`Home` is defined there and re-exported here);
finding it is zen.store.readers.discover_home, which the guardian uses too.
"""

from __future__ import annotations

import contextlib
from pathlib import Path

from zen.errors import NoHome, ZenError
from zen.store import layout
from zen.store.atomic import create_exclusive
from zen.store.config import DEFAULT_CONFIG, Config
from zen.store.layout import CONFIG, SUBDIRS, Home
from zen.store.readers import discover_home

# The checkout zen runs from ships the default policy and example incidents at its top level.
SOURCE_ROOT = Path(__file__).resolve().parents[2]
DEFAULT_POLICY_DIR = SOURCE_ROOT / layout.POLICY
DEFAULT_INCIDENTS_DIR = SOURCE_ROOT / layout.INCIDENTS

# zen's runtime state, kept out of git when a user versions the home (policy and incidents stay)
GITIGNORE = ("# zen's runtime state; policy/ and incidents/ are worth keeping in git\n"
             + "".join(f"{d}/\n" for d in (layout.JOBS, layout.SPOOL, layout.WORKTREES, layout.CONTROL,
                                           layout.LOGS, layout.APPROVALS)))

__all__ = ["Home", "copy_default", "find_home", "init_home"]


def find_home(explicit: str | Path | None = None, cwd: Path | None = None) -> Home:
    """--home, then $ZEN_HOME, then the nearest ancestor of the cwd holding zen.yaml."""
    root = discover_home(str(cwd or Path.cwd()), str(explicit) if explicit else None)
    if root is None:
        raise NoHome("no zen home here or above (run zen init DIR, then set ZEN_HOME or cd into it)")
    return Home(Path(root))


def init_home(root: Path) -> tuple[Home, list[str]]:
    """Create the layout; copy default policy and incidents; never overwrite. Returns what was created."""
    root = root.expanduser().absolute()
    created: list[str] = []
    if root.exists() and not root.is_dir():
        raise NoHome(f"{root} exists and is not a directory")
    root.mkdir(parents=True, exist_ok=True)
    for sub in SUBDIRS:
        path = root / sub
        if not path.is_dir():
            path.mkdir(parents=True, exist_ok=True)
            created.append(sub + "/")
    home = Home(root)
    if not home.config_path.exists() and create_exclusive(home.config_path, DEFAULT_CONFIG):
        created.append(CONFIG)
    with contextlib.suppress(ZenError):  # a broken zen.yaml is reported by the commands that read it
        Config.load(home, keep=True)      # its parse, for the read commands (zen.store.config)
    for src_dir, dst_dir in ((DEFAULT_POLICY_DIR, home.policy), (DEFAULT_INCIDENTS_DIR, home.incidents)):
        if not src_dir.is_dir():
            continue
        for src in sorted(src_dir.glob("*.yaml")):
            dst = dst_dir / src.name
            if not dst.exists() and create_exclusive(dst, src.read_bytes()):
                created.append(str(dst.relative_to(root)))
    gitignore = root / ".gitignore"
    if not gitignore.exists():
        gitignore.write_text(GITIGNORE)
    return home, created


def copy_default(name: str, dst: Path) -> None:
    import shutil  # here: every command finds its home through this module; only this copy needs shutil

    shutil.copyfile(DEFAULT_POLICY_DIR / name, dst)

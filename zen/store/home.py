"""The home: where it is, what is in it, and how a new one is laid out (DESIGN sections 1 and 2)."""

from __future__ import annotations

import hashlib
import os
import shutil
from pathlib import Path

from zen.errors import NoHome

CONFIG_NAME = "zen.yaml"
SUBDIRS = (
    "policy",
    "incidents",
    "jobs",
    "spool/tmp",
    "spool/new",
    "spool/cur",
    "worktrees",
    "control",
    "approvals/pending",
    "approvals/granted",
    "approvals/denied",
    "evidence",
    "logs",
)

# The checkout zen runs from ships the default policy and example incidents at its top level.
SOURCE_ROOT = Path(__file__).resolve().parents[2]
DEFAULT_POLICY_DIR = SOURCE_ROOT / "policy"
DEFAULT_INCIDENTS_DIR = SOURCE_ROOT / "incidents"


class Home:
    """A zen home directory. A plain class: the guard hook imports this module, and dataclasses
    would bring inspect with it."""

    __slots__ = ("root",)

    def __init__(self, root: Path) -> None:
        object.__setattr__(self, "root", Path(root))

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError("Home is immutable")

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Home) and other.root == self.root

    def __hash__(self) -> int:
        return hash(self.root)

    def __repr__(self) -> str:
        return f"Home(root={self.root!r})"

    root: Path

    @property
    def config_path(self) -> Path:
        return self.root / CONFIG_NAME

    @property
    def jobs(self) -> Path:
        return self.root / "jobs"

    @property
    def spool(self) -> Path:
        return self.root / "spool"

    @property
    def worktrees(self) -> Path:
        return self.root / "worktrees"

    @property
    def control(self) -> Path:
        return self.root / "control"

    @property
    def policy(self) -> Path:
        return self.root / "policy"

    @property
    def incidents(self) -> Path:
        return self.root / "incidents"

    @property
    def approvals(self) -> Path:
        return self.root / "approvals"

    @property
    def evidence(self) -> Path:
        return self.root / "evidence"

    @property
    def logs(self) -> Path:
        return self.root / "logs"

    @property
    def kill_file(self) -> Path:
        return self.control / "KILL"

    @property
    def supervisor_lock(self) -> Path:
        return self.control / "supervisor.lock"

    @property
    def tmux_socket(self) -> str:
        """zen's private tmux server for this home: never the user's default server."""
        digest = hashlib.sha1(str(self.root).encode()).hexdigest()[:10]
        return f"zen-{digest}"

    def job_dir(self, job_id: str) -> Path:
        return self.jobs / job_id

    def worktree(self, job_id: str) -> Path:
        return self.worktrees / job_id


def _is_home(path: Path) -> bool:
    return (path / CONFIG_NAME).is_file()


def find_home(explicit: str | Path | None = None, cwd: Path | None = None) -> Home:
    """--home, then $ZEN_HOME, then the nearest ancestor of the cwd holding zen.yaml."""
    for candidate, source in ((explicit, "--home"), (os.environ.get("ZEN_HOME"), "$ZEN_HOME")):
        if candidate:
            path = Path(candidate).expanduser().absolute()
            if not _is_home(path):
                raise NoHome(f"{source} points at {path}, which is not a zen home (run zen init {path})")
            return Home(path)
    here = (cwd or Path.cwd()).absolute()
    for path in (here, *here.parents):
        if _is_home(path):
            return Home(path)
    raise NoHome("no zen home here or above (run zen init DIR, then set ZEN_HOME or cd into it)")


def init_home(root: Path) -> tuple[Home, list[str]]:
    """Create the layout; copy default policy and incidents; never overwrite. Returns what was created."""
    from zen.store.config import DEFAULT_CONFIG

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
    if not home.config_path.exists():
        from zen.store.atomic import create_exclusive

        if create_exclusive(home.config_path, DEFAULT_CONFIG):
            created.append(CONFIG_NAME)
    for src_dir, dst_dir in ((DEFAULT_POLICY_DIR, home.policy), (DEFAULT_INCIDENTS_DIR, home.incidents)):
        if not src_dir.is_dir():
            continue
        for src in sorted(src_dir.glob("*.yaml")):
            dst = dst_dir / src.name
            if not dst.exists():
                from zen.store.atomic import create_exclusive

                if create_exclusive(dst, src.read_bytes()):
                    created.append(str(dst.relative_to(root)))
    gitignore = root / ".gitignore"
    if not gitignore.exists():
        gitignore.write_text("# zen's runtime state; policy/ and incidents/ are worth keeping in git\n"
                             "jobs/\nspool/\nworktrees/\ncontrol/\nlogs/\napprovals/\n")
    return home, created


def copy_default(name: str, dst: Path) -> None:
    shutil.copyfile(DEFAULT_POLICY_DIR / name, dst)

"""Small, fast git queries through the git binary, for paths that must not import GitPython
(`zen dispatch`, `zen lane add`, the guard hook). The supervisor's git work lives in git.py."""

from __future__ import annotations

import subprocess
from pathlib import Path


def run(repo: Path, *args: str, check: bool = False) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["git", "-C", str(repo), *args],
        capture_output=True,
        text=True,
        check=check,
        env=_env(),
    )


def _env() -> dict[str, str]:
    import os

    env = dict(os.environ)
    env.setdefault("GIT_TERMINAL_PROMPT", "0")
    return env


def is_repo(path: Path) -> bool:
    if not path.is_dir():
        return False
    r = run(path, "rev-parse", "--git-dir")
    return r.returncode == 0


def toplevel(path: Path) -> Path | None:
    r = run(path, "rev-parse", "--show-toplevel")
    return Path(r.stdout.strip()) if r.returncode == 0 else None


def resolve_commit(repo: Path, ref: str) -> str | None:
    r = run(repo, "rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}")
    return r.stdout.strip() if r.returncode == 0 and r.stdout.strip() else None


def current_branch(repo: Path) -> str | None:
    r = run(repo, "symbolic-ref", "--quiet", "--short", "HEAD")
    return r.stdout.strip() if r.returncode == 0 else None

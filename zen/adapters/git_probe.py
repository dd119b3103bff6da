"""Quick questions about a repository for commands that must start fast (`zen dispatch`,
`zen lane add`, preflight): is it one, where is its top, which branch, does a ref resolve.

The git binary answers each in one process. GitPython (zen/adapters/git.py, everything else)
costs about 40 ms to import, a quarter of what `zen dispatch` takes in all, so these paths never
import it (tests/test_dispatch.py checks).
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from zen.errors import GitError

# Inherited from a git hook, these would point every command at another repository or index.
INHERITED_GIT_VARS = ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_COMMON_DIR",
                      "GIT_OBJECT_DIRECTORY")


# Every git zen runs runs no repository hook and no fsmonitor (issue 31, finding C1): a hook planted in
# a lane's .git would otherwise run inside the supervisor at its next `git worktree add`, harvest or
# land. Given as command-line configuration (GIT_CONFIG_COUNT), which outranks every config file.
SAFE_CONFIG = (("core.hooksPath", "/dev/null"), ("core.fsmonitor", "false"))


def safe_config(env: dict[str, str] | None = None) -> dict[str, str]:
    """The GIT_CONFIG_* variables that add SAFE_CONFIG after any the environment `env` (default:
    os.environ) already gives, so they win."""
    base = os.environ if env is None else env
    try:
        n = int(base.get("GIT_CONFIG_COUNT") or 0)
    except ValueError:
        n = 0
    out = {"GIT_CONFIG_COUNT": str(n + len(SAFE_CONFIG))}
    for i, (key, value) in enumerate(SAFE_CONFIG, start=n):
        out[f"GIT_CONFIG_KEY_{i}"] = key
        out[f"GIT_CONFIG_VALUE_{i}"] = value
    return out


def _git(path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in INHERITED_GIT_VARS}
    env["GIT_TERMINAL_PROMPT"] = "0"
    env.update(safe_config(env))
    try:
        return subprocess.run(["git", "-C", str(path), *args], capture_output=True, text=True,
                              env=env, stdin=subprocess.DEVNULL)
    except FileNotFoundError:
        raise GitError("git is not installed or not on PATH (install git, then retry)") from None


def is_repo(path: Path) -> bool:
    return path.is_dir() and _git(path, "rev-parse", "--git-dir").returncode == 0


def toplevel(path: Path) -> Path | None:
    r = _git(path, "rev-parse", "--show-toplevel")
    return Path(r.stdout.strip()) if r.returncode == 0 else None


def resolve_commit(repo: Path, ref: str) -> str | None:
    """The commit `ref` names, or None."""
    r = _git(repo, "rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}")
    return r.stdout.strip() if r.returncode == 0 and r.stdout.strip() else None


def current_branch(repo: Path) -> str | None:
    r = _git(repo, "symbolic-ref", "--quiet", "--short", "HEAD")
    return r.stdout.strip() if r.returncode == 0 else None


def common_dir(path: Path) -> Path | None:
    """The git directory a worktree shares with its main checkout (`<repo>/.git`), or None. Read
    from the worktree's `.git` pointer and its git dir's `commondir` (no process: it is asked at
    every start), else asked of git."""
    if (path / ".git" / "HEAD").is_file():     # a main checkout: its own .git
        return (path / ".git").resolve()
    try:
        pointer = (path / ".git").read_text().strip()
        if pointer.startswith("gitdir: "):
            gitdir = (path / pointer[len("gitdir: "):]).resolve()
            found = (gitdir / (gitdir / "commondir").read_text().strip()).resolve()
            if (found / "HEAD").is_file():
                return found
    except (OSError, ValueError):
        pass
    r = _git(path, "rev-parse", "--path-format=absolute", "--git-common-dir")
    return Path(r.stdout.strip()) if r.returncode == 0 and r.stdout.strip() else None

"""A job's worktree made in the background while the rest of a start goes on (the preflight,
the handoff): `start_worktree` begins `git worktree add`, `finish` waits for it and gives what
zen.adapters.git.add_worktree gives, `abandon` takes back what nobody used."""

from __future__ import annotations

import os
import subprocess
from contextlib import suppress
from pathlib import Path

from zen.adapters.git import ZEN_PATHS, add_worktree, make_private_dir, out, rev
from zen.adapters.git_probe import safe_config
from zen.errors import GitError
from zen.store.layout import user_umask


class PendingWorktree:
    """A job's worktree being made by `git worktree add` in the background (start_worktree), so
    the supervisor does the rest of a start (preflight, the handoff) while git checks files out.

    `base_commit` is known at once when the base resolves in-process. `finish()` waits and returns
    what add_worktree would (and raises what it would: a failed background add is redone by
    add_worktree itself, which gives git's own reason or repairs a branch left without its
    worktree); `abandon()` waits and takes back a worktree and branch this start made and nothing
    has used yet (a preflight that failed meanwhile), so a failed start leaves nothing behind.
    """

    def __init__(self, repo_path: Path, path: Path, branch: str, base: str, base_commit: str | None,
                 proc: subprocess.Popen[bytes] | None) -> None:
        self.repo_path, self.path, self.branch, self.base = repo_path, path, branch, base
        self.base_commit = base_commit
        self._proc = proc

    def _wait(self) -> int | None:
        if self._proc is None:
            return None
        proc, self._proc = self._proc, None
        proc.communicate()
        return proc.returncode

    def finish(self) -> str:
        if self._wait() != 0 or self.base_commit is None:
            return add_worktree(self.repo_path, self.path, self.branch, self.base)
        for name in ZEN_PATHS:
            make_private_dir(self.path, name)
        return self.base_commit

    def abandon(self) -> None:
        if self._wait() != 0:
            return
        with suppress(GitError):
            out(self.repo_path, "worktree", "remove", "--force", str(self.path))
        if rev(self.repo_path, f"refs/heads/{self.branch}") == self.base_commit:   # nothing on it
            with suppress(GitError):
                out(self.repo_path, "branch", "-D", self.branch)


def start_worktree(repo_path: Path, path: Path, branch: str, base: str) -> PendingWorktree:
    """Begin add_worktree's work in the background when it is the plain case (the base is a
    commit, nothing is at `path`); otherwise (or on any doubt) leave it all to finish(), which
    then runs add_worktree itself, with its checks and its sentences. Never raises."""
    try:
        base_commit = rev(repo_path, base)
    except GitError:
        return PendingWorktree(repo_path, path, branch, base, None, None)
    if base_commit is None or os.path.lexists(path):
        return PendingWorktree(repo_path, path, branch, base, base_commit, None)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        proc = subprocess.Popen(["git", "-C", str(repo_path), "worktree", "add", "--quiet", "-b", branch, str(path),
                                 base_commit], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                stderr=subprocess.PIPE, env={**os.environ, "GIT_TERMINAL_PROMPT": "0", **safe_config()},
                                umask=user_umask())  # the checkout is the user's work, not zen's record
    except OSError:
        proc = None
    return PendingWorktree(repo_path, path, branch, base, base_commit, proc)

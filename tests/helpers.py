"""Test helpers shared by every suite: polling with a deadline, running the real CLI, git."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

T = TypeVar("T")

REPO_ROOT = Path(__file__).resolve().parents[1]
ZEN = [sys.executable, "-m", "zen"]


def wait_until(predicate: Callable[[], T], timeout: float = 10.0, interval: float = 0.05,
               message: str = "condition") -> T:
    """Poll `predicate` until it returns something truthy; fail with `message` at the deadline."""
    deadline = time.monotonic() + timeout
    last: Any = None
    while True:
        try:
            last = predicate()
        except AssertionError as exc:  # predicates may assert to explain themselves
            last = exc
        else:
            if last:
                return last
        if time.monotonic() >= deadline:
            raise AssertionError(f"timed out after {timeout}s waiting for {message} (last: {last!r})")
        time.sleep(interval)


def zen(*args: str, input: str | None = None, env: dict[str, str] | None = None,
        cwd: Path | None = None, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    """Run the real `zen` CLI in a subprocess."""
    return subprocess.run(
        [*ZEN, *args], input=input, capture_output=True, text=True,
        env={**os.environ, **(env or {})}, cwd=cwd, timeout=timeout,
    )


def zen_json(*args: str, **kw: Any) -> Any:
    r = zen(*args, "--json", **kw)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def git(repo: Path, *args: str) -> str:
    r = subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True)
    assert r.returncode == 0, f"git {' '.join(args)}: {r.stderr}"
    return r.stdout.strip()


def make_repo(path: Path, files: dict[str, str] | None = None, branch: str = "main") -> Path:
    path.mkdir(parents=True, exist_ok=True)
    subprocess.run(["git", "init", "-q", "-b", branch, str(path)], check=True)
    for name, text in (files or {"README.md": "# sample\n", "src/app.py": "print('hello')\n"}).items():
        f = path / name
        f.parent.mkdir(parents=True, exist_ok=True)
        f.write_text(text)
    git(path, "add", "-A")
    git(path, "commit", "-q", "-m", "initial commit")
    (path / "CHANGELOG.md").write_text("- started\n")
    git(path, "add", "-A")
    git(path, "commit", "-q", "-m", "add changelog")
    return path


def tune(home: Path, **changes: str) -> None:
    """Edit zen.yaml's text: each key (exactly as it is written there) replaced by its value."""
    cfg = home / "zen.yaml"
    text = cfg.read_text()
    for old, new in changes.items():
        assert old in text, old
        text = text.replace(old, new)
    cfg.write_text(text)


def one_line(text: str) -> bool:
    """An error a user can read: exactly one non-empty line, no traceback."""
    lines = [ln for ln in text.splitlines() if ln.strip()]
    return len(lines) == 1 and "Traceback" not in text

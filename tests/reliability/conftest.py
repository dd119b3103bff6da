"""Fixtures of the reliability tests: a home on a small filesystem of its own (a tmpfs, so it can
be filled up or made read-only without touching the machine's disks)."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.helpers import zen


class SmallFs:
    """A 2 MiB tmpfs mounted at `root`: fill() takes every free byte, free() gives them back."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.filler = root / "filler"

    def fill(self) -> None:
        # unbuffered: a buffered file would keep what the disk refused and fail again on close
        with self.filler.open("ab", buffering=0) as f:
            try:
                while True:
                    f.write(b"\0" * 65536)
            except OSError:
                pass
        # the last pages of files already open may still take a few bytes: take those too
        n = 0
        while True:
            try:
                with (self.root / f"filler-{n}").open("wb", buffering=0) as f:
                    if f.write(b"\0" * 4096) != 4096:
                        break   # the last bytes went in part: nothing is left
                n += 1
            except OSError:
                break

    def free(self) -> None:
        for p in self.root.glob("filler*"):
            p.unlink()

    def remount(self, mode: str) -> None:
        subprocess.run(["mount", "-o", f"remount,{mode}", str(self.root)], check=True, capture_output=True)


@pytest.fixture
def small_fs(tmp_path: Path) -> Iterator[SmallFs]:
    root = tmp_path / "fs"
    root.mkdir()
    if os.geteuid() != 0:
        pytest.skip("a small tmpfs needs root to mount (CI runs the suite as root)")
    r = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=2m", "tmpfs", str(root)], capture_output=True, text=True)
    if r.returncode != 0:
        pytest.skip(f"mount -t tmpfs is not permitted here: {r.stderr.strip()}")
    try:
        yield SmallFs(root)
    finally:
        subprocess.run(["umount", "-l", str(root)], capture_output=True)


@pytest.fixture
def fs_home(small_fs: SmallFs, git_repo: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A zen home on the small filesystem with lane 'app' (the repository stays on the real disk);
    preflight's free-space floor lowered so agents may start on it."""
    root = small_fs.root / "zh"
    assert zen("init", str(root)).returncode == 0
    monkeypatch.setenv("ZEN_HOME", str(root))
    assert zen("lane", "add", "app", str(git_repo)).returncode == 0
    cfg = root / "zen.yaml"
    text = cfg.read_text()
    for old, new in {"min_free_disk: 512MiB": "min_free_disk: 0", "tick: 0.25s": "tick: 0.05s",
                     "idle_after: 2s": "idle_after: 0.5s", "kill_grace: 5s": "kill_grace: 1s"}.items():
        assert old in text
        text = text.replace(old, new)
    cfg.write_text(text)
    return root

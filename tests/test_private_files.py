"""A home's records are the user's alone (security findings C4, L16): no login link in any file,
no file or folder of zen's that another local user can read; an agent's own work keeps the
user's umask."""

from __future__ import annotations

import os
import re
import signal
import stat
import subprocess
import sys
from pathlib import Path

from tests.helpers import REPO_ROOT, wait_until, zen
from tests.supervisor.conftest import Supervisors, sups, zh
from tests.supervisor.util import dispatch_sim, wait_state

__all__ = ["sups", "zh"]


def readable_by_others(root: Path, skip: Path | None = None) -> list[str]:
    """Every file and folder under `root` (not `root` itself, nor `skip`'s inside) with a group
    or other read bit: what `find root -perm /o+r,g+r` lists."""
    found = []
    for dirpath, dirnames, filenames in os.walk(root):
        for name in [*dirnames, *filenames]:
            p = Path(dirpath) / name
            if skip is not None and p.is_relative_to(skip) and p != skip:
                continue
            st = os.lstat(p)
            if stat.S_ISLNK(st.st_mode):
                continue
            if st.st_mode & 0o044:
                found.append(f"{p.relative_to(root)} {stat.S_IMODE(st.st_mode):04o}")
    return sorted(found)


def test_no_login_url_in_any_file_after_serve_detach(zh: Path) -> None:
    r = zen("serve", "--detach", "--port", "0")
    try:
        assert r.returncode == 0, r.stderr
        assert "token=" in r.stdout  # the caller's terminal gets its link
        info = zh / "control" / "server.json"
        wait_until(info.exists, timeout=20, message="the detached server")
        url = zen("serve", "--url")
        assert url.returncode == 0 and "token=" in url.stdout, url.stderr
        hits = []
        for dirpath, _, filenames in os.walk(zh):
            for name in filenames:
                p = Path(dirpath) / name
                if p.is_file() and re.search(rb"token=[A-Za-z0-9_.-]{10,}", p.read_bytes()):
                    hits.append(str(p.relative_to(zh)))
        assert hits == [], f"a login link sits in {hits}"
        log = zh / "logs" / "server.log"
        assert log.exists() and stat.S_IMODE(log.stat().st_mode) == 0o600
    finally:
        zen("serve", "--stop")


def test_a_foreground_server_writing_to_a_file_prints_no_login_url(zh: Path, tmp_path: Path) -> None:
    out = tmp_path / "serve.out"
    with out.open("wb") as f:
        proc = subprocess.Popen([sys.executable, "-m", "zen", "serve", "--port", "0"], cwd=REPO_ROOT,
                                stdout=f, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
    try:
        wait_until(lambda: "zen serve:" in out.read_text(), timeout=20, message="the server to say where it is")
        assert "token=" not in out.read_text() and "zen serve --url" in out.read_text()
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=20)


def test_a_home_after_a_sim_job_and_a_server_is_private(zh: Path, sups: Supervisors, tmp_path: Path) -> None:
    sups.start()
    job = dispatch_sim(zh, tmp_path, "private", [
        {"write": {"path": "work.txt", "content": "the agent's work\n"}},
        {"bash": "echo made-by-shell > shell.txt"},
        {"say": "done"}, {"exit": 0}])
    wait_state(zh, job, "harvested", timeout=60)
    r = zen("serve", "--detach", "--port", "0")
    assert r.returncode == 0, r.stderr
    try:
        assert zen("serve", "--url").returncode == 0
    finally:
        zen("serve", "--stop")
    worktrees = zh / "worktrees"
    assert readable_by_others(zh, skip=worktrees) == []
    # the agent's worktree keeps the user's umask (022 here): its files are as a user makes them
    wt = next(p for p in worktrees.iterdir() if p.is_dir())
    for name in ("work.txt", "shell.txt", "README.md"):
        if (wt / name).exists():
            assert stat.S_IMODE((wt / name).stat().st_mode) == 0o644, name
    assert (wt / "shell.txt").exists()
    assert stat.S_IMODE((wt / "shell.txt").stat().st_mode) == 0o644


def test_the_agent_pane_gets_the_users_umask(zh: Path, sups: Supervisors) -> None:
    sups.start()
    r = zen("dispatch", "umask", "--name", "umask", "--cmd", "sh -c 'umask > umask.txt'")
    assert r.returncode == 0, r.stderr
    job = r.stdout.strip()
    wait_state(zh, job, "harvested", timeout=60)
    out = subprocess.run(["git", "-C", str(zh.parent / "repo"), "show", f"zen/review/{job}:umask.txt"],
                         capture_output=True, text=True)
    assert out.stdout.strip() == "0022", out.stderr

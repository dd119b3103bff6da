"""Fixtures every suite reuses: an isolated $HOME, a temp home, real git repos, a private tmux
server that is killed afterwards. Tests never touch the real $HOME, the user's tmux server or
the network."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.helpers import make_repo, zen

# A suite started in the background of a script (`cmd &`) inherits SIGINT ignored, and so would
# every zen it starts, which would then never stop on the Ctrl-C the tests send. A handler here
# becomes the default disposition in each child, as it is for a user at a terminal.
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)

REAL_HOME = os.environ.get("HOME", "")


@pytest.fixture(autouse=True)
def isolated_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A private $HOME, git identity and tmux socket directory for every test."""
    fake_home = tmp_path / "userhome"
    fake_home.mkdir()
    monkeypatch.setenv("HOME", str(fake_home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(fake_home / ".config"))
    monkeypatch.setenv("XDG_STATE_HOME", str(fake_home / ".local" / "state"))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    for role in ("AUTHOR", "COMMITTER"):
        monkeypatch.setenv(f"GIT_{role}_NAME", "zen test")
        monkeypatch.setenv(f"GIT_{role}_EMAIL", "test@zen.invalid")
    # tmux sockets live in a short private dir: the user's default server is never reached.
    sock_dir = Path(tempfile.mkdtemp(prefix="zt", dir="/tmp"))
    monkeypatch.setenv("TMUX_TMPDIR", str(sock_dir))
    for var in ("ZEN_HOME", "ZEN_JOB_ID", "ZEN_WORKTREE", "TMUX", "TMUX_PANE"):
        monkeypatch.delenv(var, raising=False)
    yield fake_home
    # kill any tmux server a test left behind in its private socket dir
    for sock in sock_dir.rglob("*"):
        if sock.is_socket():
            subprocess.run(["tmux", "-S", str(sock), "kill-server"], capture_output=True)
    shutil.rmtree(sock_dir, ignore_errors=True)
    assert os.environ.get("HOME") == str(fake_home)


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An initialised zen home, exported as $ZEN_HOME."""
    root = tmp_path / "zh"
    r = zen("init", str(root))
    assert r.returncode == 0, r.stderr
    monkeypatch.setenv("ZEN_HOME", str(root))
    return root


@pytest.fixture
def git_repo(tmp_path: Path) -> Path:
    """A real git repository with two commits on main."""
    return make_repo(tmp_path / "repo")


@pytest.fixture
def lane(home: Path, git_repo: Path) -> Path:
    """`home` with `git_repo` registered as lane 'app'. Returns the repo path."""
    r = zen("lane", "add", "app", str(git_repo))
    assert r.returncode == 0, r.stderr
    return git_repo


@pytest.fixture
def tmux_server() -> Iterator[str]:
    """A tmux server on a unique private socket name, killed afterwards. Yields the name."""
    name = f"zt-{uuid.uuid4().hex[:10]}"
    yield name
    subprocess.run(["tmux", "-L", name, "kill-server"], capture_output=True)

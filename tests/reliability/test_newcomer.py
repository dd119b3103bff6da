"""Newcomer points of issue 15: the README's own layout (`zen init ~/zen`, then
`zen supervise --detach` from ~) starts the supervisor, and an attached agent's window carries the
job's name, not `sh`."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.helpers import wait_until
from tests.supervisor.util import wait_state
from zen.store.home import Home

# the console script a user runs: its own folder leads sys.path, so a ~/zen folder cannot
# shadow the package the way `python -m zen` run from ~ would
ZEN_SCRIPT = str(Path(sys.executable).parent / "zen")


def run(*args: str, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([ZEN_SCRIPT, *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=120)


def test_detach_from_the_folder_that_holds_a_home_named_zen(isolated_env: Path, git_repo: Path) -> None:
    user = isolated_env                                  # the test's private $HOME
    env = {**os.environ, "ZEN_HOME": str(user / "zen")}
    assert run("init", str(user / "zen"), cwd=user, env=env).returncode == 0
    assert run("lane", "add", "app", str(git_repo), cwd=user, env=env).returncode == 0
    cfg = user / "zen" / "zen.yaml"
    cfg.write_text(cfg.read_text().replace("tick: 0.25s", "tick: 0.05s").replace("idle_after: 2s", "idle_after: 0.5s"))
    home = Home(user / "zen")
    try:
        r = run("supervise", "--detach", cwd=user, env=env)
        assert r.returncode == 0, r.stderr + (home.supervisor_log.read_text() if home.supervisor_log.exists() else "")
        assert "supervisor started" in r.stdout
        job = run("dispatch", "say hi", "--name", "named-window", "--agent", "cmd", "--cmd", "sh -c 'echo hi; sleep 30'",
                  cwd=user, env=env).stdout.strip()
        wait_state(home.root, job, "working", "waiting", timeout=60)
        windows = subprocess.run(["tmux", "-L", home.tmux_socket, "list-windows", "-a", "-F",
                                  "#{session_name} #{window_name}"], capture_output=True, text=True).stdout
        assert f"zen-{job} named-window" in windows, windows
        wait_until(lambda: run("cancel", job, cwd=user, env=env).returncode in (0, 1), timeout=30)
    finally:
        run("supervise", "--stop", cwd=user, env=env)
        subprocess.run(["tmux", "-L", home.tmux_socket, "kill-server"], capture_output=True)

"""`a` in `zen watch` running in a real terminal (a tmux pane on a private server): the view steps
aside for the agent's session and comes back when you detach."""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
from pathlib import Path

from tests.helpers import REPO_ROOT, wait_until
from tests.supervisor.util import dispatch_sim, snap, wait_state
from tests.tui.conftest import Supervisors


def test_attach_suspends_the_view_and_detach_brings_it_back(
        zh: Path, sups: Supervisors, tmp_path: Path, tmux_server: str) -> None:
    sups.start()
    job = dispatch_sim(zh, tmp_path, "attachable", [{"say": "hello from the agent"}, {"wait": True}])
    wait_state(zh, job, "waiting", timeout=30)
    cmd = shlex.join(["env", f"ZEN_HOME={zh}", f"HOME={os.environ['HOME']}", "TERM=xterm-256color",
                      sys.executable, "-m", "zen", "watch"])
    tmux = ["tmux", "-L", tmux_server]
    subprocess.run([*tmux, "new-session", "-d", "-x", "150", "-y", "30", "-s", "w", "-c", str(REPO_ROOT), cmd],
                   check=True)

    def screen() -> str:
        return subprocess.run([*tmux, "capture-pane", "-p", "-t", "=w:"], capture_output=True, text=True).stdout

    wait_until(lambda: "attachable" in screen() and "showing all jobs" in screen(), timeout=30,
               message="zen watch drawn")
    subprocess.run([*tmux, "send-keys", "-t", "=w:", "a"], check=True)
    wait_until(lambda: "hello from the agent" in screen() and "[zen]" in screen(), timeout=20,
               message="the agent's session in the terminal")
    assert "showing all jobs" not in screen()
    subprocess.run([*tmux, "send-keys", "-t", "=w:", "C-b", "d"], check=True)  # detach the inner client
    wait_until(lambda: "showing all jobs" in screen() and "attachable" in screen(), timeout=20,
               message="zen watch back after the detach")
    assert snap(zh, job).state.value == "waiting"
    subprocess.run([*tmux, "send-keys", "-t", "=w:", "q"], check=True)
    wait_until(lambda: subprocess.run([*tmux, "has-session", "-t", "=w"], capture_output=True).returncode != 0,
               timeout=20, message="zen watch to quit (its session ends with it)")

"""zen supervise [--detach | --stop | --once]."""

from __future__ import annotations

import logging
import os
import signal
import subprocess
import sys
import time

import typer

from zen.agents.common import zen_argv
from zen.cli import common, render
from zen.errors import ZenError
from zen.orchestration.loop.supervisor import run_supervisor
from zen.orchestration.read.status import supervisor_pid
from zen.store.home import Home


def _setup_logging(home: Home) -> None:
    home.logs.mkdir(parents=True, exist_ok=True)
    handler = logging.FileHandler(home.supervisor_log)
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    root = logging.getLogger()
    root.addHandler(handler)
    root.setLevel(logging.INFO)


def _detach(home: Home) -> int:
    pid = supervisor_pid(home)
    if pid:
        raise ZenError(f"a supervisor is already running for {home.root} (pid {pid}); zen supervise --stop stops it")
    home.logs.mkdir(parents=True, exist_ok=True)
    log_path = home.supervisor_log
    with open(os.open(log_path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600), "ab") as out:
        # by the console script (its own folder first on sys.path), from the home: never a
        # `python -m zen` run where the cwd could hold a folder named zen (`zen init ~/zen`,
        # started from ~) that would shadow the package
        proc = subprocess.Popen(
            [*zen_argv(), "--home", str(home.root), "supervise"], cwd=home.root,
            stdin=subprocess.DEVNULL, stdout=out, stderr=out, start_new_session=True, close_fds=True,
        )
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if supervisor_pid(home) == proc.pid:
            render.say(f"supervisor started (pid {proc.pid}); log: {log_path}")
            return 0
        code = proc.poll()
        if code is not None:
            raise ZenError(f"the supervisor exited at once with code {code} (see {log_path})")
        time.sleep(0.05)
    raise ZenError(f"the supervisor did not take its lock within 30s (see {log_path})")


def _stop(home: Home, timeout_s: float = 30) -> int:
    pid = supervisor_pid(home)
    if not pid:
        render.say("no supervisor is running for this home")
        return 0
    if pid < 0:
        raise ZenError(f"a supervisor holds {home.supervisor_lock} but its pid is unreadable; stop it by hand")
    try:
        os.kill(pid, signal.SIGTERM)
    except ProcessLookupError:
        pass
    deadline = time.monotonic() + timeout_s
    while supervisor_pid(home):
        if time.monotonic() >= deadline:
            raise ZenError(f"the supervisor (pid {pid}) did not stop within {timeout_s:.0f}s")
        time.sleep(0.05)
    render.say(f"supervisor stopped (pid {pid}); agents keep running in tmux")
    return 0


def supervise(
    detach: bool = typer.Option(False, "--detach", help="Run in the background (log: <home>/logs/supervisor.log)."),
    stop: bool = typer.Option(False, "--stop", help="Stop the running supervisor; agents keep running."),
    once: bool = typer.Option(False, "--once", help="One pass (recover, claim, start, step), then exit."),
) -> int:
    """Run the supervisor: claim tasks, start agents in tmux, watch their turns, harvest their work."""
    home = common.home()
    if stop:
        return _stop(home)
    if detach:
        return _detach(home)
    _setup_logging(home)
    if not once and sys.stdout.isatty():
        render.note(f"supervising {home.root} (pid {os.getpid()}); Ctrl-C stops it, agents keep running")
    return run_supervisor(home, once=once)


def register(app: typer.Typer) -> None:
    app.command("supervise")(supervise)

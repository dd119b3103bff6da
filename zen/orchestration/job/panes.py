"""A job's tmux pane: found, stopped (its exit keys, else TERM, then KILL), waited on until dead,
and a dead pane's exit status (tmux's, else the one the pane's wrapper wrote, else the kernel's).

Used by the commands that end an agent (job/control.py), the supervisor's settling of an ended
one (job/settle.py) and zen revive.
"""

from __future__ import annotations

import signal
import time
from dataclasses import replace
from pathlib import Path

from zen.adapters import procs
from zen.adapters.tmux import PaneInfo, Tmux, signal_pane
from zen.core.model import JobSnapshot
from zen.store.home import Home


def pane_of(tmux: Tmux, snap: JobSnapshot) -> PaneInfo | None:
    return tmux.pane(snap.tmux_session) if snap.tmux_session else None


def wait_dead(tmux: Tmux, session: str, timeout_s: float) -> PaneInfo | None:
    """Poll until the pane is dead (or gone). The last PaneInfo seen (dead), or None if gone."""
    deadline = time.monotonic() + timeout_s
    while True:
        info = tmux.pane(session)
        if info is None or info.settled:
            return info
        if time.monotonic() >= deadline and not info.dead:
            return info
        if info.dead and time.monotonic() >= deadline + 0.5:
            return info  # dead, but tmux has not told its status (the wrapper's file may)
        time.sleep(0.05)


def stop_pane(tmux: Tmux, session: str, grace_s: float, keys: list[str] | None = None,
              key_pause_s: float = 0.0) -> PaneInfo | None:
    """End the agent: its exit keys if it has some (`key_pause_s` apart), else TERM; after
    `grace_s`, KILL the group."""
    info = tmux.pane(session)
    if info is None or info.dead:
        return info
    if info.pid:  # a paused agent (zen pause) must run to act on its exit keys or TERM
        procs.continue_below(info.pid)
    if keys:
        tmux.send_keys(info.pane_id, keys, pause_s=key_pause_s)
        info = wait_dead(tmux, session, grace_s)
        if info is None or info.dead:
            return info
    signal_pane(info, signal.SIGTERM)
    info = wait_dead(tmux, session, grace_s)
    if info is not None and not info.dead:
        signal_pane(info, signal.SIGKILL)
        info = wait_dead(tmux, session, 5)
    return info


def exit_file(home: Home, job_id: str) -> Path:
    return home.job(job_id).exit_file


def with_exit_status(home: Home, job_id: str, info: PaneInfo | None) -> PaneInfo | None:
    """A dead pane's exit status: tmux's, else the one the pane's wrapper wrote, else the
    kernel's for a process not reaped yet. tmux 3.3a can leave a dead pane's process unreaped,
    status blank, for as long as no other child of its server exits; an agent killed by a
    signal writes no status file, but as a zombie it still carries its wait status."""
    if info is None or info.settled:
        return info
    try:
        code = int(exit_file(home, job_id).read_text().strip())
    except (OSError, ValueError):
        told = procs.exit_status(info.pid) if info.dead and info.pid else None
        return info if told is None else replace(info, exit_code=told[0], signal=told[1])
    if 128 < code < 128 + 65:  # the wrapper's shell reports a signal death as 128 + N
        return replace(info, exit_code=None, signal=code - 128)
    return replace(info, exit_code=code, signal=None)

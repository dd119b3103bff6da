"""Which process a job's agent runs under: the pid of its tmux pane, from its timeline.

What zen's channels check a caller against (the resident guardian's socket, the turn hook): the
job's own processes all run below its pane, and a process cannot choose its ancestors.
"""

from __future__ import annotations

import json
import os

from zen.core.events import EventType
from zen.store import layout

_SPAWNED = f'"{EventType.AGENT_SPAWNED}"'.encode()   # as a timeline's line spells it


def pane_pid(home: str, job_id: str) -> int | None:
    """The pid of a job's tmux pane (its latest agent.spawned that names one), from its timeline;
    None for a job with no local agent on record. What zen's channels check a caller against: the
    job's own processes all run below its pane, and a process cannot choose its ancestors."""
    if not job_id or "/" in job_id or job_id.startswith("."):
        return None
    try:
        with open(os.path.join(home, layout.JOBS, job_id, layout.EVENTS), "rb") as f:
            data = f.read()
    except OSError:
        return None
    found: int | None = None
    for line in data.splitlines():
        if _SPAWNED not in line:
            continue
        try:
            pid = json.loads(line).get("pid")
        except ValueError:
            continue
        if isinstance(pid, int) and pid > 0:
            found = pid
    return found

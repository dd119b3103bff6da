"""The resident guardian learns the calling job from the kernel, not from what the caller says
(issue 31 item 3, finding M14): a request naming a live job that does not come from under that job's
tmux pane is refused, and nothing is written in that job's name (no lease, no guard record)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.helpers import wait_until
from tests.supervisor.util import dispatch_sim, events, wait_event


def test_a_request_in_a_live_jobs_name_from_outside_its_pane_is_refused(zh: Path, tmp_path: Path, sup) -> None:
    job = dispatch_sim(zh, tmp_path, "victim", [{"say": "ready"}, {"wait": True}])
    wait_event(zh, job, "turn.waiting", timeout=30)
    wait_until((zh / "control" / "guard.sock").exists, timeout=20, message="the resident guardian")
    wt = zh / "worktrees" / job
    before = len(events(zh, job))
    payload = {"hook_event_name": "PreToolUse", "tool_name": "Write", "cwd": str(wt),
               "tool_input": {"file_path": str(wt / "forged.txt"), "content": "x"}}
    env = {**os.environ, "ZEN_HOME": str(zh), "ZEN_JOB_ID": job, "ZEN_WORKTREE": str(wt)}
    r = subprocess.run([sys.executable, "-m", "zen", "guard", "hook"], input=json.dumps(payload), cwd=wt,
                       env=env, capture_output=True, text=True, timeout=30)
    assert r.returncode == 2 and "does not come from that job's agent" in r.stderr, r.stderr
    after = events(zh, job)[before:]
    assert not [e for e in after if e["type"] in ("lock.acquired", "guard.allowed", "guard.denied")], after

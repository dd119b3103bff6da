"""A team tool's error names the error's kind from zen/errors.py (issue 34: one error tree), so an
agent can tell a refusal from bad input from the kill switch without reading the sentence."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

from tests.helpers import zen
from tests.supervisor.util import dispatch_sim, wait_state
from zen import errors


def test_a_tool_error_carries_the_kind_of_the_error_that_stopped_it(
        zh: Path, lane: Path, tmp_path: Path, sup: subprocess.Popen[bytes], mcp_for: Any) -> None:
    parent = dispatch_sim(zh, tmp_path, "kinds", [{"wait": True}])
    wait_state(zh, parent, "waiting")
    p = mcp_for(zh, parent)

    ok, err = p.call("agent_lock", path="/etc/passwd")
    assert not ok and err["error"] == errors.LeaseError.kind == "invalid-lease", err
    assert "outside the job's worktree" in err["message"]

    ok, err = p.call("agent_control", id=parent, action="explode", expected_revision=1)
    assert not ok and err["error"] == errors.UsageError.kind == "usage", err

    ok, err = p.call("agent_control", id="20260101T000000Z-stranger-0000", action="cancel", expected_revision=1)
    assert not ok and err["error"] == errors.Refused.kind == "refused", err

    engaged = zen("kill-switch", "--reason", "testing the kinds")
    assert engaged.returncode == 0, engaged.stderr
    try:
        ok, err = p.call("agent_spawn", goal="one worker", agent="sim", script=[{"exit": 0}])
        assert not ok and err["error"] == errors.KillSwitchEngaged.kind == "kill-switch", err
        assert "kill switch is engaged" in err["message"]
    finally:
        assert zen("kill-switch", "--release").returncode == 0
    worker = p.ok("agent_spawn", goal="one worker", agent="sim", script=[{"exit": 0}])
    assert worker["id"]

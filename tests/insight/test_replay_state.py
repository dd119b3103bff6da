"""Issue 38 step 1: what replaying a decision needs beyond the call, through the real hook: the
kill switch as it was, and the policy's own decision when a human's approval turned it."""

from __future__ import annotations

import re
from pathlib import Path

from tests.guard.util import bash, events, hook, job_env, make_job, set_policy, write_tool
from tests.helpers import zen
from zen.orchestration.insight.replay import simulate
from zen.store.home import Home


def test_a_replay_keeps_the_kill_switch_and_the_approval_as_they_were(home: Path, tmp_path: Path) -> None:
    set_policy(home, "require_approval:\n  system_commands: true\n")
    wt = make_job(home, "j1")
    env = job_env(home, "j1")
    # needs a human; approved; the same call then runs once
    r = hook(bash("systemctl restart nginx", wt), env=env)
    assert r.returncode == 2
    aid = re.search(r"zen approve ([0-9a-f]+)", r.stderr).group(1)  # type: ignore[union-attr]
    assert zen("approve", aid).returncode == 0
    assert hook(bash("systemctl restart nginx", wt), env=env).returncode == 0
    # under the kill switch a write is denied (observe); released, it is allowed
    assert zen("kill-switch", "--reason", "test").returncode == 0
    assert hook(write_tool(wt / "a.txt", wt), env=env).returncode == 2
    assert zen("kill-switch", "--release").returncode == 0
    assert hook(write_tool(wt / "a.txt", wt), env=env).returncode == 0

    guard = [e for e in events(home, "j1") if e["type"].startswith("guard.")]
    assert [e["decision"] for e in guard] == ["approval", "allow", "deny", "allow"]
    approved = guard[1]
    assert approved["decision"] == "allow" and approved["replay"]["core"]["decision"] == "approval"
    killed = guard[2]
    assert killed["level"] == "observe" and killed["replay"]["kill"] is True
    assert guard[3]["replay"]["kill"] is False and "core" not in guard[3]["replay"]

    sim = simulate(Home(home))
    assert sim.replayed == len(guard) and sim.changes == []
    # without the approval switch the policy itself would allow systemctl: both calls change
    proposed = tmp_path / "guardian.yaml"
    proposed.write_text("require_approval:\n  system_commands: false\n")
    sim = simulate(Home(home), proposed)
    assert [(c.seq, c.old_decision, c.new_decision) for c in sim.changes] == [
        (guard[0]["seq"], "approval", "allow"), (guard[1]["seq"], "approval", "allow")]

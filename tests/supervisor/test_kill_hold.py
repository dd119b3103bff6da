"""The kill switch holds the agents the guardian does not see (issue 31): a `cmd` (or aider) would
go on editing its worktree unseen, so it is paused at once; the release resumes exactly those, and
a guarded agent (clamped by the guardian at its next call) and one a human paused are left alone."""

from __future__ import annotations

import json
import time
from pathlib import Path

from tests.helpers import wait_until, zen
from tests.supervisor.util import dispatch_cmd, dispatch_sim, events, wait_state

TICKER = "i=0; while :; do i=$((i+1)); echo $i > ticks.txt; sleep 0.1; done"


def _ticks(zh: Path, job: str) -> int:
    try:
        return int((zh / "worktrees" / job / "ticks.txt").read_text().strip() or 0)
    except (OSError, ValueError):
        return 0


def test_the_kill_switch_pauses_unguarded_agents_until_its_release(zh: Path, tmp_path: Path, sup) -> None:
    ticker = dispatch_cmd(TICKER, "ticker")
    mine = dispatch_cmd(TICKER, "mine")
    guarded = dispatch_sim(zh, tmp_path, "guarded", [{"wait": {"turns": []}}])
    for job in (ticker, mine):
        wait_until(lambda j=job: _ticks(zh, j) > 2, timeout=30, message=f"{job} ticking")
    wait_state(zh, guarded, "working", "waiting", timeout=30)
    assert zen("pause", mine).returncode == 0                    # a human's pause, before the switch

    r = zen("kill-switch", "--reason", "test", "--json")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["held"] == [ticker]
    wait_state(zh, ticker, "paused", timeout=10)
    paused = [e for e in events(zh, ticker) if e["type"] == "job.paused"]
    assert paused[-1]["by"] == "kill switch"
    before = _ticks(zh, ticker)
    time.sleep(0.5)
    assert _ticks(zh, ticker) == before                          # it does nothing while held
    assert wait_state(zh, guarded, "working", "waiting").state.value != "paused"

    assert zen("kill-switch", "--release").returncode == 0
    wait_state(zh, ticker, "working", "waiting", timeout=10)
    wait_until(lambda: _ticks(zh, ticker) > before, timeout=10, message="the ticker going on")
    assert wait_state(zh, mine, "paused").state.value == "paused"   # the human's pause stands
    for job in (ticker, mine, guarded):
        zen("cancel", job)

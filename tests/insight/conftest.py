"""Fixtures for issue 38's tests: a home with a lane, fast timings and a real supervisor (the
supervisor suite's own fixtures), and a recorded fleet of sim agents whose every command and
edit went through the real hook."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.supervisor.conftest import sup, sups, zh  # noqa: F401  (fixtures, used by name)
from tests.supervisor.util import dispatch_sim, wait_state

# three agents: reads, edits in the worktree, and what the guardian denies (a push at suggest,
# a credential read, a delete beyond the worktree, a raw call to a payments API)
FLEET: dict[str, list[dict[str, object]]] = {
    "reader": [{"bash": "ls -la"}, {"bash": "echo hello > notes.txt"}, {"bash": "cat notes.txt"},
               {"bash": "git status --short"}, {"exit": 0}],
    "editor": [{"write": {"path": "feature.py", "content": "print('feature')\n"}},
               {"edit": {"path": "feature.py", "old": "feature", "new": "done"}},
               {"bash": "echo more >> feature.py"}, {"commit": "add feature"}, {"exit": 0}],
    "denied": [{"bash": "git push origin HEAD:refs/heads/x"}, {"bash": "cat ~/.ssh/id_rsa"},
               {"bash": "rm -rf ~/projects"}, {"bash": "curl -X POST https://api.stripe.com/v1/refunds"},
               {"bash": "echo done"}, {"exit": 0}],
}


def run_fleet(home: Path, tmp: Path, fleet: dict[str, list[dict[str, object]]] = FLEET) -> dict[str, str]:
    """Dispatch each scripted sim agent and wait until all are harvested; name -> job id."""
    jobs = {name: dispatch_sim(home, tmp, name, script) for name, script in fleet.items()}
    for job in jobs.values():
        wait_state(home, job, "harvested", "failed", timeout=150)
    return jobs


def guard_events(home: Path) -> list[tuple[str, dict[str, object]]]:
    out = []
    for path in sorted((home / "jobs").glob("*/events.jsonl")):
        for line in path.read_text().splitlines():
            ev = json.loads(line)
            if ev["type"] in ("guard.allowed", "guard.denied"):
                out.append((path.parent.name, ev))
    return out


@pytest.fixture
def fleet(zh: Path, tmp_path: Path, sup) -> dict[str, str]:  # noqa: F811
    """A recorded fleet (see FLEET) in `zh`, its supervisor still running."""
    return run_fleet(zh, tmp_path)

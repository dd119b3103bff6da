"""Best of N (issue 37): one prompt dispatched as several jobs of one group, N attempts of one agent
(`zen dispatch ... --attempts N`) or one attempt per agent (`--agents claude,codex`). Each is a job
of its own, named <name>-1, <name>-2, ... (or <name>-<agent>), its task carrying the group's id;
`zen compare` sets them side by side and `zen pick` lands one (zen/orchestration/job/attempts.py)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from zen.core.ids import make_job_id
from zen.core.model import AgentKind
from zen.errors import UsageError
from zen.orchestration.intake.dispatch import dispatch, with_task_file
from zen.orchestration.intake.enqueue import prepare
from zen.store.config import Config
from zen.store.home import Home

MAX_ATTEMPTS = 8


@dataclass(frozen=True)
class Group:
    group: str
    jobs: list[str] = field(default_factory=list)
    names: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {"group": self.group, "jobs": self.jobs, "names": self.names}


def dispatch_group(home: Home, fields: dict[str, Any], *, attempts: int | None = None,
                   agents: Sequence[str] = (), task_file: Path | None = None) -> Group:
    """Validate and publish one job per attempt, all of one group (a task file's fields under the
    given ones, as zen dispatch --file takes them)."""
    if task_file is not None:
        fields = with_task_file(fields, task_file)
    known = {a.value for a in AgentKind}
    for a in agents:
        if a not in known:
            raise UsageError(f"--agents: unknown agent {a!r} ({', '.join(sorted(known))})")
    if agents and attempts is not None and attempts != len(agents):
        raise UsageError(f"--attempts {attempts} and --agents naming {len(agents)} disagree: give one of them")
    n = len(agents) if agents else (attempts or 0)
    if not 2 <= n <= MAX_ATTEMPTS:
        raise UsageError(f"a group has 2 to {MAX_ATTEMPTS} attempts, not {n}")
    base = str(prepare(Config.load(home), dict(fields))["name"])   # the name the prompt gives, checked
    group = make_job_id(f"{base}-group")
    jobs, names = [], []
    for i in range(n):
        one = {**fields, "name": f"{base}-{agents[i] if agents else i + 1}", "group": group}
        if agents:
            one["agent"] = agents[i]
        task = dispatch(home, one)
        jobs.append(task.id)
        names.append(task.name)
    return Group(group, jobs, names)


__all__ = ["MAX_ATTEMPTS", "Group", "dispatch_group"]

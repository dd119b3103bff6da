"""One job's context, loaded once per operation and passed down (home, config, task, lane, store,
clock), instead of each function re-reading zen.yaml and task.yaml.

    ctx = JobContext.load(home, job_id)                 # a command acting on one job
    ctx = JobContext.load(home, job_id, config=cfg, store=store, clock=clock)   # the supervisor

`task` is read once (task.yaml never changes); the lane is resolved from the config on first use
(a task whose lane was removed from zen.yaml fails there, with a sentence); `snapshot()` and
`events()` always read the timeline afresh, since other processes append to it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from zen.core.clock import SYSTEM, Clock
from zen.core.model import JobSnapshot, Task
from zen.orchestration.lanes import Lane, resolve_lane
from zen.store.config import Config
from zen.store.jobs import JobStore
from zen.store.layout import Home, JobPaths


@dataclass
class JobContext:
    home: Home
    config: Config
    store: JobStore
    job_id: str
    task: Task
    clock: Clock = SYSTEM
    _lane: Lane | None = field(default=None, repr=False)

    @classmethod
    def load(cls, home: Home, job_id: str, *, config: Config | None = None, store: JobStore | None = None,
             clock: Clock = SYSTEM) -> JobContext:
        store = store if store is not None else JobStore(home)
        return cls(home=home, config=config if config is not None else Config.load(home), store=store,
                   job_id=job_id, task=store.task(job_id), clock=clock)

    @property
    def lane(self) -> Lane:
        """The task's lane (resolved once; raises LaneGone when zen.yaml no longer has it)."""
        if self._lane is None:
            self._lane = resolve_lane(self.config, self.task)
        return self._lane

    @property
    def paths(self) -> JobPaths:
        return self.home.job(self.job_id)

    @property
    def agent(self) -> str:
        return self.task.agent.value

    @property
    def agent_settings(self) -> dict[str, Any]:
        return self.config.agent_settings(self.agent)

    def snapshot(self, *, write: bool = True) -> JobSnapshot:
        return self.store.snapshot(self.job_id, write=write)

    def events(self) -> list[dict[str, Any]]:
        return self.store.events(self.job_id)

    def append(self, etype: str, actor: str = "supervisor", **fields: Any) -> dict[str, Any]:
        return self.store.append(self.job_id, etype, actor, **fields)

    def append_unsynced(self, etype: str, actor: str = "supervisor", **fields: Any) -> dict[str, Any]:
        return self.store.append_unsynced(self.job_id, etype, actor, **fields)

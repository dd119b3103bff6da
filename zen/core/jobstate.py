"""A job's state without pydantic: the states, and state.json as plain data (`Snap`).

`zen status`, `zen show` and `zen dispatch` read state.json with the stdlib alone (issue 21), and
bring a snapshot up to date with the same reducer the supervisor uses (zen.core.states), folding
into a `Snap`: the fields of JobSnapshot (zen.core.model) as plain attributes, made from and
turned back into exactly the JSON that JobSnapshot writes (tests/core/test_jobstate.py holds the
two to the same fields and defaults).
"""

from __future__ import annotations

from enum import StrEnum

TYPE_CHECKING = False
if TYPE_CHECKING:  # typing costs the lean readers' start; annotations only
    from typing import Any


class JobStatus(StrEnum):
    queued = "queued"
    starting = "starting"
    working = "working"
    waiting = "waiting"
    paused = "paused"          # the agent's process group is stopped (zen pause); zen resume continues it
    exited = "exited"
    harvested = "harvested"
    failed = "failed"
    cancelled = "cancelled"

    @property
    def live(self) -> bool:
        """An agent process may exist for the job."""
        return self in (JobStatus.starting, JobStatus.working, JobStatus.waiting, JobStatus.paused)

    @property
    def final(self) -> bool:
        return self in (JobStatus.harvested, JobStatus.failed, JobStatus.cancelled)


FINAL = frozenset(s.value for s in JobStatus if s.final)
# the states' names in JobStatus's order, for readers of plain state.json / views: an agent may
# run (LIVE), or it has stopped for good (ENDED: exited, or final)
LIVE: tuple[str, ...] = tuple(s.value for s in JobStatus if s.live)
ENDED: tuple[str, ...] = tuple(s.value for s in JobStatus if s is JobStatus.exited or s.final)

# state.json's fields after "v" and "job", with the defaults of JobSnapshot, in its order
SNAPSHOT_DEFAULTS: dict[str, Any] = {
    "name": "", "state": "queued", "reason": None, "revision": 0, "seq": 0, "agent": None, "lane": None,
    "domain": None, "priority": 3, "tmux_session": None, "tmux_target": None, "worktree": None,
    "branch": None, "review_branch": None, "base_commit": None, "harvest_commit": None, "exit_code": None,
    "exit_signal": None, "turns": 0, "attempts": 0, "retry_at": None, "usage": {}, "created_at": None,
    "started_at": None, "updated_at": None, "ended_at": None, "last_output_at": None, "cancelled": False,
    "timed_out": False, "paused_from": None, "paused_reason": None, "paused_at": None, "paused_s": 0.0,
    "landed_commit": None, "guard": {}, "anomalies": 0, "anomaly": None, "checks": None, "checks_left": 0,
    "executor": "local", "remote_job": None,
    "remote_address": None, "remote_host": None,
    "parent": None, "created_by": None, "group": None,
}
_CONTAINERS = ("usage", "guard")


class Snap:
    """state.json as attributes, for the reducer: `Snap.of(job, data)`, then `as_json()`."""

    def __init__(self, job: str, data: dict[str, Any] | None = None) -> None:
        data = dict(data or {})
        data.pop("_offset", None)
        self.__dict__["v"] = data.pop("v", 1)
        self.__dict__["job"] = job
        data.pop("job", None)
        for key, default in SNAPSHOT_DEFAULTS.items():
            value = data.pop(key, default)
            self.__dict__[key] = dict(value) if key in _CONTAINERS else value
        self.__dict__["state"] = JobStatus(self.__dict__["state"])
        self.__dict__["_extra"] = data          # fields of a newer zen, kept as they were

    def __getattr__(self, name: str) -> Any:  # the fields are set in __init__; this only tells mypy
        raise AttributeError(name)

    def as_json(self) -> dict[str, Any]:
        """The JSON JobSnapshot.model_dump(mode="json") gives for the same snapshot."""
        d = self.__dict__
        out: dict[str, Any] = {"v": d["v"], "job": d["job"]}
        for key in SNAPSHOT_DEFAULTS:
            out[key] = d[key]
        out["state"] = d["state"].value
        out.update(d["_extra"])
        return out


def plausible(job: str, data: object) -> bool:
    """Is `data` a state.json this zen wrote for `job` (else it is rebuilt from the timeline)?"""
    if not isinstance(data, dict) or data.get("v") != 1 or data.get("job") != job:
        return False
    if data.get("state") not in JobStatus._value2member_map_:
        return False
    return (isinstance(data.get("seq"), int) and isinstance(data.get("revision"), int)
            and isinstance(data.get("usage", {}), dict) and isinstance(data.get("guard", {}), dict))

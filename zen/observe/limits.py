"""Guardrail limits per job, enforced from the observatory's counts (issue 16).

`policy/guardian.yaml` may set, per job (a missing or zero limit is no limit):

    limits:
      max_api_calls: 200            # API calls (OpenTelemetry or the transcript, whichever saw more)
      max_file_operations: 500      # reads, writes and deletes the guardian let through
      max_tokens_per_session: 5000000   # input + output + cache read + cache write tokens

The supervisor hands every batch of new timeline events of a live job to `Limits.observe`; when
a figure reaches its limit, the job gets `limit.reached` (limit, max, used) and `job.failed`
with a reason naming the limit, the supervisor stops the agent (TERM, grace, KILL) and harvests
what it made, as for a cancel: a human decides what next. `usage_of` says what is in use
against each limit (zen metrics JOB shows it).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from zen.core.events import EventType as E
from zen.guard.policy import defaults
from zen.guard.policy import load as gpolicy
from zen.observe import snapshot
from zen.observe.metrics import JobFold, figures
from zen.store import events as ev_store
from zen.store.layout import Home

LIMITS = defaults.LIMIT_KEYS
WHAT = {"max_api_calls": "API calls", "max_file_operations": "file operations",
        "max_tokens_per_session": "tokens"}
# the events that can move a figure a limit is set on
_COUNTED = frozenset({E.API_REQUEST, E.USAGE, E.GUARD_ALLOWED})
_STOPPED = frozenset({E.LIMIT_REACHED, E.JOB_FAILED, E.JOB_CANCELLED, E.AGENT_EXITED, E.JOB_TIMEOUT})
_TOKENS = ("input_tokens", "output_tokens", "cache_read_input_tokens", "cache_creation_input_tokens")


@dataclass(frozen=True)
class Reached:
    limit: str
    max: int
    used: int

    @property
    def reason(self) -> str:
        return (f"limit {self.limit} reached: {self.used} {WHAT[self.limit]} of {self.max} "
                "allowed (policy/guardian.yaml limits)")


def used(fig: Mapping[str, Any]) -> dict[str, int]:
    """The figures of `zen metrics` a limit is set on."""
    ops = fig.get("file_operations") or {}
    return {"max_api_calls": int(fig.get("api_calls") or 0),
            "max_file_operations": sum(int(v or 0) for v in ops.values()),
            "max_tokens_per_session": sum(int(fig.get(k) or 0) for k in _TOKENS)}


def reached(limits: Mapping[str, int], fig: Mapping[str, Any]) -> Reached | None:
    """The first limit `fig` (one job's figures) has reached, None when none. Pure."""
    now = used(fig)
    for name in LIMITS:
        cap = int(limits.get(name) or 0)
        if cap > 0 and now[name] >= cap:
            return Reached(name, cap, now[name])
    return None


def configured(home: Home) -> dict[str, int]:
    """policy/guardian.yaml `limits` (the compiled policy; {} when none or it does not compile:
    the guardian then denies every call anyway)."""
    compiled = gpolicy.load_compiled(str(home.root))
    found = (compiled.get("policy") or {}).get("limits") or {}
    return {k: int(v) for k, v in found.items() if k in LIMITS and int(v) > 0}


def usage_of(home: Home, fold: JobFold) -> dict[str, dict[str, int]]:
    """Each configured limit of a job (its metrics fold) with what is in use against it."""
    limits = configured(home)
    if not limits:
        return {}
    now = used(figures([fold]))
    return {k: {"max": v, "used": now[k]} for k, v in limits.items()}


class Limits:
    """The supervisor's enforcer (one per home)."""

    def __init__(self, home: Home) -> None:
        self.home = home

    def observe(self, job_id: str, new: Iterable[Mapping[str, Any]]) -> Reached | None:
        """Enforce the limits after `new` events of a live job; what was reached, if anything."""
        if not any(ev.get("type") in _COUNTED for ev in new):
            return None
        limits = configured(self.home)
        if not limits:
            return None
        job_dir = self.home.job(job_id).dir
        got = reached(limits, figures([snapshot.current(job_dir, job_id)]))
        if got is None:
            return None

        def ended(events: list[dict[str, Any]]) -> bool:
            """Already stopped (by a limit or otherwise) since the agent last started."""
            since = max((i for i, e in enumerate(events) if e.get("type") == E.AGENT_SPAWNED), default=0)
            return any(e.get("type") in _STOPPED for e in events[since:])

        ev = ev_store.append_unless(job_dir, job_id, E.LIMIT_REACHED, ended, actor="supervisor",
                                    limit=got.limit, max=got.max, used=got.used, reason=got.reason)
        if ev is None:
            return None
        ev_store.append(job_dir, job_id, E.JOB_FAILED, actor="supervisor", reason=got.reason)
        return got

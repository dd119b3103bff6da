"""Agent teams (DESIGN 13): a job starts worker jobs, each a real job of its own.

A worker is a task file in the spool like any other (`parent: <id>`, `created_by: job:<id>`), so the
supervisor gives it its own worktree, tmux session, guardian and timeline. This module holds the
spawn and its rules; zen.orchestration.teams.ops the rest of the tools (status, wait, report,
control, message, leases, brief). Both serve `zen mcp serve` (an agent's calls, its identity from
the job's environment) and `zen team` (a person, or a script acting as a job).

The rules of a spawn, decided under one home-wide lock (control/teams/.lock), so 50 spawns at
once never get past the cap together:

- the caller is a live job (a dead job's server spawns nothing), the kill switch is off and the
  circuit breaker is closed;
- the new worker's depth (parent hops from a job a human started) is at most teams.max_depth;
- the workers active in the home (waiting in the spool, queued, starting, working, waiting or
  paused) stay within teams.max_active_workers: a spawn over it is refused and writes nothing;
- a spawn that names a request id already accepted for that parent returns the same worker
  (control/teams/requests/<parent>/<hash>.json, written before the task is published, so a
  crash in between is completed by the replay instead of starting a second worker).

control/teams/active/<id>.json marks each accepted worker until it ends: the count reads those
few markers (pruning the ones whose job ended), not every job in the home.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from zen.core import teamtree
from zen.core.events import EventType as E
from zen.core.ids import iso, make_job_id, name_from_prompt, utcnow
from zen.core.model import AgentKind, JobSnapshot, JobStatus, Task
from zen.errors import InvalidTask, KillSwitchEngaged, NotFound, Refused, RevisionMismatch, ZenError
from zen.orchestration.read.query import pending_tasks, resolve_job
from zen.orchestration.read.schedule import breaker_until
from zen.orchestration.safety import breaker
from zen.store import layout, spool
from zen.store.atomic import atomic_write, flocked
from zen.store.config import Config
from zen.store.home import Home
from zen.store.jobs import JobStore, describe_validation, dump_task, load_task_text

# agents a worker may run: each has zen's guardian or its own sandbox on every command. `cmd`
# would run an agent-chosen program with neither, so an agent cannot ask for it.
WORKER_AGENTS = (AgentKind.claude, AgentKind.codex, AgentKind.sim)
ACTIVE_STATES = frozenset({JobStatus.queued, JobStatus.starting, JobStatus.working, JobStatus.waiting,
                           JobStatus.paused})
CAP_RANGE = (1, 32)


# -- identity ---------------------------------------------------------------------------------

@dataclass(frozen=True)
class Caller:
    """Who is asking: a job (an agent's tool call, or `zen team --as JOB`) or a human (job None)."""

    job: str | None

    @property
    def is_human(self) -> bool:
        return self.job is None

    @property
    def actor(self) -> str:
        return "human" if self.job is None else "agent"

    @property
    def label(self) -> str:
        return "human" if self.job is None else f"job:{self.job}"


def caller_from_env(home: Home, env: dict[str, str] | None = None) -> Caller:
    """The job whose agent runs this process ($ZEN_JOB_ID, which zen sets for every agent and its
    MCP server); a process outside any job acts as a human."""
    env = dict(os.environ) if env is None else env
    job = env.get("ZEN_JOB_ID") or None
    if job is not None and not JobStore(home).exists(job):
        raise NotFound(f"ZEN_JOB_ID names job {job}, which this home ({home.root}) has no record of")
    return Caller(job)


# -- settings ----------------------------------------------------------------------------------

def max_active(cfg: Config) -> int:
    raw = cfg.get("teams", "max_active_workers")
    try:
        n = int(raw)
    except (TypeError, ValueError):
        raise ZenError(f"zen.yaml teams.max_active_workers: {raw!r} is not a whole number") from None
    lo, hi = CAP_RANGE
    if not lo <= n <= hi:
        raise ZenError(f"zen.yaml teams.max_active_workers is {n}; it must be from {lo} to {hi}")
    return n


def max_depth(cfg: Config) -> int:
    raw = cfg.get("teams", "max_depth")
    try:
        n = int(raw)
    except (TypeError, ValueError):
        raise ZenError(f"zen.yaml teams.max_depth: {raw!r} is not a whole number") from None
    if n < 1:
        raise ZenError(f"zen.yaml teams.max_depth is {n}; it must be at least 1")
    return n


# -- files of control/teams ----------------------------------------------------------------------

def teams_dir(home: Home) -> Path:
    return home.teams


def _active_dir(home: Home) -> Path:
    return teams_dir(home) / layout.TEAMS_ACTIVE


def _request_path(home: Home, parent: str, request_id: str) -> Path:
    digest = hashlib.sha256(request_id.encode()).hexdigest()[:24]
    return teams_dir(home) / layout.TEAMS_REQUESTS / parent / f"{digest}.json"


def _read_json(path: Path) -> dict[str, Any] | None:
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def _known(home: Home, job_id: str) -> bool:
    """The job has a record, or its task still waits in the spool."""
    return spool.id_taken(home, job_id)


def _job_state(store: JobStore, job_id: str) -> JobStatus | None:
    """The state of a job with a record; queued for a task still in the spool; None if unknown."""
    if store.exists(job_id):
        return store.snapshot(job_id, write=False).state
    home = store.home
    name = f"{job_id}.yaml"
    if (home.spool_new / name).exists() or (home.spool_cur / name).exists():
        return JobStatus.queued
    return None


def active_workers(home: Home, *, prune: bool = False) -> list[str]:
    """Workers that count against the cap. With `prune` (only under the teams lock), the markers
    of workers that ended, or whose spawn never got published, are removed."""
    store = JobStore(home)
    out = []
    try:
        markers = sorted(_active_dir(home).glob("*.json"))
    except OSError:
        return []
    for marker in markers:
        job_id = marker.stem
        state = _job_state(store, job_id)
        if state is not None and state in ACTIVE_STATES:
            out.append(job_id)
        elif prune:
            marker.unlink(missing_ok=True)
    return out


# -- the tree ---------------------------------------------------------------------------------------

def parent_of(home: Home, job_id: str) -> str | None:
    store = JobStore(home)
    if store.exists(job_id):
        return store.task(job_id).parent
    for d in (home.spool_new, home.spool_cur):
        path = d / f"{job_id}.yaml"
        if path.exists():
            try:
                return load_task_text(path.read_text(), str(path)).parent
            except (ZenError, OSError):
                return None
    return None


def depth_of(home: Home, job_id: str) -> int:
    """Parent hops from a job nobody's agent started (0 for a human's job)."""
    depth, seen = 0, {job_id}
    current = parent_of(home, job_id)
    while current is not None and current not in seen and depth < 64:
        depth += 1
        seen.add(current)
        current = parent_of(home, current)
    return depth


def children_of(home: Home, parent: str, snaps: Iterable[JobSnapshot] | None = None) -> list[str]:
    """The recorded children of `parent`: jobs (and tasks still in the spool) naming it as parent."""
    store = JobStore(home)
    snaps = store.snapshots() if snaps is None else snaps
    out = [s.job for s in snaps if s.parent == parent]
    out += [t.id for t in pending_tasks(home) if t.parent == parent and t.id not in out]
    return sorted(out)


def tree(home: Home) -> list[dict[str, Any]]:
    """Every job and pending task as a forest: roots are the jobs no agent started."""
    nodes = [{"id": s.job, "name": s.name, "state": s.state.value, "reason": s.reason, "agent": s.agent,
              "parent": s.parent, "revision": s.revision} for s in JobStore(home).snapshots()]
    nodes += [{"id": t.id, "name": t.name, "state": "pending", "reason": None, "agent": t.agent.value,
               "parent": t.parent, "revision": 0} for t in pending_tasks(home)]
    return teamtree.forest(nodes)


# -- spawn --------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class SpawnRequest:
    goal: str
    agent: str | None = None
    paths: tuple[str, ...] = ()
    name: str | None = None
    request_id: str | None = None
    until_done: bool = False
    budget: dict[str, Any] | None = None
    script: list[dict[str, Any]] | None = None   # for agent sim: the steps it follows
    timeout: str | None = None
    model: str | None = None


def _parent_live(store: JobStore, parent: str) -> Task:
    if not store.exists(parent):
        raise NotFound(f"no job {parent}")
    snap = store.snapshot(parent, write=False)
    if not snap.state.live:
        raise Refused(f"job {parent} is {snap.state.value}; only a running job may start workers")
    return store.task(parent)


def worker_task(home: Home, cfg: Config, parent: Task, req: SpawnRequest) -> Task:
    """The worker's task: on the parent's lane (or repo), base and domain, with its own goal."""
    goal = req.goal.strip()
    if not goal:
        raise InvalidTask("the goal is empty: say what the worker is to do")
    agent = req.agent or parent.agent.value
    if agent not in {a.value for a in WORKER_AGENTS}:
        allowed = ", ".join(a.value for a in WORKER_AGENTS)
        raise Refused(f"a worker's agent must be one of {allowed} (not {agent!r}: every command a "
                      "worker runs must pass the guardian)")
    if req.script is not None and agent != AgentKind.sim.value:
        raise InvalidTask("a script is only for agent sim")
    name = req.name or name_from_prompt(goal)
    fields: dict[str, Any] = {
        "id": make_job_id(name), "name": name, "prompt": goal, "agent": agent,
        "lane": parent.lane, "repo": parent.repo, "base": parent.base, "domain": parent.domain,
        "priority": parent.priority, "timeout": req.timeout or cfg.get("defaults", "timeout"),
        "max_retries": 0, "parent": parent.id, "paths": list(req.paths),
        "created_at": iso(utcnow()), "created_by": f"job:{parent.id}",
        "goal": "until-done" if req.until_done else None, "request_id": req.request_id,
        "budget": req.budget, "script": req.script, "model": req.model or parent.model,
    }
    try:
        return Task.model_validate({k: v for k, v in fields.items() if v is not None})
    except ValidationError as exc:
        raise InvalidTask(describe_validation(exc)) from None


def _replayed(home: Home, parent: str, request_id: str) -> dict[str, Any] | None:
    """The worker an earlier spawn with this request id started (None: no such spawn)."""
    data = _read_json(_request_path(home, parent, request_id))
    return data if data and data.get("request_id") == request_id else None


def _accepted(home: Home, store: JobStore, task: Task, replayed: bool) -> dict[str, Any]:
    state = _job_state(store, task.id)
    snap = store.snapshot(task.id, write=False) if store.exists(task.id) else None
    return {"id": task.id, "name": task.name, "revision": snap.revision if snap else 0,
            "state": (state.value if state else "pending") if snap else "pending",
            "agent": task.agent.value, "parent": task.parent, "replayed": replayed}


def _guards(home: Home, cfg: Config) -> None:
    """The kill switch and the circuit breaker hold automatic work: an agent's spawn included."""
    if home.kill_file.exists():
        raise KillSwitchEngaged("the kill switch is engaged: no agent may start workers until a human releases it")
    until = breaker_until(home, cfg, time.time())
    if until is not None:
        raise Refused("the circuit breaker is open (too much automatic work recently): no workers until "
                      f"{iso(datetime.fromtimestamp(until, UTC))}")


def spawn(home: Home, caller: Caller, req: SpawnRequest) -> dict[str, Any]:
    """Start a worker of `caller`'s job: {id, name, revision, state, agent, parent, replayed}.

    Refused (Refused, with the reason) over the cap, past the depth, with the kill switch engaged
    or the breaker open; a refusal writes nothing.
    """
    if caller.job is None:
        raise Refused("a worker needs a parent job: run this from a job's agent, or name the parent "
                      "(zen team spawn --as JOB)")
    store = JobStore(home)
    cfg = Config.load(home)
    cap, limit = max_active(cfg), max_depth(cfg)
    teams_dir(home).mkdir(parents=True, exist_ok=True)
    with flocked(teams_dir(home) / layout.TEAMS_LOCK):
        parent = _parent_live(store, caller.job)
        if req.request_id:
            seen = _replayed(home, parent.id, req.request_id)
            if seen is not None:
                return _replay(home, store, seen)
        _guards(home, cfg)
        depth = depth_of(home, parent.id) + 1
        if depth > limit:
            raise Refused(f"a worker of job {parent.id} would be {depth} levels deep; teams.max_depth is "
                          f"{limit}")
        active = active_workers(home, prune=True)
        if len(active) >= cap:
            raise Refused(f"{len(active)} workers are active and teams.max_active_workers is {cap}: wait "
                          "for one to finish (agent_wait) and spawn again")
        task = worker_task(home, cfg, parent, req)
        text = dump_task(task)
        held = breaker.try_kind(home, cfg, breaker.SPAWN, time.time())
        if held is not None:
            raise Refused("the circuit breaker is open for spawns by agents (breaker.limits.spawn): no workers "
                          f"until {iso(datetime.fromtimestamp(held, UTC))}")
        if req.request_id:
            ledger = _request_path(home, parent.id, req.request_id)
            ledger.parent.mkdir(parents=True, exist_ok=True)
            atomic_write(ledger, json.dumps({"request_id": req.request_id, "job": task.id, "task": text}) + "\n")
        _publish(home, task, text)
    store.append(parent.id, E.TEAM_SPAWNED, actor=caller.actor, worker=task.id, goal=task.prompt[:500],
                 agent=task.agent.value, depth=depth, **({"request_id": req.request_id} if req.request_id else {}))
    return _accepted(home, store, task, replayed=False)


def _publish(home: Home, task: Task, text: str) -> None:
    """The active marker, then the task in the spool (so the count never misses a worker)."""
    _active_dir(home).mkdir(parents=True, exist_ok=True)
    atomic_write(_active_dir(home) / f"{task.id}.json",
                 json.dumps({"job": task.id, "parent": task.parent, "created_at": task.created_at}) + "\n")
    if not spool.publish(home, task, text):
        raise ZenError(f"job id {task.id} is taken (spawn again)")


def _replay(home: Home, store: JobStore, seen: dict[str, Any]) -> dict[str, Any]:
    """A spawn seen before: its worker, published now if a crash cut the first spawn short."""
    job_id = str(seen.get("job"))
    task = load_task_text(str(seen.get("task") or ""), f"the recorded spawn of {job_id}")
    if not _known(home, job_id):
        _publish(home, task, str(seen["task"]))
    return _accepted(home, store, task, replayed=True)


def worker_of(home: Home, caller: Caller, job_id: str) -> Task:
    """`job_id`'s task when `caller` may act on it: a human on any job, a job on its own children
    only (never a sibling, its parent or a stranger)."""
    if caller.is_human:
        return JobStore(home).task(resolve_job(home, job_id))
    store = JobStore(home)
    if not store.exists(job_id):
        if _known(home, job_id):
            for d in (home.spool_new, home.spool_cur):
                path = d / f"{job_id}.yaml"
                if path.exists():
                    task = load_task_text(path.read_text(), str(path))
                    if task.parent == caller.job:
                        return task
        raise Refused(f"job {job_id} is not a worker of job {caller.job}: a job controls only its own workers")
    task = store.task(job_id)
    if task.parent != caller.job:
        raise Refused(f"job {job_id} is not a worker of job {caller.job}: a job controls only its own workers")
    return task


__all__ = ["Caller", "Refused", "RevisionMismatch", "SpawnRequest", "active_workers", "caller_from_env",
           "children_of", "depth_of", "spawn", "tree", "worker_of"]

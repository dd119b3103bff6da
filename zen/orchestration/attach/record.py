"""The record of an attached job: where it runs, its timeline from start to end, what it changed.

    place(cfg, cwd, lane)           -> Place: the checkout holding cwd and the lane it belongs to
    open_job(home, place, agent...) -> the job id (task.yaml, task.received with kind: attached)
    started(home, job, argv)        -> agent.spawned (pid: this `zen run`, the agent runs below it)
    Tree.of(root) / changed(a, b)   -> the checkout's state before and after: files.changed
    finish(home, job, code, signal) -> agent.exited with the agent's exit code; its leases released
    settle_orphans(home)            -> the end of attached jobs whose `zen run` died unheard

The task.received of an attached job carries `kind: attached` and the `cwd`; the supervisor never
starts, watches or harvests such a job (zen.core.recovery), its `zen run` follows it. Its
agent.spawned names no tmux session: the pid is the `zen run` process, which every process of
the agent runs under, so the turn hook and the resident guardian believe the agent's own calls
and no one else's (zen.store.panes). No worktree.created is ever recorded: nothing of zen's may
remove or harvest the user's checkout.
"""

from __future__ import annotations

import hashlib
import os
import shlex
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from zen.coord import leases
from zen.core.agents import AgentKind
from zen.core.events import Actor
from zen.core.events import EventType as E
from zen.core.ids import iso, make_job_id, slugify, utcnow
from zen.core.jobstate import JobStatus
from zen.core.model import Task
from zen.core.recovery import running_spawn
from zen.errors import UsageError, ZenError
from zen.store import events as ev_store
from zen.store import snapshots
from zen.store.atomic import atomic_write
from zen.store.config import Config, lane_path
from zen.store.jobs import JobStore, dump_task
from zen.store.layout import Home
from zen.store.panes import pane_pid

ATTACHED = "attached"
LIVE_STATES = frozenset(s.value for s in JobStatus if s.live)
LANE_DEFAULT_DOMAIN = "code"     # a lane without `domain:` (zen.guard.policy.levels says the same)


@dataclass(frozen=True)
class Place:
    cwd: Path
    root: Path                   # the git checkout holding cwd (its top), else cwd itself
    git: bool
    lane: str | None = None
    spec: dict[str, Any] = field(default_factory=dict)


def _git(cwd: Path, *args: str) -> str | None:
    try:
        r = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, timeout=60,
                           stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return r.stdout if r.returncode == 0 else None


def _inside(path: Path, root: Path) -> bool:
    return path == root or root in path.parents


def place(cfg: Config, cwd: Path, lane: str | None = None) -> Place:
    """Where `zen run` runs: the checkout holding `cwd` and the lane whose checkout that is (the
    deepest one holding it), or the lane named, which must hold it."""
    cwd = cwd.resolve()
    top = _git(cwd, "rev-parse", "--show-toplevel")
    root = Path(top.strip()).resolve() if top and top.strip() else cwd
    if lane is not None:
        spec = cfg.lane(lane)
        path = lane_path(spec).resolve()
        if not _inside(cwd, path):
            raise UsageError(f"the current directory {cwd} is not in lane {lane}'s checkout {path}: "
                             f"run zen run from there, or leave out --lane")
        return Place(cwd, path, top is not None, lane, spec)
    best: tuple[int, str, Path] | None = None
    for name, spec in cfg.lanes.items():
        path = lane_path(spec).resolve()
        if _inside(cwd, path) and (best is None or len(path.parts) > best[0]):
            best = (len(path.parts), name, path)
    if best is None:
        return Place(cwd, root, top is not None)
    return Place(cwd, best[2], top is not None, best[1], cfg.lanes[best[1]])


def open_job(home: Home, where: Place, agent: str, args: list[str], name: str | None = None) -> str:
    """A new attached job's record: task.yaml and task.received (kind: attached). The job id."""
    name = slugify(name or f"{agent}-{where.root.name}")
    job_id = make_job_id(name)
    domain = (str(where.spec.get("domain") or LANE_DEFAULT_DOMAIN)) if where.lane else None
    task = Task(id=job_id, name=name, prompt=shlex.join(["zen", "run", agent, *args]), agent=AgentKind(agent),
                lane=where.lane, repo=None if where.lane else str(where.root), domain=domain,
                created_at=iso(utcnow()), created_by="human")
    paths = home.job(job_id)
    paths.dir.mkdir(parents=True, exist_ok=False)
    atomic_write(paths.task, dump_task(task))
    ev_store.append(paths.dir, job_id, E.TASK_RECEIVED, Actor.HUMAN,
                    task=task.model_dump(mode="json", exclude={"script"}), kind=ATTACHED, cwd=str(where.cwd))
    JobStore(home).snapshot(job_id)    # state.json: the guardian reads the job's lane and domain there
    return job_id


def started(home: Home, job_id: str, argv: list[str], cwd: Path) -> None:
    """agent.spawned for the agent about to start below this process."""
    ev_store.append(home.job_dir(job_id), job_id, E.AGENT_SPAWNED, Actor.HUMAN, session="", target="",
                    pid=os.getpid(), argv=list(argv), kind=ATTACHED, cwd=str(cwd))
    JobStore(home).snapshot(job_id)


def failed(home: Home, job_id: str, reason: str) -> None:
    ev_store.append(home.job_dir(job_id), job_id, E.JOB_FAILED, Actor.HUMAN, reason=reason)
    JobStore(home).snapshot(job_id)


def refresh(home: Home, job_id: str) -> None:
    """state.json brought up to date (what the hooks appended meanwhile); never raises."""
    try:
        JobStore(home).snapshot(job_id)
    except (OSError, ZenError):
        pass


@dataclass(frozen=True)
class Tree:
    """A checkout's state: HEAD and each path git status names, with a digest of its content."""

    head: str | None
    dirty: dict[str, str]

    @classmethod
    def of(cls, root: Path) -> Tree | None:
        """None outside a git checkout."""
        out = _git(root, "status", "--porcelain=v1", "-z", "--untracked-files=all")
        if out is None:
            return None
        head = (_git(root, "rev-parse", "--verify", "-q", "HEAD") or "").strip() or None
        dirty: dict[str, str] = {}
        entries = out.split("\0")
        i = 0
        while i < len(entries):
            entry = entries[i]
            i += 1
            if len(entry) < 4:
                continue
            code, path = entry[:2], entry[3:]
            if "R" in code or "C" in code:
                i += 1      # a rename's or copy's source follows it
            dirty[path] = f"{code}:{_digest(root / path)}"
        return cls(head, dirty)


def _digest(path: Path) -> str:
    try:
        if path.is_symlink():
            return "link:" + os.readlink(path)
        if path.is_dir():
            return "dir"
        h = hashlib.blake2b(digest_size=12)
        with path.open("rb") as f:
            for block in iter(lambda: f.read(1 << 20), b""):
                h.update(block)
        return h.hexdigest()
    except OSError:
        return "gone"


def changed(root: Path, before: Tree | None, after: Tree | None) -> list[str]:
    """Paths (relative to the checkout) the session changed: committed since the first HEAD, or
    whose state in git status differs."""
    if before is None or after is None:
        return []
    paths = {p for p in set(before.dirty) | set(after.dirty) if before.dirty.get(p) != after.dirty.get(p)}
    if before.head and after.head and before.head != after.head:
        diff = _git(root, "diff", "--name-only", "-z", before.head, after.head) or ""
        paths |= {p for p in diff.split("\0") if p}
    return sorted(paths)


def finish(home: Home, job_id: str, code: int | None, signal: int | None, paths: list[str],
           why: str = "") -> None:
    """The end of an attached job: files.changed (when the checkout is git's), agent.exited with
    the agent's exit code, its leases released."""
    d = home.job_dir(job_id)
    if paths:
        ev_store.append(d, job_id, E.FILES_CHANGED, Actor.HUMAN, paths=paths, by=ATTACHED)
    # once: `zen kill-switch --stop-agents` (or zen finish) may have recorded the end already
    fields: dict[str, Any] = {"exit_code": code, "signal": signal, **({"why": why} if why else {})}
    ev_store.append_unless(d, job_id, E.AGENT_EXITED, lambda evs: running_spawn(evs) is None, Actor.HUMAN,
                           **fields)
    try:
        leases.release_job(str(home.root), job_id, "the attached session ended")
    except (OSError, ZenError):
        pass
    refresh(home, job_id)


def _alive(pid: int) -> bool:
    """Whether `pid` is still a `zen run` (a pid of a process that died may be another's now)."""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return b"zen" in f.read()
    except OSError:
        return False


def settle_orphans(home: Home) -> list[str]:
    """Attached jobs whose `zen run` died without recording the end (killed, its machine
    restarted): their end recorded now, with no exit code. The jobs settled."""
    done = []
    for snap in snapshots.unfinished(str(home.jobs)):
        if snap.get("executor") != ATTACHED or snap.get("state") not in LIVE_STATES:
            continue
        job_id = str(snap["job"])
        pid = pane_pid(str(home.root), job_id)
        if pid is None or pid == os.getpid() or _alive(pid):
            continue
        finish(home, job_id, None, None, [], why="its zen run ended without recording the end")
        done.append(job_id)
    return done


def is_attached(events: list[dict[str, Any]]) -> bool:
    return bool(events) and events[0].get("type") == E.TASK_RECEIVED and events[0].get("kind") == ATTACHED

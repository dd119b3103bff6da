"""A worker node's side of a turn: its cache of the lane's shared remote, the small zen home its
guardian and hooks use, and the job's worktree (DESIGN section 14).

    <workdir>/repos/<lane>-<hash of the remote>.git   bare cache, fetched into (one per lane)
    <workdir>/homes/<job>/                            the worker's home for the job:
        zen.yaml  policy/  incidents/                 the supervisor's policy, as sent
        control/remote-switch.json                    where the guardian reads the kill switch
        jobs/<job>/{task.yaml,events.jsonl,handoff.md}  hooks and the guardian append here
        worktrees/<job>/                              the agent's cwd, on branch zen/<job>

The guardian and the turn hooks run unchanged against that home, exactly as on the supervisor's
machine; `zen remote-turn` forwards what they append. The home survives between the turns of one
job on the same node (an agent's session files live next to it); the worktree is made afresh
from the remote for every turn.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from dataclasses import dataclass
from pathlib import Path

from zen.adapters import git as g
from zen.core.model import Task
from zen.core.remote import TurnSpec
from zen.store.atomic import atomic_write, flocked
from zen.store.jobs import JobStore, load_task_text
from zen.store.layout import CONFIG, CONTROL, REMOTE_SWITCH, Home

DEFAULT_WORKDIR = "~/.cache/zen/remote"
_SAFE = re.compile(r"[^A-Za-z0-9._-]+")


@dataclass(frozen=True)
class Workspace:
    root: Path
    cache: Path          # the bare cache of the lane's remote
    home: Home           # the worker's home for this job
    worktree: Path
    task: Task


def root_of(spec: TurnSpec) -> Path:
    return Path(os.path.expanduser(spec.workdir or DEFAULT_WORKDIR)).absolute()


def cache_of(root: Path, spec: TurnSpec) -> Path:
    digest = hashlib.sha1(spec.remote.encode()).hexdigest()[:10]
    return root / "repos" / f"{_SAFE.sub('-', spec.lane)}-{digest}.git"


def fetch_turn(root: Path, spec: TurnSpec) -> Path:
    """The lane's cache with the turn's starting point fetched from the shared remote."""
    cache = cache_of(root, spec)
    cache.parent.mkdir(parents=True, exist_ok=True)
    with flocked(cache.with_suffix(".lock")):  # two turns on one node share the cache
        if not (cache / "HEAD").exists():
            g.init_bare(cache)
        g.fetch(cache, spec.remote, f"+{spec.start_ref}:{spec.start_ref}")
    return cache


def make_home(root: Path, spec: TurnSpec, task: Task) -> Home:
    """The worker's home for the job: config, policy, the switch, the job's record."""
    home = Home(root / "homes" / spec.job)
    for sub in ("policy", "incidents", "jobs", "worktrees", CONTROL, "logs"):
        (home.root / sub).mkdir(parents=True, exist_ok=True)
    domain = task.domain or "code"
    atomic_write(home.root / CONFIG, f"zen: 1\n# a Ray worker's home for job {spec.job} (zen remote-turn)\n"
                                     f"lanes: {{}}\ndefaults:\n  domain: {domain}\n", durable=False)
    for rel, text in spec.policy.items():
        path = (home.root / rel).resolve()
        if home.root.resolve() not in path.parents:
            continue  # a policy path must stay inside the home
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(path, text, durable=False)
    switch = {"v": 1, "url": spec.switch_url, "token": spec.switch_token, "job": spec.job}
    atomic_write(home.root / CONTROL / REMOTE_SWITCH, json.dumps(switch) + "\n", durable=False, mode=0o600)
    JobStore(home).create(task)  # task.yaml and task.received: the guardian reads the job's domain there
    return home


def prepare(spec: TurnSpec) -> Workspace:
    root = root_of(spec)
    task = load_task_text(spec.task_yaml, "the turn's task")
    cache = fetch_turn(root, spec)
    home = make_home(root, spec, task)
    worktree = home.worktree(spec.job)
    with flocked(cache.with_suffix(".lock")):
        g.fresh_worktree(cache, worktree, f"zen/{spec.job}", spec.start_ref)
    if spec.start_head and g.rev(worktree, "HEAD") != spec.start_head:
        # the last turn's uncommitted files come back as uncommitted, on the agent's own commit
        g.reset_index(worktree, spec.start_head)
    handoff = spec.handoff
    if spec.supervisor_worktree:
        handoff = handoff.replace(spec.supervisor_worktree, str(worktree))
    atomic_write(home.job(spec.job).handoff, handoff, durable=False)
    return Workspace(root=root, cache=cache, home=home, worktree=worktree, task=task)


__all__ = ["DEFAULT_WORKDIR", "Workspace", "cache_of", "prepare", "root_of"]

"""Spawning one job: worktree, setup, included files, handoff, then the agent in its own tmux
session on zen's private server (DESIGN section 3).

Every step that leaves something behind is recorded before the next begins, so a supervisor
killed midway can tell on restart what exists: `worktree.created` means the worktree exists (and
is never created twice); a tmux session without `agent.spawned` is a launch that was cut short
and is redone in place; `agent.spawned` means the agent runs (or ran) and is only ever watched.
"""

from __future__ import annotations

import logging
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

from zen.adapters import git as g
from zen.adapters.tmux import Tmux
from zen.core.events import EventType as E
from zen.core.model import Task
from zen.errors import ZenError
from zen.orchestration import handoff
from zen.store.atomic import atomic_write
from zen.store.config import Config, lane_path
from zen.store.home import Home
from zen.store.jobs import JobStore
from zen.store.layout import WORKTREE_PRIVATE, WORKTREE_TMP

log = logging.getLogger(__name__)

SETUP_TAIL = 2000


class SpawnError(ZenError):
    """A start failed: the job is recorded as failed with this sentence as the reason."""


def session_name(job_id: str) -> str:
    return f"zen-{job_id}"


def branch_name(job_id: str) -> str:
    return f"zen/{job_id}"


def zen_argv() -> list[str]:
    """How an agent's hooks call this very zen: the console script next to this interpreter."""
    script = Path(sys.executable).parent / "zen"
    if script.exists():
        return [str(script)]
    return [sys.executable, "-m", "zen"]


def lane_of(cfg: Config, task: Task) -> tuple[str, Path, str, dict[str, Any]]:
    """(lane name, main checkout, base ref, lane spec) for a task given a lane or a repo."""
    if task.lane:
        lanes = cfg.lanes
        if task.lane not in lanes:
            raise SpawnError(f"lane {task.lane!r} is no longer in zen.yaml (zen lane add it again)")
        spec = lanes[task.lane]
        return task.lane, lane_path(spec), str(task.base or spec.get("base") or "HEAD"), spec
    repo = Path(str(task.repo)).expanduser()
    return repo.name, repo, str(task.base or "HEAD"), {}


def agent_env(cfg: Config, agent: str, base: dict[str, str] | None = None) -> dict[str, str]:
    """The supervisor's environment (API keys, base URLs reach the agent) with zen.yaml's
    agents.<name>.env added and drop_env removed."""
    env = dict(os.environ if base is None else base)
    settings = cfg.agent_settings(agent)
    for name in settings.get("drop_env") or []:
        env.pop(str(name), None)
    for k, v in dict(settings.get("env") or {}).items():
        env[str(k)] = str(v)
    for name in ("TMUX", "TMUX_PANE"):
        env.pop(name, None)
    return env


def run_setup(worktree: Path, command: str, env: dict[str, str], timeout_s: float = 1800) -> tuple[int, str]:
    try:
        r = subprocess.run(["sh", "-c", command], check=False, cwd=worktree, env=env, capture_output=True, text=True,
                           timeout=timeout_s, stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired as exc:
        out = (exc.stdout or b"") if isinstance(exc.stdout, bytes) else (exc.stdout or "").encode()
        return 124, out.decode(errors="replace")[-SETUP_TAIL:]
    return r.returncode, (r.stdout + r.stderr)[-SETUP_TAIL:]


def copy_includes(repo: Path, worktree: Path, patterns: list[str]) -> tuple[list[str], list[str]]:
    """Copy untracked files (e.g. .env.local) from the lane's main checkout. (copied, missing)"""
    copied: list[str] = []
    missing: list[str] = []
    for pattern in patterns:
        matches = sorted(repo.glob(pattern)) if any(c in pattern for c in "*?[") else [repo / pattern]
        matches = [m for m in matches if m.exists()]
        if not matches:
            missing.append(pattern)
            continue
        for src in matches:
            rel = src.relative_to(repo)
            if rel.parts and rel.parts[0] == ".git":
                continue
            dst = worktree / rel
            dst.parent.mkdir(parents=True, exist_ok=True)
            if src.is_dir():
                shutil.copytree(src, dst, dirs_exist_ok=True, symlinks=True)
            else:
                shutil.copy2(src, dst, follow_symlinks=False)
            copied.append(str(rel))
    return copied, missing


def _level(home: Home, domain: str | None) -> str | None:
    from zen.orchestration.autonomy import domain_level

    level = domain_level(home, domain)
    return level.label if level is not None else None


def prepare(home: Home, cfg: Config, store: JobStore, job_id: str) -> dict[str, Any]:
    """Worktree, setup, includes: everything before the agent. Recorded step by step."""
    task = store.task(job_id)
    lane, repo, base, spec = lane_of(cfg, task)
    worktree = home.worktree(job_id)
    branch = branch_name(job_id)
    try:
        base_commit = g.add_worktree(repo, worktree, branch, base)
    except ZenError as exc:
        raise SpawnError(str(exc)) from None
    store.append(job_id, E.WORKTREE_CREATED, path=str(worktree), branch=branch, base_commit=base_commit,
                 base=base, lane=lane)
    return after_worktree(home, cfg, store, job_id, task=task, lane=lane, repo=repo, spec=spec,
                          worktree=worktree, branch=branch, base_commit=base_commit)


def after_worktree(home: Home, cfg: Config, store: JobStore, job_id: str, *, task: Task, lane: str,
                   repo: Path, spec: dict[str, Any], worktree: Path, branch: str, base_commit: str) -> dict[str, Any]:
    tmpdir = g.make_private_dir(worktree, WORKTREE_TMP)
    # Each private dir holds a `*` .gitignore (git.make_private_dir), which keeps the agent's
    # `git status` clean. Not info/exclude as well: git then refuses the harvest's pathspecs.
    g.make_private_dir(worktree, WORKTREE_PRIVATE)
    env = agent_env(cfg, task.agent.value)
    env.update(job_env(home, job_id, task, worktree, tmpdir))
    setup = spec.get("setup")
    if setup:
        code, tail = run_setup(worktree, str(setup), env)
        if code != 0:
            store.append(job_id, E.SETUP_FAILED, command=str(setup), exit_code=code, output=tail)
            raise SpawnError(f"the lane's setup command `{setup}` failed with exit code {code}")
        store.append(job_id, E.SETUP_DONE, command=str(setup), exit_code=0, output=tail[-500:])
    includes = [str(p) for p in spec.get("include") or []]
    if includes:
        copied, missing = copy_includes(repo, worktree, includes)
        store.append(job_id, E.FILES_INCLUDED, files=copied, missing=missing)
    level = _level(home, task.domain)
    text = handoff.render(task, job_id=job_id, lane=lane, repo=repo, worktree=worktree, branch=branch,
                          base_commit=base_commit, level=level, home=home)
    atomic_write(store.paths(job_id).handoff, text)
    return {"worktree": worktree, "env": env, "task": task}


def job_env(home: Home, job_id: str, task: Task, worktree: Path, tmpdir: Path) -> dict[str, str]:
    return {
        "ZEN_HOME": str(home.root),
        "ZEN_JOB_ID": job_id,
        "ZEN_WORKTREE": str(worktree),
        "ZEN_PROMPT": task.prompt,
        "ZEN_HANDOFF": str(home.job(job_id).handoff),
        "TMPDIR": str(tmpdir),
        **({"ZEN_MODEL": task.model} if task.model else {}),
        **({"ZEN_MAX_TOKENS": str(task.max_tokens)} if task.max_tokens else {}),
    }


def launch(home: Home, cfg: Config, store: JobStore, tmux: Tmux, job_id: str, *, worktree: Path,
           env: dict[str, str], task: Task) -> dict[str, Any]:
    """The agent in its own tmux session, output streamed to pane.log; records agent.spawned."""
    from zen.agents import get_adapter
    from zen.agents.base import LaunchContext

    adapter = get_adapter(task.agent.value)
    paths = store.paths(job_id)
    ctx = LaunchContext(home=home.root, job_id=job_id, job_dir=paths.dir, worktree=worktree,
                        handoff=paths.handoff, task=task, zen_argv=zen_argv(),
                        settings=cfg.agent_settings(task.agent.value))
    spec = adapter.launch(ctx)
    for path, content in spec.files.items():
        p = Path(path) if Path(path).is_absolute() else worktree / path
        p.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(p, content, durable=False)
    full_env = {**env, **spec.env}
    session = session_name(job_id)
    # start_pane replaces a session of this name (a launch cut short by a crash is redone in
    # place) and removes an exit file left by an earlier attempt
    info = tmux.start_pane(session, worktree, list(spec.argv), full_env, paths.pane_log,
                           exit_path=paths.exit_file)
    store.append(job_id, E.AGENT_SPAWNED, session=session, target=info.pane_id, pid=info.pid,
                 argv=list(spec.argv), socket=tmux.socket)
    return {"session": session, "target": info.pane_id, "initial_input": getattr(spec, "initial_input", None)}


def run_preflight(home: Home, cfg: Config, store: JobStore, job_id: str) -> None:
    """Preflight before the agent may start (DESIGN section 7): recorded either way; a FAIL
    stops the spawn with the report in the timeline."""
    from zen.agents.settings import hook_settings
    from zen.orchestration import preflight

    task = store.task(job_id)
    report = preflight.for_spawn(home, task.lane, hook_settings(zen_argv()))
    if not report.ok:
        store.append(job_id, E.PREFLIGHT_FAILED, report=report.as_dict()["checks"])
        first = report.failures[0]
        raise SpawnError(f"preflight failed: {first.name}: {first.message}")
    warnings = [c.as_dict() for c in report.checks if c.status == preflight.WARN]
    store.append(job_id, E.PREFLIGHT_PASSED, warnings=warnings)


def spawn(home: Home, cfg: Config, store: JobStore, tmux: Tmux, job_id: str) -> dict[str, Any]:
    """Start a queued job. Raises SpawnError (or another ZenError) when the start fails."""
    run_preflight(home, cfg, store, job_id)
    prepared = prepare(home, cfg, store, job_id)
    return launch(home, cfg, store, tmux, job_id, worktree=prepared["worktree"], env=prepared["env"],
                  task=prepared["task"])


def resume(home: Home, cfg: Config, store: JobStore, tmux: Tmux, job_id: str) -> dict[str, Any]:
    """Finish a spawn that a crash cut short after worktree.created (never creates it again)."""
    snap = store.snapshot(job_id)
    task = store.task(job_id)
    lane, repo, _base, spec = lane_of(cfg, task)
    worktree = Path(snap.worktree or home.worktree(job_id))
    if not worktree.is_dir():
        raise SpawnError(f"the worktree {worktree} vanished before the agent started")
    types = {e.get("type") for e in store.events(job_id)}
    if E.SETUP_FAILED in types:
        raise SpawnError("the lane's setup command failed")
    env = agent_env(cfg, task.agent.value)
    env.update(job_env(home, job_id, task, worktree, worktree / WORKTREE_TMP))
    if not store.paths(job_id).handoff.exists() or (E.SETUP_DONE not in types and spec.get("setup")):
        after_worktree(home, cfg, store, job_id, task=task, lane=lane, repo=repo, spec=spec, worktree=worktree,
                       branch=snap.branch or branch_name(job_id), base_commit=snap.base_commit or "HEAD")
    return launch(home, cfg, store, tmux, job_id, worktree=worktree, env=env, task=task)

"""`zen recover JOB` (DESIGN 13): a job whose agent died, or whose session is unusable, goes on in a
new agent session in the same worktree, with a recovery handoff (the goal, what the timeline and
the worktree say was done, the agent's last output, what remains).

Only one recovery of a job runs at a time: the recovery lease is a kernel lock on
jobs/<id>/.recover.lock, taken without waiting (a second `zen recover` is refused while it is
held) and held until the new session runs; a job whose recovered session lives is not recovered
again. The task is never lost and the first session's work stays where it was: on the job's branch
and review branch (the worktree is reused, never reset). The new session is recorded like any
spawn (`recovery.started`, `agent.spawned`, `recovery.done`); a running supervisor adopts it at
its next tick (control/adopt/<id>), a restarted one finds it in the timeline.
"""

from __future__ import annotations

import fcntl
import os
from dataclasses import dataclass
from pathlib import Path

from zen.adapters import git as g
from zen.adapters.tmux import Tmux
from zen.core.events import EventType as E
from zen.core.model import JobStatus, Task
from zen.core.results import Result
from zen.errors import RecoveryRefused
from zen.orchestration.context import JobContext
from zen.orchestration.job import control, panes, settle, spawn
from zen.orchestration.read.query import resolve_job
from zen.store.atomic import atomic_write
from zen.store.config import Config
from zen.store.home import Home
from zen.store.jobs import JobStore

OUTPUT_LINES = 40


def adopt_dir(home: Home) -> Path:
    return home.adopt


def recoverable(home: Home, job_id: str) -> str | None:
    """Why the job cannot be recovered now, or None when it can."""
    store = JobStore(home)
    snap = store.snapshot(job_id, write=False)
    if snap.state is JobStatus.cancelled:
        return f"job {job_id} was cancelled; dispatch the task again instead"
    if snap.state is JobStatus.queued:
        return f"job {job_id} has not started yet"
    if not snap.worktree or not Path(snap.worktree).is_dir():
        return f"job {job_id} has no worktree any more (zen clean removed it), so there is nothing to go on from"
    info = Tmux.for_home(home).pane(snap.tmux_session) if snap.tmux_session else None
    if snap.state.live and info is not None and not info.dead:
        return f"job {job_id}'s agent is still running (zen attach {job_id}, or zen cancel it first)"
    return None


def recovery_handoff(home: Home, job_id: str, task: Task) -> str:
    """What the new session reads first: the goal, what was done, the last output, what remains."""
    store = JobStore(home)
    snap = store.snapshot(job_id, write=False)
    events = store.events(job_id)
    wt = Path(str(snap.worktree))
    commits = g.commits_between(wt, snap.base_commit or "HEAD", "HEAD") if snap.base_commit else []
    files = g.changed_files(wt, snap.base_commit) if snap.base_commit else []
    reports = [e for e in events if e.get("type") == E.TEAM_REPORT]
    turns = sum(1 for e in events if e.get("type") == E.GOAL_TURN)
    exits = [e for e in events if e.get("type") == E.AGENT_EXITED]
    how = ""
    if exits:
        last = exits[-1]
        how = f" (its agent ended with code {last.get('exit_code')}, signal {last.get('signal')})"
    try:
        tail = control.strip_ansi(store.paths(job_id).pane_log.read_text(errors="replace")).rstrip().splitlines()
    except OSError:
        tail = []
    lines = [
        f"# Recovery of job {job_id}: {task.name}", "",
        f"The previous agent session of this job stopped before its goal was done{how}. You continue it",
        f"in the same worktree, `{wt}` (branch `{snap.branch}`): everything it committed or left there is",
        "still there. Do not start over: check what is done, then finish what remains.", "",
        "## The goal", "", task.prompt.rstrip(), "",
        "## What was done", "",
        f"- Goal turns so far: {turns}." if task.goal else "- (a one-turn task)",
        *([f"- Commits on the branch since the base: {len(commits)}:"] + [f"  - {c['sha'][:10]} {c['subject']}"
                                                                          for c in commits[-20:]]
          if commits else ["- No commits since the base yet."]),
        *([f"- Files changed against the base: {', '.join(f'`{f}`' for f in files[:40])}."] if files
          else ["- No files changed against the base."]),
        *[f"- Reported {r.get('status')}: {r.get('summary') or r.get('blocker') or ''}".rstrip(": ")
          for r in reports[-5:]],
        "", "## The agent's last output", "", "```", *tail[-OUTPUT_LINES:], "```", "",
        "## What remains", "",
        "The goal above, from where the work stands. Report with agent_report when it is done (or blocked)."
        if task.parent or task.goal else "The task above, from where the work stands.",
        "", f"The original handoff is {store.paths(job_id).handoff}.", "",
    ]
    return "\n".join(lines)


@dataclass(frozen=True)
class Recovered(Result):
    """A new agent session for the job: which attempt, where it runs, the handoff it reads."""

    job: str
    attempt: int
    state: str
    session: str
    worktree: Path
    handoff: Path


def recover(home: Home, ref: str, *, by: str = "human") -> Recovered:
    """Start a new agent session for the job in its worktree, under the job's recovery lease."""
    store = JobStore(home)
    job_id = resolve_job(home, ref)
    lock = store.paths(job_id).recovery_lock
    fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise RecoveryRefused(f"a recovery of job {job_id} is already running; wait for it") from None
        return _recover(home, store, job_id, by)
    finally:
        os.close(fd)


def _recover(home: Home, store: JobStore, job_id: str, by: str) -> Recovered:
    why = recoverable(home, job_id)
    if why is not None:
        raise RecoveryRefused(why)
    cfg = Config.load(home)
    tmux = Tmux.for_home(home)
    snap = store.snapshot(job_id)
    if snap.tmux_session:
        info = panes.with_exit_status(home, job_id, tmux.pane(snap.tmux_session))
        settle.append_exit_once(store, job_id, info, actor=by)   # the old session's end, if unrecorded
        tmux.kill_session(snap.tmux_session)
    task = store.task(job_id)
    handoff = store.paths(job_id).recovery_handoff
    atomic_write(handoff, recovery_handoff(home, job_id, task))
    attempt = sum(1 for e in store.events(job_id) if e.get("type") == E.RECOVERY_STARTED) + 1
    session = spawn.session_name(job_id)
    store.append(job_id, E.RECOVERY_STARTED, actor=by, session=session, attempt=attempt, handoff=str(handoff))
    worktree = Path(str(snap.worktree))
    ctx = JobContext.load(home, job_id, config=cfg, store=store)
    env = spawn.launch_env(ctx, worktree)
    env["ZEN_HANDOFF"] = str(handoff)
    started = spawn.launch(ctx, tmux, spawn.Prepared(worktree, env), handoff=handoff, fresh=True)
    store.append(job_id, E.RECOVERY_DONE, actor=by, session=started.session, attempt=attempt)
    adopt_dir(home).mkdir(parents=True, exist_ok=True)
    atomic_write(adopt_dir(home) / job_id, f"{attempt}\n", durable=False)
    snap = store.snapshot(job_id)
    return Recovered(job_id, attempt, snap.state.value, started.session, worktree, handoff)


__all__ = ["Recovered", "RecoveryRefused", "adopt_dir", "recover", "recoverable", "recovery_handoff"]

"""Spawning one job: worktree, setup, included files, handoff, then the agent in its own tmux
session on zen's private server (DESIGN section 3).

Every step that leaves something behind is recorded before the next begins, so a supervisor
killed midway can tell on restart what exists: `worktree.created` means the worktree exists (and
is never created twice); `spawn.intent` says an agent of that attempt may have been started, and
tmux says whether it was (its pane carries the job id and attempt, set in the very tmux call that
starts it): such a pane is adopted, a session without the mark is a placeholder that is replaced;
`agent.spawned` means the agent runs (or ran) and is only ever watched. zen.store.faults injects
a crash at each of these steps for the tests.
"""

from __future__ import annotations

import logging
import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from zen.adapters import git as g
from zen.adapters import worktree as worktree_bg
from zen.adapters.sandbox import run_dir_for
from zen.adapters.tmux import PaneInfo, Tmux
from zen.agents import get_adapter
from zen.agents.base import LaunchContext
from zen.agents.common import inline, settings_env, zen_argv
from zen.agents.settings import hook_settings
from zen.agents.unguarded import HUMAN_CHOSEN, is_guarded, sandbox_argv, spawn_check
from zen.agents.unguarded import mode as unguarded_mode
from zen.agents.wall import ZEN_WALLED
from zen.agents.wall import enabled as wall_enabled
from zen.agents.wall import spawn_check as wall_check
from zen.core.events import EventType as E
from zen.core.model import Task
from zen.errors import LaneGone, SpawnError, ZenError
from zen.guard.policy.levels import kill_switch_on
from zen.observe import telemetry
from zen.orchestration.context import JobContext
from zen.orchestration.job import handoff, preflight
from zen.orchestration.lanes import Lane, resolve_lane
from zen.orchestration.remote.turns import executor_of
from zen.orchestration.safety.autonomy import domain_level
from zen.store import faults
from zen.store.atomic import atomic_write
from zen.store.config import Config
from zen.store.faults import crash_point
from zen.store.layout import WORKTREE_PRIVATE, WORKTREE_TMP, Home, user_umask

log = logging.getLogger(__name__)

SETUP_TAIL = 2000


@dataclass(frozen=True)
class Prepared:
    """What the steps before the agent leave: its worktree and the environment it starts with."""

    worktree: Path
    env: dict[str, str]


@dataclass(frozen=True)
class Launched:
    """The agent runs: its tmux session and pane, and the text to type once it first waits."""

    session: str
    target: str
    initial_input: str | None = None


def session_name(job_id: str) -> str:
    return f"zen-{job_id}"


def branch_name(job_id: str) -> str:
    return f"zen/{job_id}"


def lane_of(ctx: JobContext) -> Lane:
    """The job's lane; a lane removed from zen.yaml fails the start with a sentence."""
    try:
        return ctx.lane
    except LaneGone as exc:
        raise SpawnError(str(exc)) from None


def pane_env(cfg: Config, agent: str, base: dict[str, str] | None = None) -> dict[str, str]:
    """The environment an agent (and the lane's setup) starts with: the supervisor's own (API keys
    and base URLs reach the agent) without zen.yaml's agents.<name>.drop_env and tmux's variables,
    plus agents.<name>.env (zen.agents.common.settings_env, the one reading of it)."""
    env = dict(os.environ if base is None else base)
    settings = cfg.agent_settings(agent)
    for name in settings.get("drop_env") or []:
        env.pop(str(name), None)
    env.update(settings_env(settings))
    for name in ("TMUX", "TMUX_PANE", faults.ENV):  # faults.ENV: a test's crash point is the supervisor's
        env.pop(name, None)
    return env


def run_setup(worktree: Path, command: str, env: dict[str, str], timeout_s: float = 1800) -> tuple[int, str]:
    try:
        r = subprocess.run(["sh", "-c", command], check=False, cwd=worktree, env=env, capture_output=True, text=True,
                           umask=user_umask(), timeout=timeout_s, stdin=subprocess.DEVNULL)
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
    level = domain_level(home, domain)
    return level.label if level is not None else None


def start_level(ctx: JobContext) -> str:
    """The level the agent starts at: observe under the kill switch, else its domain's (suggest
    when none says)."""
    if kill_switch_on(str(ctx.home.root)):
        return "observe"
    return _level(ctx.home, ctx.task.domain) or "suggest"


def job_env(ctx: JobContext, worktree: Path) -> dict[str, str]:
    """What zen adds for every agent: where it is, what it does, where its scratch files go."""
    return {
        "ZEN_HOME": str(ctx.home.root),
        "ZEN_JOB_ID": ctx.job_id,
        "ZEN_WORKTREE": str(worktree),
        # a long prompt reaches the agent as files only (zen.agents.common.INLINE_PROMPT_MAX)
        **({"ZEN_PROMPT": ctx.task.prompt} if inline(ctx.task.prompt) else {}),
        "ZEN_PROMPT_FILE": str(ctx.paths.prompt),
        "ZEN_HANDOFF": str(ctx.paths.handoff),
        "TMPDIR": str(worktree / WORKTREE_TMP),
        **({"ZEN_MODEL": ctx.task.model} if ctx.task.model else {}),
        **({"ZEN_MAX_TOKENS": str(ctx.task.max_tokens)} if ctx.task.max_tokens else {}),
    }


def launch_env(ctx: JobContext, worktree: Path) -> dict[str, str]:
    env = pane_env(ctx.config, ctx.agent)
    env.update(job_env(ctx, worktree))
    return env


def prepare(ctx: JobContext, pending: worktree_bg.PendingWorktree, text: str | None = None) -> Prepared:
    """Worktree, setup, includes, handoff: everything before the agent. Recorded step by step.
    `pending`: the worktree's `git worktree add` already under way (spawn starts it before the
    preflight); `text`: the handoff already rendered meanwhile."""
    lane = lane_of(ctx)
    worktree = ctx.home.worktree(ctx.job_id)
    branch = branch_name(ctx.job_id)
    try:
        base_commit = pending.finish()
    except ZenError as exc:
        raise SpawnError(str(exc)) from None
    crash_point("spawn.worktree")
    ctx.append_unsynced(E.WORKTREE_CREATED, path=str(worktree), branch=branch, base_commit=base_commit,
                        base=lane.base, lane=lane.name)
    crash_point("spawn.worktree_recorded")
    return after_worktree(ctx, worktree, branch=branch, base_commit=base_commit,
                          text=text if base_commit == pending.base_commit else None)


def render_handoff(ctx: JobContext, worktree: Path, *, branch: str, base_commit: str) -> str:
    lane = lane_of(ctx)
    return handoff.render(ctx.task, job_id=ctx.job_id, lane=lane.name, repo=lane.repo, worktree=worktree,
                          branch=branch, base_commit=base_commit, level=_level(ctx.home, ctx.task.domain),
                          home=ctx.home)


def after_worktree(ctx: JobContext, worktree: Path, *, branch: str, base_commit: str,
                   text: str | None = None) -> Prepared:
    lane = lane_of(ctx)
    g.make_private_dir(worktree, WORKTREE_TMP)
    # Each private dir holds a `*` .gitignore (git.make_private_dir), which keeps the agent's
    # `git status` clean. Not info/exclude as well: git then refuses the harvest's pathspecs.
    g.make_private_dir(worktree, WORKTREE_PRIVATE)
    env = launch_env(ctx, worktree)
    if lane.setup:
        code, tail = run_setup(worktree, lane.setup, env)
        if code != 0:
            ctx.append(E.SETUP_FAILED, command=lane.setup, exit_code=code, output=tail)
            raise SpawnError(f"the lane's setup command `{lane.setup}` failed with exit code {code}")
        ctx.append(E.SETUP_DONE, command=lane.setup, exit_code=0, output=tail[-500:])
    if lane.includes:
        copied, missing = copy_includes(lane.repo, worktree, lane.includes)
        ctx.append(E.FILES_INCLUDED, files=copied, missing=missing)
    if text is None:
        text = render_handoff(ctx, worktree, branch=branch, base_commit=base_commit)
    # both are made again from the task and the repository by any later start (resume() when the
    # handoff is missing or empty): nothing a crash of the machine could take from them is lost,
    # so they are not fsynced (four fsyncs of every start)
    atomic_write(ctx.paths.prompt, ctx.task.prompt, cache=True)
    atomic_write(ctx.paths.handoff, text, cache=True)
    crash_point("spawn.prepared")
    return Prepared(worktree, env)


def attempt_of(ctx: JobContext) -> int:
    """This start's attempt: one per worktree.created (every start records one) and one per
    recovery.started (zen recover's new session in the same worktree)."""
    return sum(1 for e in ctx.events() if e.get("type") in (E.WORKTREE_CREATED, E.RECOVERY_STARTED))


def launch(ctx: JobContext, tmux: Tmux, prepared: Prepared, handoff: Path | None = None, *,
           fresh: bool = False, attempt: int | None = None) -> Launched:
    """The agent in its own tmux session, output streamed to pane.log; records agent.spawned.
    `handoff` is what the agent reads first (default handoff.md; a recovery gives its own).
    `fresh`: this process began the attempt moments ago (its worktree.created or recovery.started),
    so no pane can carry its mark yet and tmux is not asked.

    Spawn exactly once (issue 15): `spawn.intent` is recorded before tmux starts anything, and
    the pane is marked with the attempt in the same tmux call that starts the agent. A restart
    that finds this attempt's marked pane adopts it (records the agent.spawned the crash cut
    short) instead of starting a second agent; a session without the mark (a placeholder) or of
    an earlier attempt is replaced. `attempt`: attempt_of(ctx), counted already by the caller."""
    adapter = get_adapter(ctx.agent)
    paths = ctx.paths
    worktree = prepared.worktree
    lane = lane_of(ctx)
    spec = adapter.launch(LaunchContext(home=ctx.home.root, job_id=ctx.job_id, job_dir=paths.dir, worktree=worktree,
                                        handoff=handoff or paths.handoff, task=ctx.task, zen_argv=zen_argv(),
                                        settings=ctx.agent_settings, repo=lane.repo, lane=dict(lane.spec),
                                        extra_args=tuple(telemetry.agent_args(
                                            ctx.home.control, ctx.job_id, ctx.agent, prepared.env,
                                            ctx.config.section("observatory"))),
                                        level=start_level(ctx), wall=wall_enabled(lane.spec)))
    unguarded_walled = (not is_guarded(ctx.agent) and ctx.agent not in HUMAN_CHOSEN
                        and unguarded_mode(lane.spec) == "sandbox")
    if unguarded_walled or (ctx.agent in ZEN_WALLED and wall_enabled(lane.spec)):
        spec.argv = sandbox_argv(spec.argv, worktree=worktree, zen_home=ctx.home.root, handoff=paths.handoff,
                                 git_dir=g.common_dir(worktree), agent=ctx.agent, lane=lane.spec,
                                 env={**os.environ, **prepared.env, **spec.env},
                                 run_dir=run_dir_for(str(paths.dir)), writable=spec.wall_writable,
                                 read_only=spec.wall_read_only)
    session = session_name(ctx.job_id)
    attempt = attempt_of(ctx) if attempt is None else attempt
    mark = f"{ctx.job_id}:{attempt}"
    found = None if fresh else tmux.mark(session)
    if found is not None and found[1] == mark:
        return _adopt(ctx, tmux, found[0], spec.argv, spec.initial_input)
    for path, content in spec.files.items():
        p = Path(path) if Path(path).is_absolute() else worktree / path
        p.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(p, content, durable=False)
    env = {**prepared.env, **spec.env}
    # the agent's OpenTelemetry to this supervisor's receiver, tagged with the job (DESIGN 8)
    env.update(telemetry.job_env(ctx.home.control, paths.dir, ctx.job_id, ctx.agent,
                                 ctx.task.lane or Path(str(ctx.task.repo or "")).name, env,
                                 ctx.config.section("observatory")))
    ctx.append_unsynced(E.SPAWN_INTENT, attempt=attempt, session=session)  # agent.spawned's fsync: spawn()
    crash_point("spawn.intended")
    # start_pane replaces a session of this name (a placeholder left by a launch cut short, or an
    # earlier attempt's) and removes an exit file left by an earlier attempt
    # the agent works with the user's own umask, not zen's private one (layout.user_umask)
    argv = ["sh", "-c", 'umask "$0" && exec "$@"', f"{user_umask():03o}", *spec.argv]
    info = tmux.start_pane(session, worktree, argv, env, paths.pane_log,
                           exit_path=paths.exit_file, window=ctx.task.name, mark=mark)
    crash_point("tmux.agent")
    ctx.append(E.AGENT_SPAWNED, session=session, target=info.pane_id, pid=info.pid, argv=list(spec.argv),
               socket=tmux.socket, **_initial(spec.initial_input))
    crash_point("spawn.spawned")
    return Launched(session, info.pane_id, spec.initial_input)


def _initial(text: str | None) -> dict[str, str]:
    # kept in agent.spawned so a restarted supervisor still types it (a pointer and at most a
    # short prompt: zen.agents.common.first_prompt)
    return {"initial_input": text} if text else {}


def _adopt(ctx: JobContext, tmux: Tmux, info: PaneInfo, argv: list[str], initial_input: str | None) -> Launched:
    """This attempt's agent already runs (or ran): a crash came between tmux starting it and
    agent.spawned. Record it now; never start it again."""
    log.info("job %s: adopting the agent already running in %s (a start cut short)", ctx.job_id, info.session)
    ctx.append(E.AGENT_SPAWNED, session=info.session, target=info.pane_id, pid=info.pid, argv=list(argv),
               socket=tmux.socket, adopted=True, **_initial(initial_input))
    return Launched(info.session, info.pane_id, initial_input)


def run_preflight(ctx: JobContext, *, durable: bool = True) -> None:
    """Preflight before the agent may start (DESIGN section 7): recorded either way; a FAIL
    stops the spawn with the report in the timeline."""
    report = preflight.for_spawn(ctx.home, ctx.task.lane, hook_settings(zen_argv()))
    spec = lane_of(ctx).spec
    unguarded = spawn_check(ctx.agent, ctx.task.lane, spec)
    if unguarded is not None:  # a copy: the spawn cache keeps the shared report
        report = preflight.Report([*report.checks, preflight.Check(f"agent {ctx.agent}", *unguarded)])
    wall = wall_check(ctx.agent, ctx.task.lane, spec)
    if wall is not None:
        report = preflight.Report([*report.checks, preflight.Check(f"sandbox of {ctx.agent}", *wall)])
    if not report.ok:
        ctx.append(E.PREFLIGHT_FAILED, report=report.as_dict()["checks"])
        first = report.failures[0]
        raise SpawnError(f"preflight failed: {first.name}: {first.message}")
    warnings = [c.as_dict() for c in report.checks if c.status == preflight.WARN]
    (ctx.append if durable else ctx.append_unsynced)(E.PREFLIGHT_PASSED, warnings=warnings)
    crash_point("spawn.preflight")


def early_worktree(home: Home, cfg: Config, task: Task) -> worktree_bg.PendingWorktree | None:
    """`git worktree add` for a task just claimed, begun before its record is written (the
    supervisor's intake), for spawn(early=) to take; None when the task is not the plain case
    (dependencies, a Ray executor, a lane that does not resolve). Never raises."""
    try:
        if task.depends_on or executor_of(cfg, task.lane, task.executor).remote:
            return None
        lane = resolve_lane(cfg, task)
        return worktree_bg.start_worktree(lane.repo, home.worktree(task.id), branch_name(task.id), lane.base)
    except Exception:   # any doubt: the spawn starts its own
        return None


def spawn(ctx: JobContext, tmux: Tmux, early: worktree_bg.PendingWorktree | None = None) -> Launched:
    """Start a queued job. Raises SpawnError (or another ZenError) when the start fails.
    `early`: this job's worktree begun at its claim (early_worktree), else it is begun here.

    The worktree's `git worktree add` runs in the background while the preflight is run and the
    handoff rendered (most of a start is waiting on git otherwise); the timeline still says
    preflight.passed before worktree.created, and a preflight that fails takes back the worktree
    and branch made meanwhile, which no agent has seen. A crash meanwhile leaves at most a fresh
    worktree without its worktree.created: the next start finds it and keeps it (add_worktree).

    The steps between job.queued and agent.spawned (preflight.passed, worktree.created,
    spawn.intent) are written without their own fsync: agent.spawned's fsync makes them durable
    with it. Until then a crash of the process loses nothing (the kernel has them); a crash of the
    machine can take only that tail, and with it the tmux server and the agent it may have
    started, so what remains is a job still queued, whose next start finds its worktree again.
    """
    lane = lane_of(ctx)
    worktree = ctx.home.worktree(ctx.job_id)
    branch = branch_name(ctx.job_id)
    if early is not None and (early.repo_path, early.path, early.branch, early.base) != (lane.repo, worktree,
                                                                                         branch, lane.base):
        early.abandon()   # zen.yaml changed the lane since the claim
        early = None
    pending = early if early is not None else worktree_bg.start_worktree(lane.repo, worktree, branch, lane.base)
    try:
        run_preflight(ctx, durable=False)
        text = None
        if pending.base_commit is not None:
            text = render_handoff(ctx, worktree, branch=branch, base_commit=pending.base_commit)
        attempt = attempt_of(ctx) + 1   # with the worktree.created prepare() records
    except BaseException:
        pending.abandon()
        raise
    return launch(ctx, tmux, prepare(ctx, pending, text), fresh=True, attempt=attempt)


def _written(path: Path) -> bool:
    try:
        return path.stat().st_size > 0
    except OSError:
        return False


def resume(ctx: JobContext, tmux: Tmux) -> Launched:
    """Finish a spawn that a crash cut short after worktree.created (never creates it again)."""
    snap = ctx.snapshot()
    worktree = Path(snap.worktree or ctx.home.worktree(ctx.job_id))
    if not worktree.is_dir():
        raise SpawnError(f"the worktree {worktree} vanished before the agent started")
    types = {e.get("type") for e in ctx.events()}
    if E.SETUP_FAILED in types:
        raise SpawnError("the lane's setup command failed")
    if not _written(ctx.paths.handoff) or not _written(ctx.paths.prompt) or (
            E.SETUP_DONE not in types and lane_of(ctx).setup):
        prepared = after_worktree(ctx, worktree, branch=snap.branch or branch_name(ctx.job_id),
                                  base_commit=snap.base_commit or "HEAD")
    else:
        prepared = Prepared(worktree, launch_env(ctx, worktree))
    return launch(ctx, tmux, prepared)

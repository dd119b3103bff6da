"""`zen run AGENT ARGS...` in the foreground: the agent in this terminal and directory, as an
attached job, until it exits; then the job ends with its exit code.

The agent is this process's child, in the terminal's foreground like any command a shell runs:
Ctrl-C reaches it (this process lets it pass and waits for the agent to decide), a hangup or TERM
sent to `zen run` is passed on to it. Meanwhile state.json is kept up to date (the hooks append to
the timeline) and the job's leases renewed, as the supervisor does for a dispatched job; and an
end someone else records (zen cancel, zen finish, the kill switch's --stop-agents) stops the agent.
"""

from __future__ import annotations

import contextlib
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from types import FrameType

from zen.coord import leases
from zen.core.events import EventType as E
from zen.errors import ZenError
from zen.orchestration.attach import record
from zen.orchestration.attach.launch import check, launch, refuse_overrides
from zen.store import events as ev_store
from zen.store.atomic import atomic_write
from zen.store.config import Config
from zen.store.layout import Home

REFRESH_S = 1.0          # how often state.json is brought up to date while the agent runs
RENEW_EVERY = 30         # refreshes between lease renewals (30 s; a lease lives 300 s)
GRACE_S = 10.0           # after a TERM, before the KILL
# someone else ended the job: zen cancel, zen finish, the kill switch's --stop-agents, a limit
STOPS = frozenset({E.JOB_CANCELLED, E.FINISH_REQUESTED, E.AGENT_EXITED, E.JOB_FAILED, E.JOB_TIMEOUT})


class _Stop:
    """Follows the job's timeline while the agent runs: an end recorded by someone else (a human's
    zen cancel or zen finish, the kill switch) stops the agent, TERM then KILL after a grace."""

    def __init__(self, path: Path) -> None:
        _, self.offset = ev_store.read_from(path, 0)
        self.path = path
        self.asked_at: float | None = None

    def step(self, proc: subprocess.Popen[bytes]) -> None:
        with contextlib.suppress(OSError):
            if self.asked_at is None:
                new, self.offset = ev_store.read_from(self.path, self.offset)
                if any(e.get("type") in STOPS for e in new):
                    self.asked_at = time.monotonic()
                    proc.terminate()
            elif time.monotonic() - self.asked_at > GRACE_S:
                proc.kill()


def run(home: Home, agent: str, args: list[str], *, lane: str | None = None, name: str | None = None,
        cwd: Path | None = None, say: Callable[[str], None] | None = None) -> int:
    """Run the agent attached; its exit code (128 + N for a signal N, as a shell says it)."""
    tell = say or (lambda text: sys.stderr.write(f"zen: {text}\n"))
    cfg = Config.load(home)
    where = record.place(cfg, cwd or Path.cwd(), lane)
    notes = check(agent, where)       # a start refused here leaves no record behind
    refuse_overrides(agent, args)
    for orphan in record.settle_orphans(home):
        tell(f"attached job {orphan} had lost its zen run (killed?): recorded as ended")
    job_id = record.open_job(home, where, agent, args, name)
    try:
        spec = launch(home, cfg, job_id, where, agent, args, notes)
        for path, content in spec.files.items():
            path.parent.mkdir(parents=True, exist_ok=True)
            atomic_write(path, content, durable=False)
        before = record.Tree.of(where.root)
    except BaseException as exc:   # Ctrl-C too: no job is left queued for ever
        record.failed(home, job_id, str(exc) if isinstance(exc, ZenError) else
                      f"zen run stopped before the agent started ({type(exc).__name__})")
        raise
    for note in spec.notes:
        tell(note)
    tell(f"attached job {job_id} ({f'lane {where.lane}' if where.lane else where.root}); "
         f"zen show {job_id} follows it")
    record.started(home, job_id, spec.argv, where.cwd)
    try:
        code, sig = _foreground(spec.argv, spec.env, where.cwd, home, job_id)
    except OSError as exc:
        why = f"{agent} could not be started ({spec.argv[0]}: {exc.strerror or exc})"
        record.finish(home, job_id, None, None, [], why=why)
        record.failed(home, job_id, why)
        raise ZenError(why) from None
    paths: list[str] = []
    try:
        paths = record.changed(where.root, before, record.Tree.of(where.root))
    finally:   # the end is recorded whatever happens to the look at the checkout
        record.finish(home, job_id, code, sig, paths)
    return code if code is not None else 128 + (sig or 0)


def _foreground(argv: list[str], env: dict[str, str], cwd: Path, home: Home, job_id: str
                ) -> tuple[int | None, int | None]:
    """(exit code, signal) of the agent run as this process's child."""
    proc = subprocess.Popen(argv, cwd=cwd, env=env)

    def forward(signum: int, frame: FrameType | None) -> None:
        with contextlib.suppress(OSError):
            proc.send_signal(signum)

    def let_pass(signum: int, frame: FrameType | None) -> None:
        pass    # the terminal sent it to the agent too; the agent decides

    # handlers, not SIG_IGN: the agent already runs, and an exec resets handlers anyway
    old = {s: signal.signal(s, h) for s, h in ((signal.SIGINT, let_pass), (signal.SIGQUIT, let_pass),
                                                (signal.SIGTERM, forward), (signal.SIGHUP, forward))}
    stop = _Stop(home.job(job_id).events)
    try:
        ticks = 0
        while True:
            try:
                rc = proc.wait(timeout=REFRESH_S)
                break
            except subprocess.TimeoutExpired:
                ticks += 1
                record.refresh(home, job_id)
                if ticks % RENEW_EVERY == 0:
                    with contextlib.suppress(OSError, ZenError):
                        leases.renew_job(str(home.root), job_id)
                stop.step(proc)
    finally:
        for s, h in old.items():
            signal.signal(s, h)
    return (rc, None) if rc >= 0 else (None, -rc)

"""`zen remote-turn`: one turn of a job on a Ray worker node (the Ray job's entrypoint).

    ZEN_TURN_SPEC=<spec> zen remote-turn

1. fetch the lane's shared remote into the node's cache; make the job's worker home (policy, the
   kill-switch address, the job's record) and a fresh worktree on branch zen/<job> at where the
   turn starts (the job's base, or the last turn's result with its uncommitted files restored);
2. run the lane's setup, then the agent headless (zen.agents.headless: the same settings file,
   hooks and guardian as a local job) with its output piped through this process;
3. write everything to stdout, which Ray keeps as the job's log: the agent's output, and each
   event the hooks and the guardian appended to the worker home's timeline, framed
   (zen.core.remote) so the supervisor can tell them apart and number them;
4. snapshot the worktree (the agent's commits plus its uncommitted files, as harvest does) and
   push it to refs/zen/<job>/turn-<n> on the remote; report remote.pushed, then remote.finished.

A stop (Ray sends TERM to the job's process group, the agent included) still pushes what exists,
so `zen cancel` harvests it. Exit 0 when the turn's work was pushed, 1 when the turn could not be
run or pushed (remote.finished then says why).
"""

from __future__ import annotations

import codecs
import os
import select
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

from zen.adapters import git as g
from zen.agents import headless
from zen.agents.base import LaunchContext
from zen.agents.common import zen_argv
from zen.core.events import Actor, timestamp
from zen.core.events import EventType as E
from zen.core.remote import SPEC_ENV, TurnSpec, frame_event, frame_output
from zen.errors import ZenError
from zen.orchestration.job.spawn import run_setup
from zen.orchestration.remote.workspace import Workspace, prepare
from zen.store import events as ev_store
from zen.store.atomic import atomic_write
from zen.store.layout import WORKTREE_TMP

POLL_S = 0.1
STOP_GRACE_S = 2.0
CHUNK = 65536


class Emitter:
    """Framed lines on stdout (the Ray job log), numbered events, one writer at a time."""

    def __init__(self, submission: str, fd: int = 1) -> None:
        self.submission = submission
        self.fd = fd
        self.n = 0
        self.lock = threading.Lock()

    def _write(self, line: str) -> None:
        data = line.encode()
        with self.lock:
            while data:
                data = data[os.write(self.fd, data):]

    def output(self, text: str) -> None:
        if text:
            self._write(frame_output(text))

    def event(self, etype: str, actor: str = Actor.WORKER, **fields: Any) -> None:
        with self.lock:
            self.n += 1
            n = self.n
        ev = {"type": str(etype), "actor": str(actor), "ts": timestamp(), **fields}
        self._write(frame_event(n, ev))

    def forward(self, ev: dict[str, Any]) -> None:
        """An event a hook or the guardian appended to the worker home's timeline."""
        fields = {k: v for k, v in ev.items() if k not in ("v", "seq", "job")}
        etype, actor = str(fields.pop("type", "")), str(fields.pop("actor", Actor.WORKER))
        if etype:
            self.event(etype, actor, **fields)


class TurnFailed(Exception):
    """The turn could not run: the sentence remote.finished reports."""


class Turn:
    def __init__(self, spec: TurnSpec, emit: Emitter) -> None:
        self.spec = spec
        self.emit = emit
        self.stopping = False
        self.proc: subprocess.Popen[bytes] | None = None
        self.ws: Workspace | None = None
        self.offset = 0

    # -- signals ------------------------------------------------------------------------------
    def on_term(self, signum: int, frame: Any) -> None:
        # Ray's stop TERMs the whole process group, the agent with it; a TERM to this process
        # alone is passed on. Either way the agent is waited for and its work pushed.
        self.stopping = True
        if self.proc is not None and self.proc.poll() is None:
            try:
                self.proc.send_signal(signal.SIGTERM)
            except OSError:
                pass

    # -- the timeline the hooks write ---------------------------------------------------------
    def forward_new(self) -> None:
        if self.ws is None:
            return
        new, self.offset = ev_store.read_from(self.ws.home.job(self.spec.job).events, self.offset)
        for ev in new:
            self.emit.forward(ev)

    # -- the steps ----------------------------------------------------------------------------
    def run(self) -> int:
        try:
            self.ws = prepare(self.spec)
        except (ZenError, OSError) as exc:
            self.emit.event(E.REMOTE_FINISHED, exit_code=None, error=f"could not prepare the turn: {exc}")
            return 1
        ws = self.ws
        self.offset = ws.home.job(self.spec.job).events.stat().st_size  # forward only this turn's events
        env = self.agent_env(ws)
        if self.spec.setup and self.spec.turn == 1:
            setup_code, tail = run_setup(ws.worktree, self.spec.setup, env)
            etype = E.SETUP_DONE if setup_code == 0 else E.SETUP_FAILED
            self.emit.event(etype, command=self.spec.setup, exit_code=setup_code, output=tail[-500:])
            if setup_code != 0:
                self.emit.event(E.REMOTE_FINISHED, exit_code=None, error=f"the lane's setup command "
                                f"`{self.spec.setup}` failed with exit code {setup_code}")
                return 1
        try:
            code, sig = self.run_agent(ws, env)
        except TurnFailed as exc:
            self.emit.event(E.REMOTE_FINISHED, exit_code=None, error=str(exc))
            return 1
        return self.push_and_report(ws, code, sig)

    def agent_env(self, ws: Workspace) -> dict[str, str]:
        paths = ws.home.job(self.spec.job)
        env = {k: v for k, v in os.environ.items() if k != SPEC_ENV}
        env.update(self.spec.env)
        env.update({"ZEN_HOME": str(ws.home.root), "ZEN_JOB_ID": self.spec.job, "ZEN_WORKTREE": str(ws.worktree),
                    "ZEN_PROMPT": self.spec.prompt, "ZEN_HANDOFF": str(paths.handoff),
                    "TMPDIR": str(ws.worktree / WORKTREE_TMP), "PYTHONUNBUFFERED": "1"})
        return env

    def run_agent(self, ws: Workspace, env: dict[str, str]) -> tuple[int | None, int | None]:
        paths = ws.home.job(self.spec.job)
        ctx = LaunchContext(home=ws.home.root, job_id=self.spec.job, job_dir=paths.dir, worktree=ws.worktree,
                            handoff=paths.handoff, task=ws.task, zen_argv=zen_argv(),
                            settings=dict(self.spec.agent_settings))
        try:
            launch = headless.launch(ctx, self.spec.prompt, turn=self.spec.turn)
            for path, content in launch.files.items():
                p = Path(path) if Path(path).is_absolute() else ws.worktree / path
                p.parent.mkdir(parents=True, exist_ok=True)
                atomic_write(p, content, durable=False)
            # the agent stays in this process group: Ray's stop (a TERM, then a KILL, to the
            # group) reaches it even if this process is killed first
            self.proc = subprocess.Popen(list(launch.argv), cwd=ws.worktree, env={**env, **launch.env},
                                         stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                         stderr=subprocess.STDOUT)
        except (ZenError, OSError) as exc:
            raise TurnFailed(f"could not start the agent: {exc}") from None
        self.emit.event(E.REMOTE_STARTED, host=socket.gethostname(), worktree=str(ws.worktree),
                        commit=g.rev(ws.worktree, "HEAD") or "", argv=list(launch.argv)[:40], pid=self.proc.pid)
        self.pump(self.proc)
        rc = self.proc.wait()
        self.forward_new()
        return (rc, None) if rc >= 0 else (None, -rc)

    def pump(self, proc: subprocess.Popen[bytes]) -> None:
        """The agent's output and the hooks' events, as they come, until the agent ends."""
        assert proc.stdout is not None
        fd = proc.stdout.fileno()
        decode = codecs.getincrementaldecoder("utf-8")(errors="replace")  # a character split by a read waits
        term_at: float | None = None
        while True:
            ready, _, _ = select.select([fd], [], [], POLL_S)
            if ready:
                chunk = os.read(fd, CHUNK)
                if not chunk:
                    break
                self.emit.output(decode.decode(chunk))
            self.forward_new()
            if self.stopping:
                term_at = term_at or time.monotonic()
                if time.monotonic() - term_at > STOP_GRACE_S and proc.poll() is None:
                    proc.kill()
        self.emit.output(decode.decode(b"", final=True))

    def push_and_report(self, ws: Workspace, code: int | None, sig: int | None) -> int:
        try:
            shot = g.snapshot_commit(ws.worktree, f"zen: work of turn {self.spec.turn} of {ws.task.name}\n\n"
                                                  f"Zen-Job: {self.spec.job}\n")
            g.push(ws.worktree, self.spec.remote, f"+{shot.commit}:{self.spec.push_ref}")
        except ZenError as exc:
            self.emit.event(E.REMOTE_FINISHED, exit_code=code, signal=sig, error=f"could not push the turn's work: {exc}")
            return 1
        self.emit.event(E.REMOTE_PUSHED, ref=self.spec.push_ref, commit=shot.commit, head=shot.head,
                        snapshot=shot.snapshot)
        self.emit.event(E.REMOTE_FINISHED, exit_code=code, signal=sig)
        return 0


def main(spec_text: str | None = None) -> int:
    text = spec_text if spec_text is not None else os.environ.get(SPEC_ENV, "")
    if not text:
        sys.stderr.write(f"zen remote-turn: no turn spec (${SPEC_ENV} is empty); it is started by zen's Ray executor\n")
        return 2
    spec = TurnSpec.decode(text)
    emit = Emitter(spec.submission)
    turn = Turn(spec, emit)
    signal.signal(signal.SIGTERM, turn.on_term)
    signal.signal(signal.SIGINT, turn.on_term)
    return turn.run()


__all__ = ["SPEC_ENV", "Emitter", "Turn", "main"]

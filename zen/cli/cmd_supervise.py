"""zen supervise, send, attach, output, finish, cancel, harvest, clean."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from typing import Any

import typer

from zen.cli import common
from zen.errors import ZenError


def _setup_logging(home: Any) -> None:
    import logging

    home.logs.mkdir(parents=True, exist_ok=True)
    handler = logging.FileHandler(home.supervisor_log)
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    root = logging.getLogger()
    root.addHandler(handler)
    root.setLevel(logging.INFO)


def _detach(home: Any) -> int:
    from zen.orchestration.status import supervisor_pid

    pid = supervisor_pid(home)
    if pid:
        raise ZenError(f"a supervisor is already running for {home.root} (pid {pid}); zen supervise --stop stops it")
    home.logs.mkdir(parents=True, exist_ok=True)
    log_path = home.supervisor_log
    with log_path.open("ab") as out:
        proc = subprocess.Popen(
            [sys.executable, "-m", "zen", "--home", str(home.root), "supervise"],
            stdin=subprocess.DEVNULL, stdout=out, stderr=out, start_new_session=True, close_fds=True,
        )
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if supervisor_pid(home) == proc.pid:
            common.say(f"supervisor started (pid {proc.pid}); log: {log_path}")
            return 0
        code = proc.poll()
        if code is not None:
            raise ZenError(f"the supervisor exited at once with code {code} (see {log_path})")
        time.sleep(0.05)
    raise ZenError(f"the supervisor did not take its lock within 30s (see {log_path})")


def _stop(home: Any, timeout_s: float = 30) -> int:
    import signal

    from zen.orchestration.status import supervisor_pid

    pid = supervisor_pid(home)
    if not pid:
        common.say("no supervisor is running for this home")
        return 0
    if pid < 0:
        raise ZenError(f"a supervisor holds {home.supervisor_lock} but its pid is unreadable; stop it by hand")
    try:
        os.kill(pid, signal.SIGTERM)
    except ProcessLookupError:
        pass
    deadline = time.monotonic() + timeout_s
    while supervisor_pid(home):
        if time.monotonic() >= deadline:
            raise ZenError(f"the supervisor (pid {pid}) did not stop within {timeout_s:.0f}s")
        time.sleep(0.05)
    common.say(f"supervisor stopped (pid {pid}); agents keep running in tmux")
    return 0


def register(app: typer.Typer) -> None:
    @app.command("supervise")
    def supervise(
        detach: bool = typer.Option(False, "--detach", help="Run in the background (log: <home>/logs/supervisor.log)."),
        stop: bool = typer.Option(False, "--stop", help="Stop the running supervisor; agents keep running."),
        once: bool = typer.Option(False, "--once", help="One pass (recover, claim, start, step), then exit."),
    ) -> int:
        """Run the supervisor: claim tasks, start agents in tmux, watch their turns, harvest their work."""
        from zen.orchestration.supervisor import run_supervisor

        home = common.home()
        if stop:
            return _stop(home)
        if detach:
            return _detach(home)
        _setup_logging(home)
        if not once and sys.stdout.isatty():
            common.err(f"supervising {home.root} (pid {os.getpid()}); Ctrl-C stops it, agents keep running")
        return run_supervisor(home, once=once)

    @app.command("send")
    def send(
        job: str = typer.Argument(..., help="Job id, unique prefix, or name."),
        text: str = typer.Argument(..., help="What to type into the agent's terminal; - reads stdin."),
        force: bool = typer.Option(False, "--force", help="Type even if the agent is not waiting."),
        json_out: bool = typer.Option(False, "--json"),
    ) -> int:
        """Type TEXT into a waiting agent's terminal, then Enter (multi-line safe)."""
        from zen.orchestration.control import send as do_send

        if text == "-":
            text = sys.stdin.read()
        if not text.strip():
            raise ZenError("nothing to send (the text is empty)")
        result = do_send(common.home(), job, text, force=force)
        if json_out:
            common.emit_json(result)
        else:
            common.say(f"sent to {result['job']}")
        return 0

    @app.command("attach")
    def attach(job: str = typer.Argument(..., help="Job id, unique prefix, or name.")) -> int:
        """Attach your terminal to the agent's tmux session (detach with C-b d)."""
        from zen.orchestration.control import attach_argv

        argv = attach_argv(common.home(), job)
        if not (sys.stdin.isatty() and sys.stdout.isatty()):
            raise ZenError("zen attach needs a terminal (use zen output JOB to read the agent's output)")
        env = {k: v for k, v in os.environ.items() if k not in ("TMUX", "TMUX_PANE")}
        os.execvpe(argv[0], argv, env)
        return 0  # not reached

    @app.command("output")
    def output(
        job: str = typer.Argument(..., help="Job id, unique prefix, or name."),
        follow: bool = typer.Option(False, "--follow", "-f", help="Keep printing new output until the agent ends."),
        lines: int = typer.Option(None, "--lines", "-n", help="Only the last N lines."),
        raw: bool = typer.Option(False, "--raw", help="Keep terminal escape sequences."),
        screen: bool = typer.Option(False, "--screen", help="The agent's visible screen now, not its log."),
    ) -> int:
        """What the agent printed (pane.log, escapes stripped), or its live screen."""
        from zen.orchestration import control
        from zen.orchestration.query import resolve_job
        from zen.store.jobs import JobStore

        home = common.home()
        if screen:
            text = control.screen(home, job)
            out = text.splitlines()
            if lines:
                out = out[-lines:]
            sys.stdout.write("\n".join(out) + "\n")
            return 0
        job_id = resolve_job(home, job)
        path = control.pane_log(home, job_id)
        try:
            data = path.read_bytes()
        except FileNotFoundError:
            data = b""
        text = data.decode(errors="replace")
        if not raw:
            text = control.strip_ansi(text)
        if lines:
            text = "\n".join(text.rstrip("\n").splitlines()[-lines:]) + "\n"
        sys.stdout.write(text)
        sys.stdout.flush()
        if not follow:
            return 0
        store = JobStore(home)
        offset = len(data)
        while True:
            try:
                with path.open("rb") as f:
                    f.seek(offset)
                    chunk = f.read()
            except FileNotFoundError:
                chunk = b""
            if chunk:
                offset += len(chunk)
                piece = chunk.decode(errors="replace")
                sys.stdout.write(piece if raw else control.strip_ansi(piece))
                sys.stdout.flush()
            elif not store.snapshot(job_id, write=False).state.live:
                return 0
            time.sleep(0.2)

    @app.command("finish")
    def finish(
        job: str = typer.Argument(..., help="Job id, unique prefix, or name."),
        json_out: bool = typer.Option(False, "--json"),
    ) -> int:
        """End the agent gracefully (its own exit command, else TERM), then harvest its work."""
        from zen.orchestration.control import finish as do_finish

        result = do_finish(common.home(), job)
        _report(result, "finished", json_out)
        return 0

    @app.command("cancel")
    def cancel(
        job: str = typer.Argument(..., help="Job id, unique prefix, or name."),
        reason: str = typer.Option(None, "--reason", help="Why, for the timeline."),
        json_out: bool = typer.Option(False, "--json"),
    ) -> int:
        """Stop the agent now (TERM, grace, KILL), harvest what exists, mark the job cancelled."""
        from zen.orchestration.control import cancel as do_cancel

        result = do_cancel(common.home(), job, reason)
        _report(result, "cancelled", json_out)
        return 0

    @app.command("harvest")
    def harvest(
        job: str = typer.Argument(..., help="Job id, unique prefix, or name."),
        json_out: bool = typer.Option(False, "--json"),
    ) -> int:
        """Put the job's work on zen/review/<id> (a live agent keeps running; safe to repeat)."""
        from zen.orchestration.control import harvest_now

        result = harvest_now(common.home(), job)
        if json_out:
            common.emit_json(result)
            return 0
        where = result.get("branch") or "(report only: autonomy level observe)"
        common.say(f"harvested {result['job']} onto {where} at {str(result['commit'])[:12]}: "
                   f"{result['files']} files, +{result['insertions']} -{result['deletions']}")
        common.say(f"review: {result['review']}")
        return 0

    @app.command("clean")
    def clean(
        job: str = typer.Argument(None, help="Job id, unique prefix, or name."),
        harvested: bool = typer.Option(False, "--harvested", help="Every harvested job's worktree."),
        json_out: bool = typer.Option(False, "--json"),
    ) -> int:
        """Remove worktrees of harvested jobs (their branches stay; unharvested work is never removed)."""
        from zen.orchestration.control import clean as do_clean

        if job is None and not harvested:
            raise ZenError("say which job to clean (zen clean JOB) or --harvested for all harvested jobs")
        done = do_clean(common.home(), job, harvested=harvested)
        if json_out:
            common.emit_json(done)
        elif done:
            for d in done:
                common.say(f"removed {d['worktree']} (work stays on {d['review_branch']})")
        else:
            common.say("nothing to clean")
        return 0


def _report(result: dict[str, Any], verb: str, json_out: bool) -> None:
    if json_out:
        common.emit_json(result)
        return
    code = result.get("exit_code")
    sig = result.get("signal")
    how = f"exit code {code}" if code is not None else (f"signal {sig}" if sig else "exit unknown")
    line = f"{verb} {result['job']} ({how})"
    h = result.get("harvest")
    if h:
        line += f"; work on {h.get('branch') or 'review.md'} ({h.get('files')} files)"
    elif result.get("review_branch"):
        line += f"; work on {result['review_branch']}"
    common.say(line)


def register_hook(app: typer.Typer) -> None:
    """`zen hook EVENT` normally runs without the CLI framework (zen/__main__.py); this entry
    gives it --help and the same behaviour when reached through the CLI."""

    @app.command("hook", context_settings={"allow_extra_args": True, "ignore_unknown_options": True})
    def hook(ctx: typer.Context,
             event: str = typer.Argument(..., help="Stop, Notification, PermissionRequest, UserPromptSubmit, "
                                         "SessionEnd, codex-notify or aider-notify.")) -> int:
        """An agent's turn signal (its hook JSON on stdin) appended to the job in $ZEN_JOB_ID; always exits 0."""
        from zen.orchestration.turnhook import main as turn_hook

        return turn_hook([event, *ctx.args])

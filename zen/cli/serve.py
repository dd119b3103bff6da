"""zen pause, zen resume, zen land, zen serve: the controls the dashboard shares with the shell."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import typer

from zen.cli import common, render
from zen.cli.common import JOB, JSON
from zen.errors import ZenError
from zen.orchestration.job import land as landing
from zen.orchestration.job.pause import pause as do_pause
from zen.orchestration.job.pause import resume as do_resume
from zen.server import auth


def _human_only(what: str) -> None:
    """Defence in depth behind the guardian: a process started for an agent carries ZEN_JOB_ID."""
    if os.environ.get("ZEN_JOB_ID"):
        raise ZenError(f"{what} is for humans only, and this shell belongs to agent job "
                       f"{os.environ['ZEN_JOB_ID']}")


def pause(job: str = JOB, json_out: bool = JSON) -> int:
    """Stop the agent's processes (SIGSTOP) where they are; its timeout clock stops too."""
    render.emit(do_pause(common.home(), job), json_out,
                lambda r: [f"paused {r.job} (zen resume {r.job} continues it)"])
    return 0


def resume(job: str = JOB, json_out: bool = JSON) -> int:
    """Continue a paused agent (SIGCONT); it returns to the state it was paused in."""
    render.emit(do_resume(common.home(), job), json_out,
                lambda r: [f"resumed {r.job} after {r.paused_s:.1f}s paused; it is {r.state}"])
    return 0


def _landed(r: landing.Landed) -> Iterator[render.Out]:
    yield f"landed {r.branch} into {r.into} at {r.commit[:12]}"


def _would_land(p: landing.LandPlan) -> Iterator[render.Out]:
    yield f"{p.branch} merges cleanly into {p.base} ({p.repo})"


def land(
    job: str = JOB,
    dry_run: bool = typer.Option(False, "--dry-run", help="Only check that it would land cleanly."),
    force: bool = typer.Option(False, "--force", help="Land even though a lane check failed (recorded)."),
    json_out: bool = JSON,
) -> int:
    """Merge the job's review branch into its lane's base branch: only when it merges cleanly and
    the lane's checks passed on the merge with the base as it is now (run again when the base
    moved), never into a checked-out branch, without touching any working tree. Humans only."""
    _human_only("zen land")
    if dry_run:
        render.emit(landing.plan(common.home(), job), json_out, _would_land)
        return 0
    render.emit(landing.land(common.home(), job, force=force), json_out, _landed)
    return 0


def serve(
    port: int = typer.Option(19840, "--port", min=0, max=65535, help="Port to listen on (0: any free port)."),
    host: str = typer.Option("127.0.0.1", "--host", help="Address to listen on (loopback by default)."),
    detach: bool = typer.Option(False, "--detach", help="Run in the background (log: <home>/logs/server.log)."),
    stop: bool = typer.Option(False, "--stop", help="Stop the running server."),
    url: bool = typer.Option(False, "--url", help="Print a one-time login URL for the dashboard and exit."),
    logout_all: bool = typer.Option(False, "--logout-all", help="Log every browser out of the dashboard."),
    keepalive: float = typer.Option(15.0, "--keepalive", min=0.05, max=3600, hidden=True,
                                    help="Seconds between keepalive comments on idle event streams."),
    detached: bool = typer.Option(False, "--detached", hidden=True,
                                  help="Started by --detach: its output goes to a file, so no login URL."),
    tls: bool = typer.Option(False, "--tls", help="HTTPS with a self-signed certificate made once under "
                                                   "control/tls/ (needed for a --host beyond loopback)."),
    cert: Path | None = typer.Option(None, "--cert", help="HTTPS with this certificate (PEM; with --key)."),
    key: Path | None = typer.Option(None, "--key", help="The private key of --cert (PEM)."),
    qr: bool = typer.Option(False, "--qr", help="Also print the login link as a QR code, for a phone to scan."),
    json_out: bool = JSON,
) -> int:
    """The HTTP API and the web dashboard (/agent) of this home, one server per home. Open the
    URL it prints (or `zen serve --url`): the link logs a browser in once. Beyond loopback
    (--host ADDR) it serves HTTPS only (--tls, or --cert and --key)."""
    from zen.server import run as server  # uvicorn and FastAPI: only zen serve pays for them
    from zen.server import tls as tls_files  # with it: only zen serve needs the certificate

    _human_only("zen serve")
    if sum((detach, stop, url, logout_all)) > 1:
        raise ZenError("give one of --detach, --stop, --url and --logout-all")
    home = common.home()
    if logout_all:
        ended = auth.Logins(home).logout_all(auth.ensure_token(home))
        render.emit({"logged_out": ended}, json_out,
                    lambda r: [f"logged out {r['logged_out']} dashboard session(s); zen serve --url logs in again"])
        return 0
    if stop:
        pid = server.stop(home)
        render.emit({"stopped": pid}, json_out,
                    lambda r: [f"zen serve stopped (pid {r['stopped']})" if r["stopped"] else "zen serve is not running"])
        return 0
    token = auth.ensure_token(home)
    if url:
        info = server.running(home)
        where_host, where_port = (str(info.get("host") or host), int(info.get("port") or port)) if info else (host, port)
        secure = bool(info.get("tls")) if info else bool(tls or cert)
        result: dict[str, Any] = {"url": auth.login_url(where_host, where_port, token, tls=secure),
                                  "running": info is not None}
        render.emit(result, json_out, lambda r: [r["url"], *([] if r["running"] else [
            render.Note("zen serve is not running yet: zen serve --detach starts it")])])
        if qr and not json_out:
            print_qr(result["url"])
        return 0
    chosen = tls_files.choose(home, host, tls, cert, key)
    scheme = "https" if chosen else "http"
    if detach:
        info = server.detach(home, host, port, cert=chosen)
        result = {"pid": info.get("pid"), "port": info.get("port"),
                  "url": auth.login_url(host, int(info.get("port") or port), token, tls=chosen is not None)}
        render.emit(result, json_out, lambda r: [f"zen serve started (pid {r['pid']}); log in at:", r["url"]])
        if qr and not json_out:
            print_qr(result["url"])
        return 0
    server.setup_logging(home)

    def ready(bound: int) -> None:
        if detached or not sys.stderr.isatty():
            # stderr is a file (logs/server.log when detached): a login URL there is a ticket on disk
            common_err(f"zen serve: {home.root} on {scheme}://{host}:{bound}/agent (zen serve --url logs in)")
            return
        link = auth.login_url(host, bound, token, tls=chosen is not None)
        common_err(f"zen serve: {home.root} on {scheme}://{host}:{bound}/agent (Ctrl-C stops it); log in at:\n{link}")
        if qr:
            print_qr(link, sys.stderr)

    return server.serve(home, host, port, ready=ready, keepalive_s=keepalive, cert=chosen)


def print_qr(link: str, out: Any = None) -> None:
    """The link as a QR code drawn with half blocks in the terminal (a phone's camera reads it)."""
    import segno  # only --qr draws one

    segno.make(link, error="l").terminal(out=out or sys.stdout, compact=True)
    (out or sys.stdout).flush()


def common_err(text: str) -> None:
    sys.stderr.write(text + "\n")
    sys.stderr.flush()


def register(app: typer.Typer) -> None:
    app.command("serve")(serve)
    for name, fn in (("pause", pause), ("resume", resume), ("land", land)):
        app.command(name)(fn)

"""zen lock, zen unlock, zen locks, zen changes: the coordinator from the command line (DESIGN 10)."""

from __future__ import annotations

from collections.abc import Iterator

import typer

from zen.cli import common, render
from zen.cli.common import JOB, JSON
from zen.coord import service
from zen.core.durations import parse_duration
from zen.core.events import EventType as E
from zen.errors import UsageError
from zen.orchestration.read.query import resolve_job


def _lease_rows(views: list[service.LeaseView]) -> render.Table:
    return render.Table(["lease", "lane", "path", "mode", "job", "by", "expires", "reason"],
                        [[v.id[:12], v.lane, v.path, v.mode + ("" if v.live else " (stale)"), v.job, v.by,
                          v.expires, v.reason] for v in views])


def _ttl(text: str | None) -> float | None:
    if text is None:
        return None
    try:
        return parse_duration(text)
    except ValueError as exc:
        raise UsageError(f"--ttl: {exc}") from None


def lock(job: str = JOB,
         path: str = typer.Argument(..., help="A file, a directory ending in /, or a glob (src/auth/**), "
                                    "relative to the repository (or absolute inside the job's worktree)."),
         shared: bool = typer.Option(False, "--shared", help="Let other jobs hold it shared too (no exclusivity)."),
         ttl: str = typer.Option(None, "--ttl", help="End the lease after this long (e.g. 10m) even while the "
                                 "job lives; default: as long as the job (coordinator.lock_timeout, renewed)."),
         reason: str = typer.Option("", "--reason", help="Why, shown to agents that run into it."),
         json_out: bool = JSON) -> int:
    """Lease a path of the job's lane for the job: another job's writes to it are then denied
    (or warned, per coordinator.conflict_resolution). Refused with the holder named when another
    live job holds it."""
    home = common.home()
    v = service.lock(home, resolve_job(home, job), path, shared=shared, ttl_s=_ttl(ttl), reason=reason)
    render.emit(v, json_out, lambda x: [f"{x.job} holds {x.path} ({x.mode}) in lane {x.lane} until {x.expires} "
                                        f"(lease {x.id[:12]})"])
    return 0


def unlock(job: str = typer.Argument(None, help="Job id, unique prefix, or name: end its leases."),
           paths: list[str] = typer.Argument(None, help="Only the leases on these paths (default: all of them)."),
           lease: str = typer.Option(None, "--id", help="End the lease with this id (or unique prefix) instead."),
           json_out: bool = JSON) -> int:
    """End leases: a job's (all, or those on PATHS), or one by --id. The supervisor ends a job's
    leases by itself the moment the job ends; this is for a human who wants a file back sooner."""
    home = common.home()
    if (job is None) == (lease is None):
        raise UsageError("give a job (zen unlock JOB [PATH...]) or a lease id (zen unlock --id LEASE)")
    if lease is not None:
        if paths:
            raise UsageError("--id takes no paths")
        done = [service.unlock_id(home, lease)]
    else:
        done = service.unlock(home, resolve_job(home, job), paths or None)

    def text(vs: list[service.LeaseView]) -> Iterator[render.Out]:
        if not vs:
            yield "no leases to end"
        for v in vs:
            yield f"released {v.path} ({v.job}, lane {v.lane})"

    render.emit(done, json_out, text)
    return 0


def locks(lane: str = typer.Option(None, "--lane", help="Only this lane's leases."),
          stale: bool = typer.Option(False, "--stale", help="Also leases that are expired or whose job ended "
                                     "(not enforced; the supervisor removes them)."),
          json_out: bool = JSON) -> int:
    """The leases in force: which job holds which path of which lane, and until when."""
    home = common.home()
    views = service.locks(home, lane, stale=stale)

    def text(vs: list[service.LeaseView]) -> Iterator[render.Out]:
        if not vs:
            yield "no leases" + (f" in lane {lane}" if lane else "")
            return
        yield _lease_rows(vs)

    render.emit(views, json_out, text)
    return 0


def _summary(c: service.Change) -> str:
    e = c.event
    if c.type == E.FILES_CHANGED:
        return ", ".join(e.get("paths") or []) or "(no changes left)"
    if c.type in (E.COORD_OVERLAP, E.COORD_CONFLICT):
        what = "no longer conflicts" if e.get("resolved") else ", ".join(e.get("paths") or [])
        return f"with {e.get('other')}: {what}"
    if c.type == E.BASE_MOVED:
        return f"{e.get('base')} {str(e.get('old'))[:12]} -> {str(e.get('new'))[:12]}"
    if c.type == E.LOCK_CONFLICT:
        return f"{e.get('path')} held by {e.get('holder')} ({e.get('resolution')})"
    return f"{e.get('path')}" + (f" ({e.get('why')})" if e.get("why") else "")


def changes(since: str = typer.Option(None, "--since", help="Only after this time (2026-11-29T10:15:00Z) or "
                                      "this long ago (10m)."),
            job: str = typer.Option(None, "--job", help="Only this job's (id, unique prefix or name)."),
            json_out: bool = JSON) -> int:
    """What the coordinator saw: files each job changed, overlaps between live jobs, conflicts
    git merge-tree predicts, a lane's base moving, leases taken, released and run into."""
    home = common.home()
    rows = service.changes(home, service.parse_since(since), resolve_job(home, job) if job else None)

    def text(cs: list[service.Change]) -> Iterator[render.Out]:
        if not cs:
            yield "no changes" + (" since then" if since else "")
            return
        yield render.Table(["time", "job", "event", "what"], [[c.ts, c.job, c.type, _summary(c)] for c in cs])

    render.emit(rows, json_out, text)
    return 0


def register(app: typer.Typer) -> None:
    app.command("lock")(lock)
    app.command("unlock")(unlock)
    app.command("locks")(locks)
    app.command("changes")(changes)

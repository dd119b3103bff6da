"""zen check JOB: the lane's checks on what would land (issue 37); its own module, so other
commands start without the git library it needs."""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import typer

from zen.cli import common, render
from zen.cli.common import JSON
from zen.errors import UsageError, ZenError
from zen.orchestration.job import attempts, checks, comments
from zen.orchestration.job import pr as pull
from zen.orchestration.read.query import resolve_job


def _shown(r: dict[str, Any]) -> Iterator[render.Out]:
    for x in r["results"]:
        mark = "passed" if x["passed"] else "FAILED"
        yield f"{mark}  {x['check']}  (exit {x['exit_code']}, {x['seconds']:.1f}s, log {x['log']})"
    if r["stale"]:
        yield render.Note("the base moved since the job started: checked on its tip as it is now")
    yield ("all checks passed on the merge with the base" if r["passed"]
           else "a check failed: zen land refuses this job (zen land --force lands it anyway)")


def check(job: str = typer.Argument(..., help="The harvested job whose work to check."),
          json_out: bool = JSON) -> int:
    """Run the lane's checks (zen lane add|set NAME --check CMD) on the job's harvested work merged
    into the base branch as it is now, in a throwaway tree inside zen's sandbox. Exit 1 when a
    check fails."""
    home = common.home()
    job_id = resolve_job(home, job)
    found = checks.run(home, job_id, actor="human")
    if found is None:
        raise UsageError(f"job {job_id}'s lane has no checks (zen lane set LANE --check CMD adds one)")
    result = found.to_json()
    render.emit(result, json_out, _shown)
    return 0 if found.passed else 1


def comment(job: str = typer.Argument(..., help="The harvested job to comment on."),
            where: str = typer.Argument(None, help="PATH:LINE of its harvested work."),
            text: str = typer.Argument(None, help="The comment; - reads stdin."),
            send: bool = typer.Option(False, "--send", help="Type every queued comment into the waiting agent "
                                      "as one message (a review round)."),
            json_out: bool = JSON) -> int:
    """Queue a comment on a line of a job's harvested work (zen comment JOB PATH:LINE TEXT), or send
    every queued one to its agent in one message (zen comment JOB --send)."""
    home = common.home()
    if send:
        if where is not None:
            raise UsageError("--send takes only the job: it sends the comments already queued")
        sent = comments.send(home, job)
        render.emit(sent, json_out, lambda d: [f"sent {d.count} comment(s) to {d.job} (review round {d.round})"])
        return 0
    if where is None or text is None:
        raise UsageError("say where and what: zen comment JOB PATH:LINE TEXT (or zen comment JOB --send)")
    q = comments.add(home, job, where, common.text_or_stdin(text) or "")
    render.emit(q, json_out, lambda r: [f"queued on {r.path}:{r.line} ({r.queued} waiting; "
                                        f"zen comment {r.job} --send delivers them)"])
    return 0


def pr(job: str = typer.Argument(..., help="The harvested job to propose."),
       remote: str = typer.Option("origin", "--remote", help="The lane repository's remote to push to."),
       json_out: bool = JSON) -> int:
    """Push the job's harvested work as its review branch and open a pull request (gh) or merge
    request (glab) with its review.md as the body; without either, print the branch and the page to
    open one. zen never merges. Humans only."""
    if os.environ.get("ZEN_JOB_ID"):
        raise ZenError(f"zen pr is for humans only, and this shell belongs to agent job {os.environ['ZEN_JOB_ID']}")
    opened = pull.open_pr(common.home(), job, remote=remote)

    def shown(o: pull.Opened) -> Iterator[render.Out]:
        yield f"pushed {o.commit[:12]} to {o.remote} as {o.branch}"
        if o.forge:
            yield f"opened with {o.forge}: {o.url or '(the forge gave no address)'}"
        else:
            yield (f"no gh or glab here: open the request yourself: {o.url}" if o.url
                   else f"no gh or glab here: open a request from {o.branch} into {o.base} on your forge")

    render.emit(opened, json_out, shown)
    return 0


def _compared(c: attempts.Compared) -> Iterator[render.Out]:
    yield f"group {c.group}"
    yield render.Table(
        ["job", "agent", "state", "exit", "files", "+/-", "checks", "tokens", "cost", "wall", "denied"],
        [[a["job"], a["agent"] or "-", a["state"] + (" (landed)" if a["landed"] else ""),
          "-" if a["exit_code"] is None else str(a["exit_code"]), "-" if a["files"] is None else str(a["files"]),
          "-" if a["insertions"] is None else f"+{a['insertions']}/-{a['deletions']}", a["checks"] or "-",
          str(a["tokens"]), f"${a['cost_usd']:.4f}", "-" if a["wall_s"] is None else f"{a['wall_s']:.0f}s",
          str(a["denials"])] for a in c.attempts])


def compare(ref: str = typer.Argument(..., help="A job of the group, or the group's id."),
            json_out: bool = JSON) -> int:
    """A group's attempts side by side: state, files and lines changed, the lane's checks, tokens and
    cost, wall time, guard denials."""
    render.emit(attempts.compare(common.home(), ref), json_out, _compared)
    return 0


def pick(job: str = typer.Argument(..., help="The attempt to land."),
         force: bool = typer.Option(False, "--force", help="Land even though a lane check failed (recorded)."),
         json_out: bool = JSON) -> int:
    """Land this attempt of its group (the lane's checks gate it, as zen land) and finish the group's
    others that still run; every attempt keeps its review branch. Humans only."""
    if os.environ.get("ZEN_JOB_ID"):
        raise ZenError(f"zen pick is for humans only, and this shell belongs to agent job {os.environ['ZEN_JOB_ID']}")
    picked = attempts.pick(common.home(), job, force=force)
    render.emit(picked, json_out, lambda p: [f"landed {p.job} at {p.commit[:12]}; finished {len(p.finished)} other(s); "
                                             f"kept {len(p.kept)} review branch(es)"])
    return 0


def register(app: typer.Typer) -> None:
    app.command("check")(check)
    app.command("compare")(compare)
    app.command("pick")(pick)
    app.command("comment")(comment)
    app.command("pr")(pr)

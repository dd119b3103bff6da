"""zen pause, zen resume, zen land, zen serve: the controls the dashboard shares with the shell."""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from typing import Any

import typer

from zen.cli import common, render
from zen.cli.common import JOB, JSON
from zen.errors import ZenError


def _human_only(what: str) -> None:
    """Defence in depth behind the guardian: a process started for an agent carries ZEN_JOB_ID."""
    if os.environ.get("ZEN_JOB_ID"):
        raise ZenError(f"{what} is for humans only, and this shell belongs to agent job "
                       f"{os.environ['ZEN_JOB_ID']}")


def pause(job: str = JOB, json_out: bool = JSON) -> int:
    """Stop the agent's processes (SIGSTOP) where they are; its timeout clock stops too."""
    from zen.orchestration.pause import pause as do_pause

    render.emit(do_pause(common.home(), job), json_out,
                lambda r: [f"paused {r['job']} (zen resume {r['job']} continues it)"])
    return 0


def resume(job: str = JOB, json_out: bool = JSON) -> int:
    """Continue a paused agent (SIGCONT); it returns to the state it was paused in."""
    from zen.orchestration.pause import resume as do_resume

    render.emit(do_resume(common.home(), job), json_out,
                lambda r: [f"resumed {r['job']} after {r['paused_s']:.1f}s paused; it is {r['state']}"])
    return 0


def _landed(r: Mapping[str, Any]) -> Iterator[render.Out]:
    if "commit" in r:
        yield f"landed {r['branch']} into {r['into']} at {str(r['commit'])[:12]}"
    else:
        yield f"{r['branch']} merges cleanly into {r['base']} ({r['repo']})"


def land(
    job: str = JOB,
    dry_run: bool = typer.Option(False, "--dry-run", help="Only check that it would land cleanly."),
    json_out: bool = JSON,
) -> int:
    """Merge the job's review branch into its lane's base branch: only when it merges cleanly,
    never into a checked-out branch, without touching any working tree. Humans only."""
    from zen.orchestration import land as landing

    _human_only("zen land")
    if dry_run:
        p = landing.plan(common.home(), job)
        render.emit({k: p[k] for k in ("job", "lane", "repo", "branch", "base", "old", "tip")}, json_out, _landed)
        return 0
    render.emit(landing.land(common.home(), job), json_out, _landed)
    return 0


def register(app: typer.Typer) -> None:
    for name, fn in (("pause", pause), ("resume", resume), ("land", land)):
        app.command(name)(fn)

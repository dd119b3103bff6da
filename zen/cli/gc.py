"""zen gc: retention of old, finished jobs."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import typer

from zen.cli import common, render
from zen.cli.common import JSON
from zen.core.durations import parse_duration
from zen.errors import ZenError
from zen.orchestration.home.gc import collect
from zen.store.config import Config


def _collected(since: str) -> render.TextForm[list[dict[str, Any]]]:
    def text(done: list[dict[str, Any]]) -> Iterator[render.Out]:
        if not done:
            yield f"nothing finished more than {since} ago"
        for d in done:
            what = ("record removed" if d["record_removed"] else "worktree removed" if d["worktree_removed"]
                    else f"kept: {d.get('kept')}" if "kept" in d else "")
            if d.get("history_compacted"):
                what = ", ".join(x for x in (what, f"{d['history_compacted']} minutes of metrics compacted") if x)
            if d.get("branches_removed"):
                yield f"{d['job']}  {what}  (branches removed, merged: {', '.join(d['branches_removed'])})"
            elif "branches_kept" in d:
                yield f"{d['job']}  {what}  (branch {d['review_branch'] or '-'} kept: {d['branches_kept']})"
            else:
                yield f"{d['job']}  {what}  (branch {d['review_branch'] or '-'} stays)"
        kept = sum(1 for d in done if "branches_kept" in d)
        if kept:
            yield render.Note(f"kept {kept} review branch(es) not merged into their base (--unmerged removes them)")
    return text


def gc(
    older_than: str = typer.Option(None, "--older-than", help="Age of finished jobs to collect (default: zen.yaml gc.older_than, 7d)."),
    records: bool = typer.Option(False, "--records", help="Also delete the job records (jobs/<id>/)."),
    branches: bool = typer.Option(False, "--branches", help="Also delete the review and agent branches whose work "
                                  "is merged into the base; unmerged ones are kept and counted."),
    unmerged: bool = typer.Option(False, "--unmerged", help="With --branches: unmerged ones too (their work goes)."),
    json_out: bool = JSON,
) -> int:
    """Remove worktrees of old finished jobs (and, with --records, their records; with --branches,
    their branches once merged into the base). Never a worktree holding work that is not on its
    review branch, never an unmerged branch unless --unmerged. Also applies
    zen.yaml observatory.history_retention: older per-minute metrics become per-job totals."""
    home = common.home()
    text = older_than or str(Config.load(home).get("gc", "older_than"))
    try:
        age_s = parse_duration(text)
    except ValueError as exc:
        raise ZenError(f"--older-than: {exc}") from None
    cfg = Config.load(home)
    try:
        retention_s = parse_duration(cfg.get("observatory", "history_retention"))
    except ValueError as exc:
        raise ZenError(f"zen.yaml observatory.history_retention: {exc}") from None
    if unmerged and not branches:
        raise ZenError("--unmerged goes with --branches")
    render.emit(collect(home, age_s, records=records, retention_s=retention_s, branches=branches,
                        unmerged=unmerged), json_out, _collected(text))
    return 0


def register(app: typer.Typer) -> None:
    app.command("gc")(gc)

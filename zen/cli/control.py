"""zen send, attach, output, finish, cancel, harvest, clean: acting on one job's agent."""

from __future__ import annotations

import json
import os
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import typer

from zen.cli import common, render
from zen.cli.common import JOB, JSON
from zen.errors import ZenError
from zen.orchestration.job import control
from zen.orchestration.job.harvest import Harvest
from zen.orchestration.read.query import resolve_job
from zen.store.home import Home
from zen.store.jobs import JobStore
from zen.store.layout import REVIEW


def send(
    job: str = JOB,
    text: str = typer.Argument(..., help="What to type into the agent's terminal; - reads stdin."),
    force: bool = typer.Option(False, "--force", help="Type even if the agent is not waiting."),
    json_out: bool = JSON,
) -> int:
    """Type TEXT into a waiting agent's terminal, then Enter (multi-line safe)."""
    text = common.text_or_stdin(text) or ""
    if not text.strip():
        raise ZenError("nothing to send (the text is empty)")
    result = control.send(common.home(), job, text, force=force)
    render.emit(result, json_out, lambda r: [f"sent to {r.job}"])
    return 0


def attach(job: str = JOB) -> int:
    """Attach your terminal to the agent's tmux session (detach with C-b d)."""
    argv = control.attach_argv(common.home(), job)
    if not (sys.stdin.isatty() and sys.stdout.isatty()):
        raise ZenError("zen attach needs a terminal (use zen output JOB to read the agent's output)")
    env = {k: v for k, v in os.environ.items() if k not in ("TMUX", "TMUX_PANE")}
    os.execvpe(argv[0], argv, env)
    return 0  # not reached


@dataclass(frozen=True)
class Output:
    """What an agent printed: its pane log (escapes stripped unless raw), or its screen now."""

    job: str
    source: str      # log | screen
    text: str


def _last_lines(text: str, lines: int | None) -> str:
    if not lines:
        return text
    return "\n".join(text.rstrip("\n").splitlines()[-lines:]) + "\n"


def _read(path: Path, offset: int = 0) -> bytes:
    try:
        with path.open("rb") as f:
            f.seek(offset)
            return f.read()
    except FileNotFoundError:
        return b""


def _more(home: Home, job_id: str, path: Path, offset: int, raw: bool) -> Iterator[str]:
    """Output appended to the pane log after `offset`, until the agent is no longer live."""
    store = JobStore(home)
    while True:
        chunk = _read(path, offset)
        if chunk:
            offset += len(chunk)
            piece = chunk.decode(errors="replace")
            yield piece if raw else control.strip_ansi(piece)
        elif not store.snapshot(job_id, write=False).state.live:
            return
        time.sleep(0.2)


def _write(out: Output, json_out: bool) -> None:
    if json_out:
        sys.stdout.write(json.dumps(render.jsonable(out), ensure_ascii=False) + "\n")
    else:
        sys.stdout.write(out.text)
    sys.stdout.flush()


def output(
    job: str = JOB,
    follow: bool = typer.Option(False, "--follow", "-f", help="Keep printing new output until the agent ends."),
    lines: int = typer.Option(None, "--lines", "-n", help="Only the last N lines."),
    raw: bool = typer.Option(False, "--raw", help="Keep terminal escape sequences."),
    screen: bool = typer.Option(False, "--screen", help="The agent's visible screen now, not its log."),
    json_out: bool = typer.Option(False, "--json", help="One JSON document {job, source, text}; with --follow, "
                                  "one such document per line for each new piece of output (JSON lines)."),
) -> int:
    """What the agent printed (pane.log, escapes stripped), or its live screen."""
    home = common.home()
    if screen:
        text = control.screen(home, job)
        out = Output(resolve_job(home, job), "screen", "\n".join(text.splitlines()[-lines:] if lines else
                                                                 text.splitlines()) + "\n")
        render.emit(out, json_out, lambda o: [o.text.removesuffix("\n")])
        return 0
    job_id = resolve_job(home, job)
    path = control.pane_log(home, job_id)
    data = _read(path)
    text = data.decode(errors="replace")
    first = Output(job_id, "log", _last_lines(text if raw else control.strip_ansi(text), lines))
    if not follow:
        if json_out:
            render.emit_json(first)
        else:
            _write(first, False)
        return 0
    _write(first, json_out)
    for piece in _more(home, job_id, path, len(data), raw):
        _write(Output(job_id, "log", piece), json_out)
    return 0


def _stopped(verb: str) -> render.TextForm[control.Stopped]:
    def text(result: control.Stopped) -> Iterator[render.Out]:
        code, sig = result.exit_code, result.signal
        how = f"exit code {code}" if code is not None else (f"signal {sig}" if sig else "exit unknown")
        line = f"{verb} {result.job} ({how})"
        h = result.harvest
        if h is not None:
            line += f"; work on {h.branch or REVIEW} ({h.files} files)"
        elif result.review_branch:
            line += f"; work on {result.review_branch}"
        yield line
    return text


def finish(job: str = JOB, json_out: bool = JSON) -> int:
    """End the agent gracefully (its own exit command, else TERM), then harvest its work."""
    render.emit(control.finish(common.home(), job), json_out, _stopped("finished"))
    return 0


def cancel(
    job: str = JOB,
    reason: str = typer.Option(None, "--reason", help="Why, for the timeline."),
    json_out: bool = JSON,
) -> int:
    """Stop the agent now (TERM, grace, KILL), harvest what exists, mark the job cancelled."""
    render.emit(control.cancel(common.home(), job, reason), json_out, _stopped("cancelled"))
    return 0


def _harvested(r: Harvest) -> Iterator[render.Out]:
    where = r.branch or "(report only: autonomy level observe)"
    yield (f"harvested {r.job} onto {where} at {r.commit[:12]}: "
           f"{r.files} files, +{r.insertions} -{r.deletions}")
    yield f"review: {r.review}"


def harvest(job: str = JOB, json_out: bool = JSON) -> int:
    """Put the job's work on zen/review/<id> (a live agent keeps running; safe to repeat)."""
    render.emit(control.harvest_now(common.home(), job), json_out, _harvested)
    return 0


def _cleaned(done: list[control.Cleaned]) -> Iterator[render.Out]:
    for d in done:
        yield f"removed {d.worktree} (work stays on {d.review_branch})"
    if not done:
        yield "nothing to clean"


def clean(
    job: str = typer.Argument(None, help="Job id, unique prefix, or name."),
    harvested: bool = typer.Option(False, "--harvested", help="Every harvested job's worktree."),
    json_out: bool = JSON,
) -> int:
    """Remove worktrees of harvested jobs (their branches stay; unharvested work is never removed)."""
    if job is None and not harvested:
        raise ZenError("say which job to clean (zen clean JOB) or --harvested for all harvested jobs")
    render.emit(control.clean(common.home(), job, harvested=harvested), json_out, _cleaned)
    return 0


def register(app: typer.Typer) -> None:
    for name, fn in (("send", send), ("attach", attach), ("output", output), ("finish", finish),
                     ("cancel", cancel), ("harvest", harvest), ("clean", clean)):
        app.command(name)(fn)

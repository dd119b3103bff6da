"""The fast entry of the commands a script or a status bar runs over and over: `zen status`,
`zen show JOB` (issue 21: a CLI that answers at once).

typer costs a start of its own (about twice `python -c pass`), so zen/__main__.py hands these
commands here first: the argument forms below are parsed by hand and run through exactly the
functions the typer commands call (zen.orchestration.read.overview, zen.cli.views), so they print the
same. Anything else (--help, an option this parser does not know, a malformed value) returns None
and goes through the full CLI, which parses it, explains it, or refuses it as always.

    zen [--home H] status [--json]
    zen [--home H] show JOB [--events N]
    zen [--home H] dispatch [PROMPT] [--name N] [--lane L] ... [--json]   (zen/cli/submit.py's options)
"""

from __future__ import annotations

from zen.cli import funnel

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any


def _split(argv: list[str]) -> tuple[str | None, list[str]] | None:
    """(--home value, the command's words), or None for a root form this parser leaves alone."""
    home = None
    rest = list(argv)
    while rest and rest[0].startswith("-"):
        if rest[0] == "--home" and len(rest) >= 2:
            home, rest = rest[1], rest[2:]
        elif rest[0].startswith("--home="):
            home, rest = rest[0][len("--home="):], rest[1:]
        else:
            return None
    return home, rest


def _status(args: list[str]) -> Callable[[], int] | None:
    if args not in ([], ["--json"]):
        return None
    json_out = bool(args)

    return lambda: _emit("status", json_out)


def _show(args: list[str]) -> Callable[[], int] | None:
    job: str | None = None
    events = 10
    i = 0
    while i < len(args):
        a = args[i]
        if a == "--events" and i + 1 < len(args):
            try:
                events = int(args[i + 1])
            except ValueError:
                return None
            i += 2
            continue
        if a.startswith("-") or job is not None:
            return None      # --json, --help, an unknown option, a second argument: the full CLI
        job = a
        i += 1
    if job is None:
        return None
    ref = job

    return lambda: _emit("show", False, ref=ref, events=events)


def _emit(what: str, json_out: bool, ref: str = "", events: int = 10) -> int:
    """`zen status` or `zen show JOB`, printed as the full CLI prints them."""
    # loaded when the command runs: the fast entry imports only what it needs
    from zen.cli import render, views

    # loaded when the command runs: the fast entry imports only what it needs
    from zen.orchestration.read import overview

    if what == "status":
        render.emit(overview.status(_home(), full=json_out), json_out, views.status_lines)
    else:
        render.emit(overview.job(_home(), ref, last_events=events), False, views.show_lines)
    return 0


def _dispatch(args: list[str]) -> Callable[[], int] | None:
    """click's forms of the dispatch options (`--opt V`, `--opt=V`, `--` then words); a value
    that looks like an option, a bad --retries, a second prompt: the full CLI says why."""
    # loaded when the command runs: the fast entry imports only what it needs
    from zen.cli.submit import OPTIONS

    opts: dict[str, Any] = {"depends_on": []}
    prompt: str | None = None
    json_out = False
    words = list(args)
    positional_only = False
    while words:
        a = words.pop(0)
        if not positional_only and a == "--":
            positional_only = True
            continue
        if not positional_only and a.startswith("-") and a != "-":
            if a == "--json":
                json_out = True
                continue
            flag, eq, value = a.partition("=")
            if flag not in OPTIONS:
                return None
            if not eq:
                if not words or (words[0].startswith("-") and words[0] != "-"):
                    return None
                value = words.pop(0)
            key = OPTIONS[flag]
            if key == "depends_on":
                opts[key].append(value)
            elif key == "retries":
                try:
                    opts[key] = int(value)
                except ValueError:
                    return None
            else:
                opts[key] = value
            continue
        if prompt is not None:
            return None
        prompt = a
    if "task_file" in opts:
        # loaded when the command runs: the fast entry imports only what it needs
        from pathlib import Path

        opts["task_file"] = Path(opts["task_file"])

    def run() -> int:
        # loaded when the command runs: the fast entry imports only what it needs
        from zen.cli.submit import submit

        return submit(_home(), prompt, json_out=json_out, **opts)

    return run


_COMMANDS = {"status": _status, "show": _show, "dispatch": _dispatch}
_home_option: list[str | None] = [None]


def _home() -> Any:
    # zen.cli.common's home(), without the typer that module imports for its options
    from zen.store.home import find_home

    return find_home(_home_option[0])


def main(argv: list[str]) -> int | None:
    """The command's exit status, or None when the full CLI must take `argv`."""
    split = _split(argv)
    if split is None or not split[1] or split[1][0] not in _COMMANDS:
        return None
    home, words = split
    run = _COMMANDS[words[0]](words[1:])
    if run is None:
        return None
    _home_option[0] = home
    return funnel.run(run, lambda: _home_option[0])  # the full CLI's own funnel, codes and sentences

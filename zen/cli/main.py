"""The assembly of the command line, and its usage errors; every other error goes through the one
funnel (zen/cli/funnel.py, DESIGN section 9), which the fast entry (zen/cli/fast.py) shares.

Commands live in one module per family, named in COMMANDS below; only the module of the command
being run is imported, so `zen status` pays for what status needs and nothing else (the root
`--help`, and a name that is not a command, load them all so typer can list or suggest them).
"""

from __future__ import annotations

import importlib
import os
import sys

import typer

from zen import __version__
from zen.cli import common, funnel
from zen.store import defaults

HELP = """zen runs many AI coding agents side by side, each in its own git worktree and tmux
session, watched by a supervisor and checked by a fail-closed guardian.

Start with: zen init DIR, zen lane add NAME PATH, zen supervise --detach, zen dispatch "PROMPT".
"""

# command name -> the module that registers it, in the order `zen --help` lists them
COMMANDS: dict[str, str] = {
    "init": "zen.cli.home", "lane": "zen.cli.lane",
    "dispatch": "zen.cli.dispatch", "status": "zen.cli.status",
    "show": "zen.cli.jobs", "log": "zen.cli.jobs", "doctor": "zen.cli.doctor",
    "supervise": "zen.cli.supervise",
    "send": "zen.cli.control", "attach": "zen.cli.control", "output": "zen.cli.control",
    "finish": "zen.cli.control", "cancel": "zen.cli.control", "harvest": "zen.cli.control",
    "clean": "zen.cli.control", "pause": "zen.cli.serve", "resume": "zen.cli.serve",
    "guard": "zen.cli.guard", "approvals": "zen.cli.approvals", "approve": "zen.cli.approvals",
    "deny": "zen.cli.approvals", "gate": "zen.cli.gate",
    "accept": "zen.cli.autonomy", "reject": "zen.cli.autonomy", "autonomy": "zen.cli.autonomy",
    "kill-switch": "zen.cli.autonomy", "land": "zen.cli.serve", "check": "zen.cli.review", "comment": "zen.cli.review", "pr": "zen.cli.review", "compare": "zen.cli.review", "pick": "zen.cli.review",
    "incident": "zen.cli.incident", "preflight": "zen.cli.incident",
    "policy": "zen.cli.policy", "anomalies": "zen.cli.policy",
    "queue": "zen.cli.queue", "gc": "zen.cli.gc", "metrics": "zen.cli.metrics", "serve": "zen.cli.serve",
    "watch": "zen.cli.live", "grid": "zen.cli.live",
    "lock": "zen.cli.cmd_coord", "unlock": "zen.cli.cmd_coord", "locks": "zen.cli.cmd_coord",
    "changes": "zen.cli.cmd_coord",
    "team": "zen.cli.team", "mcp": "zen.cli.mcp", "recover": "zen.cli.recover", "config": "zen.cli.config",
    "demo": "zen.cli.demo", "run": "zen.cli.run", "sessions": "zen.cli.sessions",
    "hook": "zen.cli.hook",  # plumbing called by agents: listed last
    "remote-turn": "zen.cli.cmd_remote",  # plumbing: the entrypoint of a turn on a Ray worker
}
_ROOT_FLAGS_WITH_VALUE = {"--home"}
_HELP = {"-h", "--help"}


def command_name(argv: list[str]) -> str | None:
    """The command `argv` runs: its first word that is not a root option or an option's value."""
    skip = False
    for arg in argv:
        if skip:
            skip = False
            continue
        if arg in _ROOT_FLAGS_WITH_VALUE:
            skip = True
            continue
        if arg.startswith("-"):
            continue
        return arg
    return None


def modules_for(argv: list[str]) -> list[str]:
    name = command_name(argv)
    if name in COMMANDS:
        return [COMMANDS[name]]
    if name is None and argv and not _HELP & set(argv):
        return []  # root options only (--version): no command to load
    return list(dict.fromkeys(COMMANDS.values()))


_COMPLETION_FLAGS = {"--install-completion", "--show-completion", *_HELP}


def wants_completion(argv: list[str]) -> bool:
    """A shell asking for completions, or the root's --help / completion options (README)."""
    return bool(os.environ.get("_ZEN_COMPLETE")) or not argv or argv[0] in _COMPLETION_FLAGS


def build_app(argv: list[str] | None = None) -> typer.Typer:
    app = typer.Typer(
        name="zen",
        help=HELP,
        no_args_is_help=True,
        # typer's shell completion (--install-completion, --show-completion, and the _ZEN_COMPLETE
        # requests a shell makes): set up only when asked for, since it costs every command's start
        add_completion=wants_completion(sys.argv[1:] if argv is None else argv),
        pretty_exceptions_enable=False,
        rich_markup_mode=None,
        context_settings={"help_option_names": ["-h", "--help"]},
    )
    app.callback()(_root)
    for name in modules_for(sys.argv[1:] if argv is None else argv):
        # lazy command loading: importing every family would import all of zen for one command
        importlib.import_module(name).register(app)
    return app


def _show_version(value: bool) -> None:
    if value:
        sys.stdout.write(f"zen {__version__} (default policy: {defaults.policy_version()})\n")
        raise typer.Exit(0)


def _root(
    home: str = typer.Option(None, "--home", help="The zen home (else $ZEN_HOME, else the nearest ancestor with zen.yaml)."),
    version: bool = typer.Option(False, "--version", help="Print the version and exit.", is_eager=True,
                                 callback=_show_version),
) -> None:
    common.set_home_option(home)


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv

    def body() -> object:
        try:
            app = build_app(args)
            return app(args=args, prog_name="zen", standalone_mode=False)
        except typer.Exit as exc:
            return int(exc.exit_code or 0)
        except typer.Abort:
            return 130
        except typer.TyperException as exc:  # usage errors (bad option, missing argument, ...)
            show = getattr(exc, "show", None)
            if show is not None:
                show()
            else:
                sys.stderr.write(f"zen: {exc}\n")
            return int(getattr(exc, "exit_code", 2) or 2)

    return funnel.run(body, common.home_option)

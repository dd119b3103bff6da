"""zen watch, zen grid: the live views in the terminal (DESIGN section 12; zen/tui)."""

from __future__ import annotations

import gc
import os
import shlex
import sys

import typer

from zen.cli import common, render


def watch(
    plain: bool = typer.Option(False, "--plain", help="A plain live table (piped: one line per change), "
                               "for logs and dumb terminals."),
) -> int:
    """Every job, live, who needs you on top. Keys: a attach, s send, f finish, c cancel, h harvest,
    p pause/resume, d review diff, l lane, v view, / filter, q quit."""
    home = common.home()
    dumb = os.environ.get("TERM", "") in ("", "dumb")
    try:
        if plain or dumb or not (sys.stdin.isatty() and sys.stdout.isatty()):
            from zen.tui.plain import run_plain  # rich only: the full-screen app is not loaded

            return run_plain(home, tty=sys.stdout.isatty() and not dumb)
        from zen.tui.app import WatchApp  # Textual is loaded by this command only

        WatchApp(home).run()
        return 0
    finally:
        # the process ends next: its last garbage collection, over all a view imports (Textual,
        # pydantic, GitPython...), took 0.3-0.6 s after q or Ctrl-C and frees nothing the system
        # does not take back at exit anyway
        gc.freeze()


def grid(
    lane: str = typer.Option(None, "--lane", help="Only this lane's agents."),
    max_tiles: int = typer.Option(16, "--max", min=1, max=16, help="At most this many tiles (1-16)."),
    print_only: bool = typer.Option(False, "--print", help="Print the tmux command instead of running it."),
    socket: str = typer.Option(None, "--socket", help="A tmux server by socket name (tmux -L) instead of "
                               "your default one."),
    keep: bool = typer.Option(False, "--keep", hidden=True, help="Run the grid's keeper (inside the grid)."),
    session: str = typer.Option(None, "--session", hidden=True, help="The grid's session (for --keep)."),
) -> int:
    """Read-only live tiles of the running agents in a tmux session on your own tmux server,
    re-tiled as jobs start and end (zen attach JOB types into one)."""
    from zen.adapters.tmux import ViewServer  # tmux is loaded by this command only
    from zen.tui.grid import Grid  # with tmux: only this command loads the grid
    from zen.tui.grid import keep as keep_grid  # (the same module)

    g = Grid(common.home(), ViewServer(socket), lane=lane, max_tiles=max_tiles, session=session)
    if keep:
        return keep_grid(g)
    if print_only:
        render.say(g.print_command())
        return 0
    made = g.create()
    inside = bool(os.environ.get("TMUX"))
    argv = g.attach_argv(inside)
    if not (sys.stdin.isatty() and sys.stdout.isatty()) and not inside:
        render.say(f"zen grid: session {g.session} is {'ready' if made else 'already open'}; "
                   f"attach with: {shlex.join(argv)}")
        return 0
    if inside and socket is None:
        os.execvp(argv[0], argv)
    env = {k: v for k, v in os.environ.items() if k not in ("TMUX", "TMUX_PANE")}
    os.execvpe(argv[0], argv, env)
    return 0  # not reached


def register(app: typer.Typer) -> None:
    app.command("watch")(watch)
    app.command("grid")(grid)

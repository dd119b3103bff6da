"""`zen grid`: read-only live tiles of the agents, in a tmux session on the user's own server.

    zen-grid-<hash> (on your tmux server)
      window "grid": pane 0 = the keeper (this module's `keep`, printing what it shows)
                     one pane per live agent: `tmux -L zen-<hash> attach-session -r -t =<job>`

Each tile is a nested, read-only client of zen's private server, so keys typed into it never
reach the agent, and zen's server fixes every agent window's size (`window-size manual`, set by
the tmux adapter), so a tile never resizes an agent. The keeper follows the timelines (the same
feed as `zen watch`) and adds a tile when an agent starts, drops it when the agent ends, and
re-tiles. A tile whose agent's session ends closes by itself (remain-on-exit off on the grid's
window); the keeper's own pane keeps the window alive when no agent runs. `zen attach JOB` stays
the way to type into one.
"""

from __future__ import annotations

import queue
import shlex
import sys
from collections.abc import Iterable
from dataclasses import dataclass

from zen.adapters.tmux import Tmux, ViewServer
from zen.errors import TmuxError
from zen.store.home import Home
from zen.tui.feed import Feed, Update
from zen.tui.rows import JobView, ordered

MAX_TILES = 16
WINDOW = "grid"
JOB_OPTION = "@zen_job"      # the job a tile shows ("" on the keeper's pane)
TITLE_OPTION = "@zen_tile"   # what its border says
SETTLE_S = 0.05              # updates arriving together make one re-tiling
WIDTH, HEIGHT = 200, 50      # the grid's size until a client attaches (then the client's)


def session_name(home: Home) -> str:
    return "zen-grid-" + home.tmux_socket.removeprefix("zen-")


def wanted(views: Iterable[JobView], lane: str | None, max_tiles: int) -> list[JobView]:
    """The agents to show: live with a tmux session, in the lane, who needs you first."""
    live = [v for v in views if v.state in ("working", "waiting", "paused") and v.tmux_session
            and (lane is None or v.lane == lane)]
    return ordered(live)[:max_tiles]


def title(v: JobView) -> str:
    return f"{v.name} · {v.state_text()} · {v.job}"


@dataclass(frozen=True)
class Tile:
    pane_id: str
    job: str


class Grid:
    def __init__(self, home: Home, view: ViewServer, *, lane: str | None = None,
                 max_tiles: int = MAX_TILES, session: str | None = None) -> None:
        self.home = home
        self.view = view
        self.lane = lane
        self.max_tiles = max_tiles
        self.session = session or session_name(home)
        self.agents = Tmux.for_home(home)

    @property
    def window(self) -> str:
        return f"={self.session}:{WINDOW}"

    # -- making the session ---------------------------------------------------------------------
    def keeper_argv(self) -> list[str]:
        argv = [sys.executable, "-P", "-m", "zen", "--home", str(self.home.root), "grid", "--keep",
                "--session", self.session, "--max", str(self.max_tiles)]
        if self.lane:
            argv += ["--lane", self.lane]
        if self.view.socket:
            argv += ["--socket", self.view.socket]
        return argv

    def create_commands(self) -> list[list[str]]:
        """The tmux commands that make the grid's session, its keeper pane in it."""
        return [
            ["new-session", "-d", "-s", self.session, "-n", WINDOW, "-x", str(WIDTH), "-y", str(HEIGHT),
             *self.keeper_argv()],
            ["set-option", "-p", "-t", self.window, TITLE_OPTION, "zen grid (zen attach JOB to type into one)"],
            ["set-option", "-w", "-t", self.window, "remain-on-exit", "off"],
            ["set-option", "-w", "-t", self.window, "pane-border-status", "top"],
            ["set-option", "-w", "-t", self.window, "pane-border-format", f" #{{{TITLE_OPTION}}} "],
        ]

    def create(self) -> bool:
        """Make the session unless it exists. True when it was made now."""
        if self.view.has_session(self.session):
            return False
        self.view.run_chain(*self.create_commands())
        return True

    def print_command(self) -> str:
        """One shell line a user can run (or keep) to make the grid and attach to it."""
        parts = [shlex.join(self.view.argv(*self.create_commands()[0]))]
        for cmd in self.create_commands()[1:]:
            parts.append(shlex.join(cmd))
        make = " \\; ".join(parts)
        return f"{make} && {shlex.join(self.view.argv('attach-session', '-t', '=' + self.session))}"

    def attach_argv(self, inside_tmux: bool) -> list[str]:
        if inside_tmux and self.view.socket is None:
            return self.view.argv("switch-client", "-t", f"={self.session}")
        return self.view.argv("attach-session", "-t", f"={self.session}")

    # -- keeping the tiles ----------------------------------------------------------------------------
    def tiles(self) -> list[Tile]:
        r = self.view.run("list-panes", "-t", self.window, "-F", f"#{{pane_id}}\t#{{{JOB_OPTION}}}", check=False)
        if r.returncode != 0:
            raise TmuxError(f"the grid's window {self.window} is gone")
        out = []
        for line in r.stdout:
            pane_id, _, job = line.partition("\t")
            if job:
                out.append(Tile(pane_id, job))
        return out

    def tile_argv(self, v: JobView) -> list[str]:
        # a nested client: $TMUX names the grid's server and would make tmux refuse to nest
        return ["env", "-u", "TMUX", "-u", "TMUX_PANE", *self.agents.attach_argv(str(v.tmux_session)), "-r"]

    def reconcile(self, views: Iterable[JobView]) -> tuple[list[str], list[str]]:
        """Make the tiles match the live agents. (jobs added, jobs removed)."""
        want = {v.job: v for v in wanted(views, self.lane, self.max_tiles)}
        have = {t.job: t for t in self.tiles()}
        added, removed = [], []
        for job, v in want.items():
            if job in have:
                self.view.run("set-option", "-p", "-t", have[job].pane_id, TITLE_OPTION, title(v), check=False)
                continue
            r = self.view.run_chain(
                ["split-window", "-d", "-t", self.window, "-P", "-F", "#{pane_id}", *self.tile_argv(v)],
                check=False)
            if r.returncode != 0 or not r.stdout:
                # e.g. "no space for new pane": re-tile and try once more
                self.view.run("select-layout", "-t", self.window, "tiled", check=False)
                r = self.view.run("split-window", "-d", "-t", self.window, "-P", "-F", "#{pane_id}",
                                  *self.tile_argv(v), check=False)
                if r.returncode != 0 or not r.stdout:
                    continue
            pane_id = r.stdout[0].strip()
            self.view.run_chain(["set-option", "-p", "-t", pane_id, JOB_OPTION, job],
                                ["set-option", "-p", "-t", pane_id, TITLE_OPTION, title(v)],
                                ["select-layout", "-t", self.window, "tiled"], check=False)
            added.append(job)
        for job, t in have.items():
            if job not in want:
                self.view.run("kill-pane", "-t", t.pane_id, check=False)
                removed.append(job)
        if added or removed:
            self.view.run("select-layout", "-t", self.window, "tiled", check=False)
        return added, removed


def keep(grid: Grid) -> int:
    """The keeper's loop: follow the home, keep the tiles; ends when the grid's window does."""
    updates: queue.Queue[Update] = queue.Queue()
    feed = Feed(grid.home, updates.put)
    rows: dict[str, JobView] = {}
    feed.start()
    out = sys.stdout
    out.write(f"zen grid for {grid.home.root}: a read-only tile per live agent"
              f"{f' of lane {grid.lane}' if grid.lane else ''} (up to {grid.max_tiles}); "
              "zen attach JOB types into one\n")
    out.flush()
    try:
        while True:
            u = updates.get()
            batch = [u]
            while True:  # take what arrived together
                try:
                    batch.append(updates.get(timeout=SETTLE_S))
                except queue.Empty:
                    break
            for u in batch:
                if u.full:
                    rows.clear()
                rows.update({v.job: v for v in u.views})
                for job in u.gone:
                    rows.pop(job, None)
            try:
                added, removed = grid.reconcile(rows.values())
            except TmuxError as exc:
                out.write(f"zen grid: {exc}; stopping\n")
                return 1
            for job in added:
                out.write(f"+ {rows[job].name} ({job})\n")
            for job in removed:
                out.write(f"- {rows[job].name if job in rows else job} ({job})\n")
            out.flush()
    except KeyboardInterrupt:
        return 0
    finally:
        feed.stop()

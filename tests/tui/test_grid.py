"""`zen grid` on real tmux: agents on zen's private server, the grid on a second private server
standing in for the user's own (never the real one: TMUX_TMPDIR is private to the test)."""

from __future__ import annotations

import subprocess
from pathlib import Path

from tests.helpers import wait_until, zen
from tests.supervisor.util import dispatch_sim, wait_state
from tests.tui.conftest import Supervisors
from zen.store.home import Home
from zen.tui.grid import session_name


def tmux(sock: str, *args: str) -> list[str]:
    r = subprocess.run(["tmux", "-L", sock, *args], capture_output=True, text=True)
    return r.stdout.splitlines() if r.returncode == 0 else []


def sim_waiting(zh: Path, tmp: Path, name: str) -> str:
    job = dispatch_sim(zh, tmp, name, [{"say": f"{name} says hi"}, {"wait": True}])
    wait_state(zh, job, "waiting", timeout=30)
    return job


def test_one_read_only_tile_per_live_agent_sizes_kept_tiles_follow_jobs(
        zh: Path, sups: Supervisors, tmp_path: Path, tmux_server: str) -> None:
    sups.start()
    agents = Home(zh).tmux_socket
    grid = session_name(Home(zh))
    a = sim_waiting(zh, tmp_path, "alpha")
    b = sim_waiting(zh, tmp_path, "beta")

    def sizes() -> dict[str, str]:
        return dict(line.split(" ", 1) for line in
                    tmux(agents, "list-windows", "-a", "-F", "#{session_name} #{window_width}x#{window_height}"))

    def tiles() -> dict[str, str]:
        rows = tmux(tmux_server, "list-panes", "-t", f"={grid}:grid", "-F", "#{@zen_job}\t#{pane_id}")
        return {job: pane for job, _, pane in (r.partition("\t") for r in rows) if job}

    before = sizes()
    assert len(before) == 2 and set(before.values()) == {"200x50"}

    r = zen("grid", "--socket", tmux_server)
    assert r.returncode == 0, r.stderr
    assert "attach with: " in r.stdout and f"={grid}" in r.stdout
    wait_until(lambda: set(tiles()) == {a, b}, timeout=30, message="a tile for alpha and beta")
    for job, name in ((a, "alpha"), (b, "beta")):
        def shows(job: str = job, name: str = name) -> bool:
            return f"{name} says hi" in "\n".join(tmux(tmux_server, "capture-pane", "-p", "-t", tiles()[job]))

        wait_until(shows, timeout=20, message=f"{name}'s screen in its tile")
    clients = tmux(agents, "list-clients", "-F", "#{client_readonly} #{session_name}")
    assert sorted(clients) == sorted(f"1 {s}" for s in before)

    # keys typed into a tile never reach the agent; zen send does
    tmux(tmux_server, "send-keys", "-t", tiles()[a], "typed-into-the-tile", "Enter")
    assert zen("send", a, "sent-by-zen").returncode == 0
    wait_until(lambda: "ok: sent-by-zen" in zen("output", a).stdout, timeout=20, message="the answer to zen send")
    assert "typed-into-the-tile" not in zen("output", a).stdout
    assert sizes() == before

    c = sim_waiting(zh, tmp_path, "gamma")
    wait_until(lambda: set(tiles()) == {a, b, c}, timeout=30, message="gamma's tile")
    assert zen("finish", b).returncode == 0
    wait_until(lambda: set(tiles()) == {a, c}, timeout=30, message="beta's tile gone")
    after = sizes()
    assert {s: after[s] for s in before if s in after} == {s: v for s, v in before.items() if s in after}
    assert set(after.values()) == {"200x50"}
    layout = tmux(tmux_server, "display-message", "-p", "-t", f"={grid}:grid", "#{window_panes}")
    assert layout == ["3"]  # the keeper and two tiles


def test_grid_print_shows_the_command_and_runs_nothing(zh: Path, tmux_server: str) -> None:
    r = zen("grid", "--print", "--lane", "app", "--max", "4", "--socket", tmux_server)
    assert r.returncode == 0, r.stderr
    line = r.stdout.strip()
    assert line.startswith(f"{subprocess.run(['which', 'tmux'], capture_output=True, text=True).stdout.strip()} -L {tmux_server} new-session")
    assert "grid --keep" in line and "--lane app" in line and "--max 4" in line and line.endswith(f"attach-session -t ={session_name(Home(zh))}")
    assert tmux(tmux_server, "list-sessions") == []


def test_grid_refuses_a_bad_max(zh: Path) -> None:
    r = zen("grid", "--max", "40", "--print")
    assert r.returncode == 2 and "40" in r.stderr

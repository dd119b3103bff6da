"""More of zen's tmux adapter on a real private tmux server (the tmux_server fixture): pane facts
and their parsing, marks, typing literal text and keys, the dashboard's screen read, signalling
a pane, and errors as sentences. Facts are read back with the tmux binary where it matters."""

from __future__ import annotations

import os
import signal
import subprocess
from pathlib import Path

import pytest

from tests.helpers import wait_until
from zen.adapters.tmux import (
    HEIGHT,
    WIDTH,
    PaneInfo,
    Tmux,
    _escape_arg,
    screen,
    signal_pane,
    type_into,
)
from zen.errors import TmuxError


@pytest.fixture
def tmux(tmux_server: str, tmp_path: Path) -> Tmux:
    return Tmux(tmux_server, tmp_path / "control" / "tmux.conf")


def start(tmux: Tmux, tmp_path: Path, session: str, script: str, **kw: object) -> PaneInfo:
    cwd = tmp_path / "wt"
    cwd.mkdir(exist_ok=True)
    return tmux.start_pane(session, cwd, ["sh", "-c", script], dict(os.environ), tmp_path / f"{session}.log",
                           **kw)  # type: ignore[arg-type]


def shown(tmux: Tmux, pane_id: str, text: str) -> str:
    return wait_until(lambda: s if text in (s := tmux.capture(pane_id)) else None, timeout=10,
                      message=f"{text!r} on the screen")


# -- parsing pane facts (no server) ----------------------------------------------------------------

def test_pane_facts_of_a_live_and_a_dead_pane() -> None:
    live = PaneInfo.parse("zen-a\t%1\t0\t\t\t4242\t3,7\t")
    assert live == PaneInfo("%1", "zen-a", False, None, None, 4242, "3,7") and not live.settled
    dead = PaneInfo.parse("zen-a\t%1\t1\t3\t\t4242\t0,0\t")
    assert dead is not None and dead.exit_code == 3 and dead.signal is None and dead.settled
    killed = PaneInfo.parse("zen-a\t%1\t1\t\t9\t4242\t0,0\t")
    assert killed is not None and killed.signal == 9 and killed.settled


def test_a_dead_pane_without_a_status_yet_is_not_settled_unless_the_wrapper_told() -> None:
    blank = PaneInfo.parse("zen-a\t%1\t1\t\t\t\t0,0\t")
    assert blank is not None and blank.dead and not blank.settled and blank.pid is None
    told_signal = PaneInfo.parse("zen-a\t%1\t1\t\t\t\t0,0\t143")
    assert told_signal is not None and (told_signal.exit_code, told_signal.signal) == (None, 15)
    told_code = PaneInfo.parse("zen-a\t%1\t1\t\t\t\t0,0\t2")
    assert told_code is not None and (told_code.exit_code, told_code.signal) == (2, None)
    live_told = PaneInfo.parse("zen-a\t%1\t0\t\t\t1\t0,0\t2")        # alive: what it once told is stale
    assert live_told is not None and live_told.exit_code is None


@pytest.mark.parametrize("line", ["", "zen-a\t%1", "no tabs at all", "a\tb\tc\td\te\tf\tg"])
def test_what_is_not_a_pane_line_is_none(line: str) -> None:
    assert PaneInfo.parse(line) is None


def test_a_trailing_semicolon_is_escaped_for_tmux_and_nothing_else() -> None:
    assert _escape_arg("echo hi;") == "echo hi\\;" and _escape_arg("a;b") == "a;b" and _escape_arg(";") == "\\;"
    assert _escape_arg("") == ""


# -- on a real server ------------------------------------------------------------------------------

def test_typed_text_arrives_literally_even_with_a_trailing_semicolon(tmux: Tmux, tmp_path: Path) -> None:
    info = start(tmux, tmp_path, "zen-t", "cat")
    type_into(tmux, info.pane_id, [("text", "ls -la; rm x;"), ("key", "Enter"), ("text", "Enter"),
                                   ("key", "Enter")])
    screen_text = wait_until(lambda: c if (c := tmux.capture(info.pane_id)).count("Enter") == 2
                             and c.count("ls -la; rm x;") == 2 else None, timeout=10, message="both lines twice")
    assert "\\;" not in screen_text                              # the terminal's echo and cat's copy, as typed
    type_into(tmux, info.pane_id, [])                          # nothing to type: no call, no error


def test_send_keys_sends_tmux_key_names(tmux: Tmux, tmp_path: Path) -> None:
    info = start(tmux, tmp_path, "zen-k", "cat")
    tmux.send_keys(info.pane_id, ["h", "i", "BSpace", "o", "Enter"])
    assert "ho\nho" in shown(tmux, info.pane_id, "ho\nho")


def test_a_mark_is_read_back_and_names_are_exact(tmux: Tmux, tmp_path: Path) -> None:
    info = start(tmux, tmp_path, "zen-m", "sleep 30", mark="attempt-2")
    got = tmux.mark("zen-m")
    assert got is not None and got[0].pane_id == info.pane_id and got[1] == "attempt-2"
    unmarked = start(tmux, tmp_path, "zen-u", "sleep 30")
    got_u = tmux.mark("zen-u")
    assert got_u is not None and got_u[0].pane_id == unmarked.pane_id and got_u[1] == ""
    assert tmux.mark("zen-") is None and tmux.mark("nobody") is None
    assert set(tmux.panes()) >= {"zen-m", "zen-u"}


def test_screen_gives_rows_cursor_and_the_fixed_size(tmux: Tmux, tmp_path: Path) -> None:
    info = start(tmux, tmp_path, "zen-s", "printf '\\033[31mred\\033[0m plain\\n'; exec cat")
    shown(tmux, info.pane_id, "red plain")
    got = screen(tmux, info.pane_id)
    assert got is not None
    rows, cx, cy, w, h = got
    assert (w, h) == (WIDTH, HEIGHT) and (cx, cy) == (0, 1)
    assert "\x1b[31mred" in rows[0] and "plain" in rows[0]     # colours kept for the dashboard
    tmux.kill_session("zen-s")
    wait_until(lambda: not tmux.has_session("zen-s"), timeout=10, message="the session gone")
    assert screen(tmux, info.pane_id) is None


def test_signal_pane_reaches_the_panes_process_and_refuses_a_dead_one(tmux: Tmux, tmp_path: Path) -> None:
    info = start(tmux, tmp_path, "zen-g", 'trap "echo got-term; exit 0" TERM; echo ready; '
                                          'while :; do sleep 0.1; done')
    shown(tmux, info.pane_id, "ready")                          # its trap is in place
    assert signal_pane(info, signal.SIGTERM)
    shown(tmux, info.pane_id, "got-term")
    dead = wait_until(lambda: p if (p := tmux.pane("zen-g")) is not None and p.dead else None, timeout=10,
                      message="the pane dead")
    assert dead.exit_code in (None, 0) and dead.signal is None
    assert not signal_pane(dead, signal.SIGTERM)
    assert not signal_pane(PaneInfo("%9", "x", False, None, None, None, "0,0"), signal.SIGTERM)


def test_a_failed_command_is_one_line_naming_it(tmux: Tmux, tmp_path: Path) -> None:
    start(tmux, tmp_path, "zen-e", "sleep 30")
    with pytest.raises(TmuxError) as exc:
        tmux.run("kill-session", "-t", "=no-such-session")
    text = str(exc.value)
    assert text.startswith("tmux kill-session failed: ") and "\n" not in text
    assert tmux.run("kill-session", "-t", "=no-such-session", check=False).returncode != 0
    with pytest.raises(TmuxError, match="the agent command is empty"):
        tmux.start_pane("zen-x", tmp_path, [], {}, tmp_path / "x.log")


def test_attach_argv_names_the_private_socket_and_the_exact_session(tmux: Tmux, tmux_server: str) -> None:
    argv = tmux.attach_argv("zen-a")
    assert argv[1:] == ["-L", tmux_server, "-f", str(tmux.conf), "attach-session", "-t", "=zen-a"]
    assert Path(argv[0]).name == "tmux"


def test_killing_a_session_leaves_the_others(tmux: Tmux, tmp_path: Path, tmux_server: str) -> None:
    start(tmux, tmp_path, "zen-1", "sleep 30")
    start(tmux, tmp_path, "zen-10", "sleep 30")
    tmux.kill_session("zen-1")                                  # not a prefix of zen-10
    r = subprocess.run(["tmux", "-L", tmux_server, "list-sessions", "-F", "#{session_name}"],
                       capture_output=True, text=True)
    assert r.stdout.split() == ["zen-10"]
    tmux.kill_session("zen-1")                                  # gone already: no error

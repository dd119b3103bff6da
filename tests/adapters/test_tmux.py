"""zen's tmux adapter on a real private tmux server (a unique socket in the test's TMUX_TMPDIR).

Facts are read back with the tmux binary itself, not through the adapter under test.
"""

from __future__ import annotations

import os
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from tests.helpers import wait_until
from zen.adapters.tmux import HEIGHT, WIDTH, PaneInfo, Tmux
from zen.errors import TmuxError


@pytest.fixture
def tmux(tmux_server: str, tmp_path: Path) -> Tmux:
    return Tmux(tmux_server, tmp_path / "control" / "tmux.conf")


def fmt(socket: str, target: str, spec: str) -> str:
    r = subprocess.run(["tmux", "-L", socket, "display-message", "-p", "-t", target, spec],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    return r.stdout.strip()


def running(pid: int | None) -> bool:
    """Alive and not a zombie (tmux 3.3a may reap a dead pane's process late)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def start(tmux: Tmux, tmp_path: Path, session: str, script: str, *, env: dict[str, str] | None = None,
          exit_file: bool = False) -> PaneInfo:
    cwd = tmp_path / "wt"
    cwd.mkdir(exist_ok=True)
    return tmux.start_pane(session, cwd, ["sh", "-c", script], {**os.environ, **(env or {})},
                           tmp_path / f"{session}.log", exit_path=tmp_path / f"{session}.exit" if exit_file else None)


def test_a_session_runs_the_exact_argv_in_its_cwd_and_ends_on_kill(tmux: Tmux, tmp_path: Path) -> None:
    info = start(tmux, tmp_path, "zen-a", "sleep 30", env={"ZEN_JOB_ID": "a"})
    assert tmux.has_session("zen-a") and not tmux.has_session("zen-")  # exact names, no prefixes
    assert info.session == "zen-a" and info.pane_id.startswith("%") and not info.dead
    # the pane's process is the agent itself (exec'd through env, no shell in between); just
    # after the start it may still be tmux's fork on its way to the exec: poll for it
    wait_until(lambda: Path(f"/proc/{info.pid}/cmdline").read_bytes().split(b"\0")[:3] == [b"sh", b"-c", b"sleep 30"],
               message="the pane's process to be the agent's argv")
    assert Path(f"/proc/{info.pid}/cwd").resolve() == (tmp_path / "wt").resolve()
    assert b"ZEN_JOB_ID=a" in Path(f"/proc/{info.pid}/environ").read_bytes().split(b"\0")
    assert tmux.pane("zen-a") == info
    tmux.kill_session("zen-a")
    assert not tmux.has_session("zen-a") and tmux.pane("zen-a") is None
    tmux.kill_session("zen-a")  # a second kill is not an error


def test_the_server_global_environment_does_not_leak_into_an_agent(tmux: Tmux, tmp_path: Path) -> None:
    start(tmux, tmp_path, "zen-first", "sleep 30", env={"SECRET_OF_FIRST": "1"})
    # the first client started the server with SECRET_OF_FIRST in its global environment
    info = tmux.start_pane("zen-b", tmp_path, ["sleep", "30"],
                           {k: v for k, v in os.environ.items()}, tmp_path / "b.log")
    environ = Path(f"/proc/{info.pid}/environ").read_bytes().split(b"\0")
    assert not any(e.startswith(b"SECRET_OF_FIRST=") for e in environ)


def environ_of(pid: int | None) -> list[bytes]:
    return Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")


def test_the_agent_gets_the_path_it_was_given_not_zens(tmux: Tmux, tmp_path: Path) -> None:
    # tmux gives a new pane the PATH of the client asking (zen's), over -e PATH=...
    path = f"{tmp_path / 'shims'}:/usr/bin:/bin"
    assert os.environ["PATH"] != path
    for session in ("zen-p1", "zen-p2"):                    # the first start on a server, and a later one
        info = tmux.start_pane(session, tmp_path, ["sleep", "30"], {"PATH": path, "FOO": "1"}, tmp_path / "p.log")
        wait_until(lambda i=info: Path(f"/proc/{i.pid}/cmdline").read_bytes() == b"sleep\x0030\x00",
                   message="the agent exec'd")
        assert f"PATH={path}".encode() in environ_of(info.pid) and b"FOO=1" in environ_of(info.pid)


def test_later_starts_are_one_client_call_and_still_unset_the_servers_environment(
        tmux: Tmux, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    start(tmux, tmp_path, "zen-first", "sleep 30")
    subprocess.run(["tmux", "-L", tmux.socket, "set-environment", "-g", "GLOBAL_SECRET", "x"], check=True)
    start(tmux, tmp_path, "zen-learn", "sleep 30")            # the slow way learns the names
    calls: list[int] = []
    real = tmux.run_chain
    monkeypatch.setattr(tmux, "run_chain", lambda *c, **k: calls.append(len(c)) or real(*c, **k))
    infos = [start(tmux, tmp_path, f"zen-fast-{i}", "sleep 30", exit_file=True) for i in range(3)]
    assert len(calls) == 3                                      # one tmux client per agent started
    for info in infos:
        wait_until(lambda i=info: Path(f"/proc/{i.pid}/cmdline").read_bytes().startswith(b"sh\0-c\0"),
                   message="the agent's wrapper to run")
        assert not any(e.startswith(b"GLOBAL_SECRET=") for e in environ_of(info.pid))
    assert sorted(tmux.panes()) == sorted(["zen-first", "zen-learn", "zen-fast-0", "zen-fast-1", "zen-fast-2"])
    assert fmt(tmux.socket, "=zen-fast-2:", "#{pane_pipe}") == "1"   # its output goes to the log too


def test_a_global_name_set_after_the_names_were_learnt_still_never_reaches_an_agent(
        tmux: Tmux, tmp_path: Path) -> None:
    start(tmux, tmp_path, "zen-first", "sleep 30")
    start(tmux, tmp_path, "zen-second", "sleep 30")
    subprocess.run(["tmux", "-L", tmux.socket, "set-environment", "-g", "LATE_SECRET", "y"], check=True)
    info = start(tmux, tmp_path, "zen-late", "sleep 30")
    wait_until(lambda: Path(f"/proc/{info.pid}/cmdline").read_bytes().startswith(b"sh\0-c\0"),
               message="the agent to run")
    assert not any(e.startswith(b"LATE_SECRET=") for e in environ_of(info.pid))
    assert tmux.pane("zen-late") == info and list(tmux.panes()).count("zen-late") == 1


def test_an_agent_that_dies_at_once_leaves_its_exit_status(tmux: Tmux, tmp_path: Path) -> None:
    start(tmux, tmp_path, "zen-quick", "exit 7", exit_file=True)
    # the pane stays (remain-on-exit), dead; its status comes from tmux or, where tmux 3.3a has
    # not reaped the process yet and leaves it blank, from the wrapper's exit file
    info = wait_until(lambda: (p := tmux.pane("zen-quick")) is not None and p.dead and p, message="a dead pane")
    assert fmt(tmux.socket, info.pane_id, "#{pane_dead}") == "1"
    wait_until((tmp_path / "zen-quick.exit").exists, message="the wrapper's exit file")
    assert (tmp_path / "zen-quick.exit").read_text().strip() == "7"
    info = tmux.pane("zen-quick")
    assert info is not None and info.signal is None and info.exit_code in (None, 7)
    if info.settled:
        assert fmt(tmux.socket, info.pane_id, "#{pane_dead_status}") == "7"


def test_a_signal_death_is_told_as_a_signal(tmux: Tmux, tmp_path: Path) -> None:
    start(tmux, tmp_path, "zen-sig", "kill -TERM $$", exit_file=True)
    wait_until((tmp_path / "zen-sig.exit").exists, message="the wrapper's exit file")
    assert (tmp_path / "zen-sig.exit").read_text().strip() == "143"  # 128 + SIGTERM, shell style
    info = wait_until(lambda: (p := tmux.pane("zen-sig")) is not None and p.dead and p, message="dead")
    assert info.exit_code in (None, 143) and (info.signal in (None, 15))


def test_an_exit_status_the_wrapper_cannot_write_to_its_file_is_kept_by_tmux(tmux: Tmux, tmp_path: Path) -> None:
    # a full disk (here: a folder that is not there) keeps the wrapper from writing its exit
    # file; it leaves the status in tmux's memory, and the pane's facts carry it as its exit
    for session, script, code, sig in (("zen-nofile", "exit 7", 7, None), ("zen-nofile-sig", "kill -TERM $$", None, 15)):
        cwd = tmp_path / "wt"
        cwd.mkdir(exist_ok=True)
        tmux.start_pane(session, cwd, ["sh", "-c", script], dict(os.environ), tmp_path / f"{session}.log",
                        exit_path=tmp_path / "no-such-folder" / f"{session}.exit")
        info = wait_until(lambda s=session: (p := tmux.pane(s)) is not None and p.settled and p,  # type: ignore[misc]
                          message="a dead pane with its status")
        assert fmt(tmux.socket, info.pane_id, "#{@zen_exit}") == str(code if sig is None else 128 + sig)
        assert (info.exit_code, info.signal) == (code, sig)
        assert not (tmp_path / "no-such-folder").exists()


def test_a_dead_pane_tmux_has_not_reaped_takes_the_status_the_wrapper_told() -> None:
    line = "\t".join(["zen-x", "%3", "1", "", "", "42", "0,0", "{}"])
    assert PaneInfo.parse(line.format("")) == PaneInfo("%3", "zen-x", True, None, None, 42, "0,0")
    assert not PaneInfo.parse(line.format("")).settled                    # type: ignore[union-attr]
    told = PaneInfo.parse(line.format("3"))
    assert told is not None and told.settled and (told.exit_code, told.signal) == (3, None)
    assert PaneInfo.parse(line.format("137")) == PaneInfo("%3", "zen-x", True, None, 9, 42, "0,0")
    # tmux's own status wins; a live pane has none, whatever the option says
    reaped = "\t".join(["zen-x", "%3", "1", "0", "", "42", "0,0", "5"])
    assert PaneInfo.parse(reaped).exit_code == 0                          # type: ignore[union-attr]
    alive = "\t".join(["zen-x", "%3", "0", "", "", "42", "0,0", "5"])
    assert PaneInfo.parse(alive).exit_code is None                        # type: ignore[union-attr]


def test_the_pane_output_is_piped_to_the_log_from_the_first_byte(tmux: Tmux, tmp_path: Path) -> None:
    start(tmux, tmp_path, "zen-log", "echo first-line; echo second-line; exit 0")
    log = tmp_path / "zen-log.log"
    wait_until(lambda: b"second-line" in log.read_bytes(), message="the output in pane.log")
    assert log.read_bytes().index(b"first-line") < log.read_bytes().index(b"second-line")


def test_capture_reads_the_screen_and_with_history_the_scrollback(tmux: Tmux, tmp_path: Path) -> None:
    info = start(tmux, tmp_path, "zen-cap", "for i in $(seq 1 120); do echo row-$i; done; sleep 30")
    wait_until(lambda: "row-120" in tmux.capture(info.pane_id), message="the last row on screen")
    screen = tmux.capture(info.pane_id)
    assert "row-1\n" not in screen and len(screen.splitlines()) <= HEIGHT  # scrolled off the screen
    history = tmux.capture(info.pane_id, history=True)
    assert "row-1\n" in history and history.index("row-1\n") < history.index("row-120")
    assert tmux.capture("%99999") == ""  # a pane that is gone reads as empty


def test_send_text_types_a_line_starting_with_a_dash_then_enter(tmux: Tmux, tmp_path: Path) -> None:
    out = tmp_path / "got"
    info = start(tmux, tmp_path, "zen-in", f"read line; printf '%s' \"$line\" > {out}; sleep 30")
    tmux.send_text(info.pane_id, "-n a line that looks like flags")
    wait_until(out.exists, message="the agent read the line")
    assert out.read_text() == "-n a line that looks like flags"


def test_multi_line_text_arrives_as_one_bracketed_paste(tmux: Tmux, tmp_path: Path) -> None:
    # an app that asked for bracketed paste gets the lines between the paste markers, so its
    # newlines do not submit; Enter follows the paste
    out = tmp_path / "paste"
    reader = (
        "import os, sys, tty\n"
        "tty.setraw(0); sys.stdout.write('\\x1b[?2004hREADY'); sys.stdout.flush()\n"
        "data = b''\n"
        "while not data.endswith(b'\\r') or b'\\x1b[201~' not in data:\n"
        "    data += os.read(0, 1024)\n"
        f"open({str(out)!r}, 'wb').write(data)\n"
    )
    script = tmp_path / "reader.py"
    script.write_text(reader)
    cwd = tmp_path / "wt"
    cwd.mkdir()
    info = tmux.start_pane("zen-paste", cwd, [sys.executable, str(script)], dict(os.environ), tmp_path / "p.log")
    # tmux has read the request for bracketed paste once it shows what came after it
    wait_until(lambda: "READY" in tmux.capture(info.pane_id), message="the app asked for bracketed paste")
    tmux.send_text(info.pane_id, "first line\nsecond line\n")
    wait_until(out.exists, message="the reader got the paste and Enter")
    data = out.read_bytes()
    assert data.startswith(b"\x1b[200~first line") and b"second line\x1b[201~" in data
    assert data.endswith(b"\r") and data.count(b"\x1b[200~") == 1


def test_a_leftover_session_of_the_same_name_is_replaced(tmux: Tmux, tmp_path: Path) -> None:
    old = start(tmux, tmp_path, "zen-again", "sleep 30", exit_file=True)
    (tmp_path / "zen-again.exit").write_text("9\n")  # as an earlier attempt might have left it
    new = start(tmux, tmp_path, "zen-again", "sleep 31", exit_file=True)
    assert new.pane_id != old.pane_id and new.pid != old.pid
    assert list(tmux.panes()) == ["zen-again"] and tmux.pane("zen-again") == new
    wait_until(lambda: not running(old.pid), message="the old agent gone")
    assert not (tmp_path / "zen-again.exit").exists()


def test_commands_name_their_target_even_when_zen_runs_inside_tmux(
        tmux: Tmux, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    first = start(tmux, tmp_path, "zen-one", "sleep 30")
    out = tmp_path / "two-got"
    second = start(tmux, tmp_path, "zen-two", f"read l; echo \"$l\" > {out}; sleep 30")
    # as if zen ran in the user's tmux, in a pane whose id names another of zen's own panes
    monkeypatch.setenv("TMUX", "/tmp/elsewhere,1,0")
    monkeypatch.setenv("TMUX_PANE", first.pane_id)
    tmux.send_text(second.pane_id, "for two")
    wait_until(out.exists, message="the text reached the pane it was sent to")
    assert out.read_text() == "for two\n"
    third = start(tmux, tmp_path, "zen-three", "sleep 30")
    assert set(tmux.panes()) == {"zen-one", "zen-two", "zen-three"} and third.session == "zen-three"


def _attach_viewer(agent_socket: str, session: str, width: int, height: int) -> str:
    """A client of `width`x`height` attached read-only to `session`, the way `zen grid` tiles
    views: inside a pane of another private server. Returns that server's socket name."""
    viewer = f"zt-view-{uuid.uuid4().hex[:8]}"
    attach = f"env -u TMUX tmux -L {agent_socket} attach-session -r -t ={session}"
    subprocess.run(["tmux", "-L", viewer, "-f", "/dev/null", "new-session", "-d", "-s", "v",
                    "-x", str(width), "-y", str(height), attach], check=True)
    wait_until(lambda: _clients(agent_socket), message="the viewer attached")
    return viewer


def _clients(socket: str) -> str:
    r = subprocess.run(["tmux", "-L", socket, "list-clients", "-F", "#{client_name}"],
                       capture_output=True, text=True)
    return r.stdout.strip()


def _size(socket: str, target: str) -> str:
    return fmt(socket, target, "#{window_width}x#{window_height}")


def test_an_attached_viewer_of_another_size_never_resizes_an_agent(tmux: Tmux, tmp_path: Path,
                                                                    tmux_server: str) -> None:
    info = start(tmux, tmp_path, "zen-view", "echo agent-ready; sleep 30")
    assert _size(tmux.socket, info.pane_id) == f"{WIDTH}x{HEIGHT}"
    viewer = _attach_viewer(tmux.socket, "zen-view", 90, 25)
    try:
        wait_until(lambda: "agent-ready" in subprocess.run(
            ["tmux", "-L", viewer, "capture-pane", "-p", "-t", "v"], capture_output=True, text=True).stdout,
            message="the viewer drew the agent's screen")
        assert _size(tmux.socket, info.pane_id) == f"{WIDTH}x{HEIGHT}"
        # and the server takes new agents while the viewer stays (a global window-size manual
        # crashes tmux 3.3a's server right here)
        later = start(tmux, tmp_path, "zen-later", "sleep 30")
        assert _size(tmux.socket, later.pane_id) == f"{WIDTH}x{HEIGHT}"
        assert set(tmux.panes()) == {"zen-view", "zen-later"}
    finally:
        subprocess.run(["tmux", "-L", viewer, "kill-server"], capture_output=True)


def test_without_zens_config_the_same_viewer_does_resize(tmp_path: Path) -> None:
    """The check above can fail: on a server with tmux's defaults the viewer shrinks the window."""
    plain = f"zt-plain-{uuid.uuid4().hex[:8]}"
    try:
        subprocess.run(["tmux", "-L", plain, "-f", "/dev/null", "new-session", "-d", "-s", "p",
                        "-x", str(WIDTH), "-y", str(HEIGHT), "sleep 30"], check=True)
        viewer = _attach_viewer(plain, "p", 90, 25)
        try:
            wait_until(lambda: _size(plain, "p") != f"{WIDTH}x{HEIGHT}", message="the resize")
        finally:
            subprocess.run(["tmux", "-L", viewer, "kill-server"], capture_output=True)
    finally:
        subprocess.run(["tmux", "-L", plain, "kill-server"], capture_output=True)


def test_no_server_means_no_panes_and_killing_it_twice_is_fine(tmux: Tmux, tmp_path: Path) -> None:
    assert tmux.panes() == {} and not tmux.has_session("zen-x")
    start(tmux, tmp_path, "zen-k", "sleep 30")
    tmux.kill_server()
    assert tmux.panes() == {}
    tmux.kill_server()


def test_a_missing_tmux_is_a_sentence(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    t = Tmux("zt-none", tmp_path / "tmux.conf")
    with pytest.raises(TmuxError, match="tmux is not installed"):
        t.panes()
    with pytest.raises(TmuxError, match="tmux is not installed"):
        t.start_pane("zen-n", tmp_path, ["true"], {}, tmp_path / "n.log")


def test_the_config_is_written_once_and_kept(tmux: Tmux) -> None:
    tmux.ensure_conf()
    text = tmux.conf.read_text()
    assert "set -g remain-on-exit on" in text and "\nset -g window-size" not in text
    mtime = tmux.conf.stat().st_mtime_ns
    tmux.ensure_conf()
    assert tmux.conf.stat().st_mtime_ns == mtime
    tmux.conf.write_text("# edited by hand\n")
    tmux.ensure_conf()
    assert tmux.conf.read_text() == text


def test_a_paste_into_a_pane_that_just_died_leaves_the_server_and_every_other_agent_alive(
        tmux: Tmux, tmp_path: Path) -> None:
    # tmux 3.3a's server crashes on paste-buffer into a dead pane kept by remain-on-exit: one
    # `zen send` racing an agent's death took every other job's session with it
    other = start(tmux, tmp_path, "zen-other", "sleep 60")
    dying = start(tmux, tmp_path, "zen-dying", "cat")
    wait_until(lambda: running(dying.pid), message="the pane's process")
    assert dying.pid is not None
    os.kill(dying.pid, 9)
    wait_until(lambda: (p := tmux.pane("zen-dying")) is not None and p.dead, message="the pane dead")
    tmux.send_text(dying.pane_id, "first line\nsecond line")      # a paste, to a dead pane
    assert tmux.has_session("zen-other") and running(other.pid)
    assert (p := tmux.pane("zen-dying")) is not None and p.dead and p.signal == 9

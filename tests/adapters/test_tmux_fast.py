"""start_pane's one-call path on a real private tmux server: once the server's global environment
names are known, new-session starts the agent itself in the same client call that pipes its
output, keeps its dead pane and marks it. These tests hold it to what the two-call path (a
placeholder, then respawn-pane) promised. Facts are read back with the tmux binary."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from tests.helpers import wait_until
from zen.adapters.tmux import _PANE_OWNED, Tmux


@pytest.fixture
def tmux(tmux_server: str, tmp_path: Path) -> Tmux:
    return Tmux(tmux_server, tmp_path / "control" / "tmux.conf", tmp_path / "died")


def tm(socket: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["tmux", "-L", socket, *args], capture_output=True, text=True)


def fmt(socket: str, target: str, spec: str) -> str:
    r = tm(socket, "display-message", "-p", "-t", target, spec)
    assert r.returncode == 0, r.stderr
    return r.stdout.strip()


def environ_of(pid: int | None) -> dict[str, str]:
    raw = Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
    return dict(e.decode().split("=", 1) for e in raw if b"=" in e)


def count_calls(tmux: Tmux, monkeypatch: pytest.MonkeyPatch) -> list[int]:
    calls: list[int] = []
    real = tmux.run_chain

    def counted(*commands: list[str], check: bool = True) -> object:
        calls.append(len(commands))
        return real(*commands, check=check)

    monkeypatch.setattr(tmux, "run_chain", counted)
    return calls


def test_an_agent_that_prints_and_exits_at_once_loses_neither_its_output_nor_its_status(
        tmux: Tmux, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    tmux.start_pane("zen-learn", tmp_path, ["sleep", "30"], dict(os.environ), tmp_path / "learn.log")
    calls = count_calls(tmux, monkeypatch)
    for i in range(20):
        session, log, exit_file = f"zen-q{i}", tmp_path / f"q{i}.log", tmp_path / f"q{i}.exit"
        before = len(calls)
        info = tmux.start_pane(session, tmp_path, ["sh", "-c", "printf early; exit 7"], dict(os.environ), log,
                               exit_path=exit_file, mark=f"job-q{i}:1")
        assert len(calls) == before + 1                   # the one-call path, every time
        assert info.session == session
        wait_until(lambda: b"early" in log.read_bytes(), message=f"{session}'s first bytes in its log")  # noqa: B023
        wait_until(exit_file.exists, message=f"{session}'s exit file")
        assert exit_file.read_text().strip() == "7"
        # remain-on-exit held the pane, dead, with tmux's own status 7, or blank where tmux 3.3a
        # never fills it in (about 1 in 40 here, with the placeholder-and-respawn start too:
        # hence the exit file)
        wait_until(lambda: fmt(tmux.socket, info.pane_id, "#{pane_dead}") == "1",  # noqa: B023 (called at once)
                   message=f"{session}'s dead pane")
        assert fmt(tmux.socket, info.pane_id, "#{pane_dead_status}") in ("7", "")
        assert fmt(tmux.socket, info.pane_id, "#{@zen_attempt}") == f"job-q{i}:1"
        mark = tmux.mark(session)
        assert mark is not None and mark[1] == f"job-q{i}:1" and mark[0].exit_code in (7, None)
    # the died hook was in place for each of them
    wait_until((tmp_path / "died").exists, message="the pane-died hook's file")


def test_the_one_call_path_gives_the_agent_exactly_what_the_two_call_path_did(
        tmux: Tmux, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # the first client starts the server: its environment becomes the server's global one
    env = {"PATH": "/usr/bin:/bin", "ZEN_JOB_ID": "j1", "SPACED": "a b;", "HOME": str(tmp_path)}
    slow = tmux.start_pane("zen-slow", tmp_path, ["sleep", "30"], env, tmp_path / "s.log")
    calls = count_calls(tmux, monkeypatch)
    fast = tmux.start_pane("zen-fast", tmp_path, ["sleep", "30"], env, tmp_path / "f.log", window="fix-login")
    assert len(calls) == 1
    wait_until(lambda: Path(f"/proc/{fast.pid}/cmdline").read_bytes() == b"sleep\x0030\x00",
               message="the agent exec'd")
    got, before = environ_of(fast.pid), environ_of(slow.pid)
    assert got.keys() == before.keys()
    assert {k: v for k, v in got.items() if k not in _PANE_OWNED} == {k: v for k, v in before.items()
                                                                   if k not in _PANE_OWNED} == env
    assert "GIT_AUTHOR_NAME" in os.environ and "GIT_AUTHOR_NAME" not in got   # the server's global one
    assert Path(f"/proc/{fast.pid}/cwd").resolve() == tmp_path.resolve()
    assert fmt(tmux.socket, "=zen-fast:", "#{window_name} #{window_width}x#{window_height} #{pane_pipe}") \
        == "fix-login 200x50 1"


def test_a_window_a_user_opens_in_an_agents_session_does_not_get_the_agents_environment(
        tmux: Tmux, tmp_path: Path) -> None:
    env = {**os.environ, "ZEN_JOB_ID": "j7", "AGENT_KEY": "k"}
    tmux.start_pane("zen-first", tmp_path, ["sleep", "30"], env, tmp_path / "1.log")
    tmux.start_pane("zen-job", tmp_path, ["sleep", "30"], env, tmp_path / "2.log")   # the one-call path
    # new-session -e set these in the session's environment too; start_pane took them out again
    shown = tm(tmux.socket, "show-environment", "-t", "=zen-job").stdout
    assert "ZEN_JOB_ID" not in shown and "AGENT_KEY" not in shown
    out = tmp_path / "window-env"
    r = tm(tmux.socket, "new-window", "-d", "-t", "=zen-job:", f"env > {out}")
    assert r.returncode == 0, r.stderr
    wait_until(lambda: out.exists() and "PATH=" in out.read_text(), message="the user's window ran")
    assert "ZEN_JOB_ID=" not in out.read_text() and "AGENT_KEY=" not in out.read_text()


def test_a_name_set_globally_after_the_names_were_learnt_restarts_the_agent_without_it(
        tmux: Tmux, tmp_path: Path) -> None:
    tmux.start_pane("zen-first", tmp_path, ["sleep", "30"], dict(os.environ), tmp_path / "1.log")
    tmux.start_pane("zen-second", tmp_path, ["sleep", "30"], dict(os.environ), tmp_path / "2.log")
    tm(tmux.socket, "set-environment", "-g", "LATE_SECRET", "y")
    exit_file = tmp_path / "late.exit"
    info = tmux.start_pane("zen-late", tmp_path, ["sh", "-c", "printf started; sleep 30"], dict(os.environ),
                           tmp_path / "late.log", exit_path=exit_file, mark="job-late:1")
    wait_until(lambda: Path(f"/proc/{info.pid}/cmdline").read_bytes().startswith(b"sh\0-c\0"),
               message="the restarted agent's wrapper")
    assert "LATE_SECRET" not in environ_of(info.pid)
    now = tmux.pane("zen-late")
    assert now is not None and (now.pane_id, now.pid, now.dead) == (info.pane_id, info.pid, False)
    assert fmt(tmux.socket, info.pane_id, "#{@zen_attempt}") == "job-late:1"
    assert not exit_file.exists()          # the killed first agent's wrapper wrote nothing
    wait_until(lambda: b"started" in (tmp_path / "late.log").read_bytes(), message="the agent's output logged")


def test_a_global_value_changed_after_it_was_learnt_never_reaches_an_agent(
        tmux: Tmux, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # an agent whose variable the server's global environment holds with the same value gets it
    # from there; when someone changed it since, the agent starts again with its own value
    monkeypatch.setenv("SHARED_TOKEN", "mine")      # the first client starts the server with it
    env = dict(os.environ)
    tmux.start_pane("zen-first", tmp_path, ["sleep", "30"], env, tmp_path / "1.log")
    inherited = tmux.start_pane("zen-same", tmp_path, ["sleep", "30"], env, tmp_path / "2.log")
    tm(tmux.socket, "set-environment", "-g", "SHARED_TOKEN", "someone-elses")
    info = tmux.start_pane("zen-changed", tmp_path, ["sleep", "30"], env, tmp_path / "3.log", mark="job-c:1")
    for started in (inherited, info):
        wait_until(lambda s=started: Path(f"/proc/{s.pid}/cmdline").read_bytes() == b"sleep\x0030\x00",  # type: ignore[misc]
                   message="the agent exec'd")
    assert environ_of(inherited.pid)["SHARED_TOKEN"] == "mine"
    now = tmux.pane("zen-changed")
    assert now is not None and now.pid == info.pid and not now.dead
    assert environ_of(info.pid)["SHARED_TOKEN"] == "mine"
    assert fmt(tmux.socket, info.pane_id, "#{@zen_attempt}") == "job-c:1"

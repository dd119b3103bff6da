"""The resident guardian (`zen guard serve`) and the hook as its thin client: the same answers as
the hook gives alone, the audit records still written, and every way the server can be missing,
dead, silent, wrong or stale ends in the hook deciding for itself (never in an allow it did not
earn, never in an exit code other than 0 or 2)."""

from __future__ import annotations

import fcntl
import json
import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.guard.util import bash, events, hook, job_env, make_job, set_policy, write_tool
from tests.helpers import REPO_ROOT, ZEN, wait_until, zen
from zen.guard.hook import verdict
from zen.guard.resident import client, wire
from zen.guard.resident.server import Server

SAME = [
    "git status", "ls -la src", "rm -rf build dist", "rm -rf ~/.ssh", "sudo apt-get install jq",
    "git push --force origin main", "cat .env", "cat .env.example", "bash -c 'rm -rf /'",
    "cd / && rm -rf tmp", "curl -s https://api.stripe.com/v1/charges", "zen approve 12ab",
    "echo x > ~/.zen-home/control/KILL", "python -c 'import shutil; shutil.rmtree(\"/etc\")'",
    "find . -name '*.pyc' -delete", "git reset --har HEAD~3", "tmux -L zen-x kill-server",
]


def serve(home: Path, *args: str) -> subprocess.Popen[bytes]:
    proc = subprocess.Popen([*ZEN, "guard", "serve", "--home", str(home), *args], stdin=subprocess.DEVNULL,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    sock = home / "control" / "guard.sock"
    wait_until(lambda: sock.exists() or proc.poll() is not None, timeout=30, message="zen guard serve to listen")
    assert proc.poll() is None, proc.stderr.read().decode() if proc.stderr else ""
    return proc


def servers_of(home: Path) -> list[int]:
    """Pids of the `zen guard serve` processes of `home` still running."""
    needle = b"\0guard\0serve\0--home\0" + os.fsencode(str(home)) + b"\0"
    found = []
    for d in Path("/proc").iterdir():
        try:
            cmdline = (d / "cmdline").read_bytes()
        except OSError:
            continue
        if d.name.isdigit() and needle in b"\0" + cmdline:
            found.append(int(d.name))
    return found


def stop(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=20)


@pytest.fixture
def wt(home: Path) -> Path:
    return make_job(home, "j1")


@pytest.fixture
def served(home: Path, wt: Path) -> Iterator[subprocess.Popen[bytes]]:
    proc = serve(home)
    yield proc
    stop(proc)


def answers(home: Path, wt: Path, env: dict[str, str]) -> list[tuple[int, str, str]]:
    out = []
    for command in SAME:
        r = hook(bash(command, wt), env=env)
        out.append((r.returncode, r.stdout, r.stderr))
    for payload, args in [(write_tool(wt / "src" / "a.py", wt), ()), (write_tool(home / "policy" / "guardian.yaml", wt), ()),
                          (bash("git status", wt), ("--agent", "codex")), (bash("sudo ls", wt), ("--agent", "codex"))]:
        r = hook(payload, *args, env=env)
        out.append((r.returncode, r.stdout, r.stderr))
    r = hook(None, raw=b"not json", env=env)
    out.append((r.returncode, r.stdout, r.stderr))
    return out


def test_the_served_hook_answers_as_the_hook_alone(home: Path, wt: Path) -> None:
    env = job_env(home, "j1")
    alone = answers(home, wt, env)
    assert {code for code, _, _ in alone} == {0, 2}
    proc = serve(home)
    try:
        assert answers(home, wt, env) == alone
    finally:
        stop(proc)


def _loaded_after_hook(payload: dict, env: dict[str, str]) -> tuple[int, set[str]]:
    # the console script's own path: zen.__main__, then the hook. Every module the process
    # imports, as -X importtime lists them (the hook leaves with os._exit: no code runs after it)
    r = subprocess.run([sys.executable, "-X", "importtime", "-m", "zen", "guard", "hook"],
                       input=json.dumps(payload).encode(), capture_output=True,
                       env={**os.environ, **env}, cwd=REPO_ROOT, timeout=60)
    modules = {line.rsplit("|", 1)[1].strip() for line in r.stderr.decode().splitlines()
               if line.startswith("import time:") and line.count("|") == 2}
    assert "zen.guard.hook" in modules, r.stderr.decode()[-500:]
    return r.returncode, modules


def test_with_a_server_the_hook_loads_neither_the_core_nor_json_nor_typing(home: Path, wt: Path,
                                                                             served: subprocess.Popen[bytes]) -> None:
    rc, modules = _loaded_after_hook(bash("git status", wt), job_env(home, "j1"))
    assert rc == 0
    assert "zen.guard.resident.client" in modules
    assert not modules & {"zen.guard.context", "zen.guard.analyse", "tree_sitter", "json", "typing", "socket"}
    rc, modules = _loaded_after_hook(bash("rm -rf ~", wt), job_env(home, "j1"))
    assert rc == 2 and "zen.guard.analyse" not in modules


def test_without_a_server_the_hook_decides_in_process(home: Path, wt: Path) -> None:
    rc, modules = _loaded_after_hook(bash("git status", wt), job_env(home, "j1"))
    assert rc == 0 and "zen.guard.analyse" in modules


def test_served_decisions_are_audited_on_the_job_timeline(home: Path, wt: Path,
                                                          served: subprocess.Popen[bytes]) -> None:
    env = job_env(home, "j1")
    assert hook(bash("git status", wt), env=env).returncode == 0
    assert hook(bash("rm -rf ~/.ssh", wt), env=env).returncode == 2
    evs = [e for e in events(home, "j1") if e["type"].startswith("guard.")]
    assert [(e["type"], e["command"]) for e in evs] == [("guard.allowed", "git status"),
                                                        ("guard.denied", "rm -rf ~/.ssh")]
    seqs = [e["seq"] for e in events(home, "j1")]
    assert seqs == list(range(1, len(seqs) + 1))


def test_concurrent_calls_are_all_answered_and_all_audited(home: Path, wt: Path,
                                                           served: subprocess.Popen[bytes]) -> None:
    env = {**os.environ, **job_env(home, "j1")}
    payload = json.dumps(bash("git status", wt)).encode()
    procs = [subprocess.Popen([*ZEN, "guard", "hook"], stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                              stderr=subprocess.PIPE, env=env) for _ in range(12)]
    for p in procs:
        assert p.stdin is not None
        p.stdin.write(payload)
        p.stdin.close()
    assert [p.wait(timeout=60) for p in procs] == [0] * 12
    evs = events(home, "j1")
    assert sum(e["type"] == "guard.allowed" for e in evs) == 12
    assert [e["seq"] for e in evs] == list(range(1, len(evs) + 1))


def test_approvals_through_the_server_as_without_it(home: Path, wt: Path) -> None:
    set_policy(home, "require_approval:\n  system_commands: true\n")
    env = job_env(home, "j1")
    command = "systemctl restart nginx"
    alone = hook(bash(command, wt), env=env)
    pending = home / "approvals" / "pending"
    names = sorted(p.name for p in pending.iterdir())
    assert alone.returncode == 2 and len(names) == 1
    (pending / names[0]).unlink()
    proc = serve(home)
    try:
        asked = hook(bash(command, wt), env=env)
        assert (asked.returncode, asked.stderr) == (alone.returncode, alone.stderr)
        assert sorted(p.name for p in pending.iterdir()) == names
        aid = re.search(r"zen approve ([0-9a-f]+)", asked.stderr)
        assert aid and zen("approve", aid.group(1)).returncode == 0
        assert hook(bash(command, wt), env=env).returncode == 0       # granted: once
        assert hook(bash(command, wt), env=env).returncode == 2
    finally:
        stop(proc)


# -- a server that is not there, dead, silent, wrong, or not ours --------------------------------

class FakeServer:
    """Something listening on control/guard.sock that is not the guardian. With `lock` (the
    default) it holds the home's guard lock as the resident guardian does, so the hook asks it (the
    protocol tests); without, it is a socket planted by someone else, which the hook never asks."""

    def __init__(self, home: Path, answer: Callable[[bytes], bytes | None], lock: bool = True) -> None:
        self.lock_fd: int | None = None
        if lock:
            self.lock_fd = os.open(home / "control" / "guard.lock", os.O_RDWR | os.O_CREAT, 0o600)
            fcntl.flock(self.lock_fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            fcntl.lockf(self.lock_fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        self.path = home / "control" / "guard.sock"
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.bind(str(self.path))
        self.sock.listen(8)
        self.answer = answer
        self.calls = 0
        self.requests = 0        # connections that sent it a request
        self.stopping = False
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self) -> None:
        held = []
        while not self.stopping:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.calls += 1
            data = b""
            conn.settimeout(5)
            try:
                while chunk := conn.recv(65536):
                    data += chunk
            except OSError:
                pass
            if data:
                self.requests += 1
            reply = self.answer(data)
            if reply is None:
                held.append(conn)      # silent: holds the connection open, never answers
                continue
            conn.sendall(reply)
            conn.close()

    def close(self) -> None:
        self.stopping = True
        self.sock.close()
        self.path.unlink(missing_ok=True)
        if self.lock_fd is not None:
            os.close(self.lock_fd)


def test_a_socket_planted_over_the_guardians_is_never_believed(home: Path, wt: Path) -> None:
    """Finding H7: an agent bound a socket of its own, renamed it over control/guard.sock and
    answered allow to everything; the hook believed it (`rm -rf ~`, the API token, the kill switch).
    A server that does not hold the home's guard lock is not asked: the hook decides itself."""
    fake = FakeServer(home, lambda data: wire.pack(wire.ALLOW, b"", b""), lock=False)
    try:
        env = job_env(home, "j1")
        results = [hook(bash(c, wt), env=env) for c in
                   ("rm -rf ~", f"cat {home}/control/api-token", "zen kill-switch --release", "git status")]
    finally:
        fake.close()
    assert fake.requests == 0      # it was connected to, found to hold no lock, and told nothing
    assert [r.returncode for r in results] == [2, 2, 2, 0], [r.stderr for r in results]


@pytest.mark.parametrize("name, answer", [
    ("silent", lambda data: None),
    ("garbage", lambda data: b"allow, trust me\n"),
    ("wrong magic", lambda data: b"zen-guard/9\n1:01:x1:y"),
    ("an unknown code", lambda data: wire.pack(b"1", b"", b"")),
    ("declines", lambda data: wire.pack(wire.DECLINED, b"", b"")),
    ("truncated", lambda data: wire.pack(wire.ALLOW, b"", b"")[:-3]),
])
def test_no_trustworthy_answer_means_the_hook_decides_itself(home: Path, wt: Path, name: str,
                                                             answer: Callable[[bytes], bytes | None]) -> None:
    fake = FakeServer(home, answer)
    try:
        # a silent server is waited for (3/4 of the deadline): a longer deadline leaves the hook
        # time enough to decide alone on a loaded machine
        env = {**job_env(home, "j1"), "ZEN_GUARD_DEADLINE": "6" if name == "silent" else "2"}
        t0 = time.monotonic()
        denied = hook(bash("rm -rf ~/.ssh", wt), env=env)
        allowed = hook(bash("git status", wt), env=env)
        took = time.monotonic() - t0
    finally:
        fake.close()
    assert fake.calls == 2
    assert denied.returncode == 2 and "outside the job's worktree" in denied.stderr
    assert allowed.returncode == 0, allowed.stderr
    assert took < 2 * (6 + 5)


def test_a_served_block_is_a_block(home: Path, wt: Path) -> None:
    fake = FakeServer(home, lambda data: wire.pack(wire.BLOCK, b"", b"a reason from the server"))
    try:
        r = hook(bash("git status", wt), env=job_env(home, "j1"))
    finally:
        fake.close()
    assert (r.returncode, r.stderr) == (2, "zen guardian: a reason from the server\n")


def test_a_dead_servers_socket_is_passed_by(home: Path, wt: Path) -> None:
    proc = serve(home)
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=10)
    assert (home / "control" / "guard.sock").exists()
    env = job_env(home, "j1")
    assert hook(bash("rm -rf ~/.ssh", wt), env=env).returncode == 2
    assert hook(bash("git status", wt), env=env).returncode == 0
    proc = serve(home)          # and the next server replaces the dead one's socket
    try:
        assert hook(bash("git status", wt), env=env).returncode == 0
    finally:
        stop(proc)


@pytest.mark.skipif(os.geteuid() != 0, reason="giving the socket to another user needs root")
def test_a_socket_of_another_user_is_not_asked(home: Path, wt: Path) -> None:
    fake = FakeServer(home, lambda data: wire.pack(wire.ALLOW, b"", b""))
    os.chown(fake.path, 65534, 65534, follow_symlinks=False)
    try:
        r = hook(bash("rm -rf ~/.ssh", wt), env=job_env(home, "j1"))
    finally:
        fake.close()
    assert fake.calls == 0 and r.returncode == 2


def test_the_self_tests_are_decided_in_process(home: Path, wt: Path, served: subprocess.Popen[bytes]) -> None:
    env = {**job_env(home, "j1"), "ZEN_GUARD_SELFTEST_CRASH": "1"}
    r = hook(bash("git status", wt), env=env)
    assert r.returncode == 2 and "self-test crash" in r.stderr


def _raw(home: Path, request: bytes) -> list[bytes] | None:
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(20)
    s.connect(str(home / "control" / "guard.sock"))
    s.sendall(request)
    s.shutdown(socket.SHUT_WR)
    data = b""
    while chunk := s.recv(65536):
        data += chunk
    s.close()
    return wire.unpack(data, 3)


def test_the_server_declines_other_code_and_the_self_tests(home: Path, wt: Path,
                                                          served: subprocess.Popen[bytes]) -> None:
    payload = json.dumps(bash("git status", wt)).encode()
    env = wire.env_bytes({k.encode(): v.encode() for k, v in job_env(home, "j1").items()})
    mine = os.fsencode(str(REPO_ROOT / "zen"))
    assert _raw(home, wire.pack(b"", str(wt).encode(), env, mine, payload)) == [wire.ALLOW, b"", b""]
    assert _raw(home, wire.pack(b"", str(wt).encode(), env, b"/elsewhere/zen", payload))[0] == wire.DECLINED
    crash = env + b"\0ZEN_GUARD_SELFTEST_HANG=1"
    assert _raw(home, wire.pack(b"", str(wt).encode(), crash, mine, payload))[0] == wire.DECLINED
    assert _raw(home, b"GET / HTTP/1.0\r\n\r\n")[0] == wire.DECLINED


# -- the server's life --------------------------------------------------------------------------

def test_one_server_per_home(home: Path, served: subprocess.Popen[bytes]) -> None:
    r = subprocess.run([*ZEN, "guard", "serve", "--home", str(home)], capture_output=True, timeout=60)
    assert r.returncode == 0
    assert served.poll() is None


def test_the_server_stops_when_its_socket_is_taken_away(home: Path, served: subprocess.Popen[bytes]) -> None:
    (home / "control" / "guard.sock").unlink()
    assert served.wait(timeout=20) == 0


def test_the_server_stops_when_its_parent_is_gone(home: Path) -> None:
    sh = subprocess.Popen(["sh", "-c", f'{" ".join(ZEN)} guard serve --home "$1" --parent $$ & sleep 30', "sh", str(home)],
                          stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    sock = home / "control" / "guard.sock"
    wait_until(sock.exists, timeout=30, message="zen guard serve to listen")
    sh.kill()
    sh.wait()
    assert servers_of(home)
    wait_until(lambda: not sock.exists() and not servers_of(home), timeout=20, message="the orphaned server to stop")


def test_a_home_with_a_path_too_long_for_a_unix_socket(tmp_path: Path) -> None:
    deep = tmp_path / ("d" * 60) / ("e" * 60)
    deep.mkdir(parents=True)
    r = subprocess.run([*ZEN, "init", str(deep / "zh")], capture_output=True, timeout=60)
    assert r.returncode == 0, r.stderr
    home = deep / "zh"
    assert len(str(home / "control" / "guard.sock")) > 107
    wt = make_job(home, "j1")
    proc = serve(home)
    try:
        assert client.ask(str(home), [], json.dumps(bash("git status", wt)).encode()) == (0, "", "")
        assert hook(bash("rm -rf ~/.ssh", wt), env=job_env(home, "j1")).returncode == 2
    finally:
        stop(proc)


def test_a_changed_source_file_makes_the_server_decline(tmp_path: Path, home: Path) -> None:
    src = tmp_path / "module.py"
    src.write_text("x = 1\n")
    server = Server(str(home), verdict)
    server._stamp = ((str(src), src.stat().st_mtime_ns),)
    server._stamp_at = 0.0
    assert not server.code_changed()
    os.utime(src, ns=(time.time_ns(), time.time_ns() + 10**9))
    server._stamp_at = 0.0
    assert server.code_changed()


def test_leases_and_their_notes_through_the_server(home: Path) -> None:
    from tests.coord import util as coord

    for j in ("ja", "jb"):
        (coord.make_job(home, j) / "src" / "a.py").write_text("a\n")
    proc = serve(home)
    try:
        assert coord.write(home, "ja", "src/a.py").returncode == 0
        denied = coord.write(home, "jb", "src/a.py")
        assert denied.returncode == 2 and "job ja" in denied.stderr
        coord.set_coordinator(home, conflict_resolution="warn")
        warned = coord.edit(home, "jb", "src/a.py")
        assert warned.returncode == 0, warned.stderr
        note = json.loads(warned.stdout)["hookSpecificOutput"]["additionalContext"]
        assert "src/a.py" in note and "job ja" in note
    finally:
        stop(proc)
    assert coord.events(home, "jb", "guard.allowed")[-1]["rule"] == "coord.lease-warn"


@pytest.mark.parametrize("end", ["SIGTERM", "SIGKILL"])
def test_the_supervisor_runs_the_resident_guardian_for_its_life(home: Path, wt: Path, tmp_path: Path,
                                                                 end: str) -> None:
    from tests.supervisor.conftest import Supervisors

    sups = Supervisors(home, tmp_path)
    sock = home / "control" / "guard.sock"
    try:
        proc = sups.start()
        wait_until(sock.exists, timeout=30, message="the supervisor's resident guardian to listen")
        rc, modules = _loaded_after_hook(bash("git status", wt), job_env(home, "j1"))
        assert rc == 0 and "zen.guard.analyse" not in modules
        if end == "SIGTERM":
            sups.stop(proc)
        else:
            sups.kill9(proc)
        wait_until(lambda: not sock.exists() and not servers_of(home), timeout=20,
                   message="the resident guardian to stop with its supervisor")
    finally:
        sups.close()

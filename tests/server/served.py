"""A real zen home served by a real `zen serve` (and, when asked, watched by a real `zen supervise`),
shared by the tests of one module: started once, stopped and cleaned afterwards.

Module-scoped, so it cannot lean on the per-test autouse environment (tests/conftest.py): it
makes its own $HOME, tmux socket directory and git identity, and every CLI call a test makes
through it (`served.zen(...)`) gets that same environment, so the test, the supervisor and the
server all talk to one tmux server and one home.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx

from tests.helpers import REPO_ROOT, make_repo, wait_until
from tests.supervisor.conftest import FAST, catalogue_problems
from zen.store.home import Home


@contextmanager
def serving(root: Path, *, check: bool = True, **kw: Any) -> Iterator[Served]:
    """A started Served, stopped afterwards; with `check`, problems left in its home fail the test."""
    s = Served(root, **kw).start()
    try:
        yield s
    finally:
        s.stop()
    if check:
        problems = s.problems()
        assert not problems, problems


class Served:
    def __init__(self, root: Path, *, supervise: bool = True, keepalive_s: float | None = None) -> None:
        self.root = root
        self.home = root / "zh"
        self.userhome = root / "userhome"
        self.userhome.mkdir(parents=True)
        self.sockdir = Path(tempfile.mkdtemp(prefix="zs", dir="/tmp"))
        self.env = {**os.environ, "HOME": str(self.userhome), "XDG_CONFIG_HOME": str(self.userhome / ".config"),
                    "XDG_STATE_HOME": str(self.userhome / ".local" / "state"), "GIT_CONFIG_NOSYSTEM": "1",
                    "TMUX_TMPDIR": str(self.sockdir), "ZEN_HOME": str(self.home)}
        for role in ("AUTHOR", "COMMITTER"):
            self.env[f"GIT_{role}_NAME"] = "zen test"
            self.env[f"GIT_{role}_EMAIL"] = "test@zen.invalid"
        for var in ("ZEN_JOB_ID", "ZEN_WORKTREE", "TMUX", "TMUX_PANE"):
            self.env.pop(var, None)
        self.procs: list[subprocess.Popen[bytes]] = []
        self.supervisor: subprocess.Popen[bytes] | None = None
        self.server: subprocess.Popen[bytes] | None = None
        self.port = 0
        self.keepalive_s = keepalive_s
        self.supervise = supervise

    # -- set up -----------------------------------------------------------------------------------
    def start(self) -> Served:
        self.zen_ok("init", str(self.home))
        cfg = self.home / "zen.yaml"
        text = cfg.read_text()
        for old, new in FAST.items():
            text = text.replace(old, new)
        cfg.write_text(text)
        self.repo = make_repo(self.root / "repo")
        self.zen_ok("lane", "add", "app", str(self.repo))
        if self.supervise:
            self.start_supervisor()
        self.start_server()
        return self

    def start_supervisor(self) -> None:
        out = (self.root / "supervisor.out").open("ab")
        self.supervisor = subprocess.Popen([sys.executable, "-m", "zen", "supervise"], cwd=REPO_ROOT, env=self.env,
                                           stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        self.procs.append(self.supervisor)
        wait_until((self.home / "control" / "heartbeat").exists, timeout=20, message="the supervisor")

    def start_server(self) -> None:
        out = (self.root / "server.out").open("ab")
        argv = [sys.executable, "-m", "zen", "serve", "--port", "0"]
        if self.keepalive_s is not None:
            argv += ["--keepalive", str(self.keepalive_s)]
        self.server = subprocess.Popen(argv, cwd=REPO_ROOT, env=self.env, stdout=out, stderr=subprocess.STDOUT,
                                       stdin=subprocess.DEVNULL)
        self.procs.append(self.server)
        info = self.home / "control" / "server.json"
        wait_until(info.exists, timeout=20, message="zen serve to write control/server.json")
        self.port = int(json.loads(info.read_text())["port"])
        wait_until(lambda: self.get("/api/v1/agent/status").status_code == 200, timeout=20, message="zen serve to answer")

    def stop(self) -> None:
        for p in reversed(self.procs):
            if p.poll() is None:
                p.send_signal(signal.SIGTERM)
        for p in self.procs:
            try:
                p.wait(timeout=15)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait(timeout=5)
        subprocess.run(["tmux", "-L", Home(self.home).tmux_socket, "kill-server"], env=self.env, capture_output=True)
        shutil.rmtree(self.sockdir, ignore_errors=True)

    def problems(self) -> list[str]:
        return catalogue_problems(self.home)

    # -- talking to it ------------------------------------------------------------------------------
    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def token(self) -> str:
        return (self.home / "control" / "api-token").read_text().strip()

    def headers(self, **extra: str) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.token}", **extra}

    def client(self, *, auth: bool = True, **kw: Any) -> httpx.Client:
        kw.setdefault("timeout", 30)
        return httpx.Client(base_url=self.base, headers=self.headers() if auth else {}, **kw)

    def get(self, path: str, **kw: Any) -> httpx.Response:
        with self.client() as c:
            return c.get(path, **kw)

    def call(self, method: str, path: str, **kw: Any) -> httpx.Response:
        with self.client() as c:
            return c.request(method, path, **kw)

    def zen(self, *args: str, input: str | None = None, timeout: float = 60,
            env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "zen", *args], input=input, capture_output=True, text=True,
                              env={**self.env, **(env or {})}, cwd=REPO_ROOT, timeout=timeout)

    def zen_ok(self, *args: str, **kw: Any) -> str:
        r = self.zen(*args, **kw)
        assert r.returncode == 0, f"zen {' '.join(args)}: {r.stderr}"
        return r.stdout.strip()

    def dispatch_sim(self, name: str, script: list[dict[str, Any]], *extra: str) -> str:
        f = self.root / f"{name}-{time.monotonic_ns()}.json"
        f.write_text(json.dumps({"name": name, "prompt": f"simulate {name}", "agent": "sim", "script": script}))
        return self.zen_ok("dispatch", "--file", str(f), *extra)

    def snap(self, job: str) -> dict[str, Any]:
        r = self.get(f"/api/v1/agent/sessions/{job}?events=0")
        assert r.status_code == 200, r.text
        return dict(r.json()["session"])

    def wait_state(self, job: str, *states: str, timeout: float = 30) -> dict[str, Any]:
        def ok() -> dict[str, Any] | None:
            s = self.snap(job)
            assert s["state"] in states, f"state {s['state']} ({s.get('reason')})"
            return s

        return wait_until(ok, timeout=timeout, message=f"{job} to be {'/'.join(states)}")

    def events(self, job: str) -> list[dict[str, Any]]:
        from zen.store.events import read_events

        return list(read_events(self.home / "jobs" / job / "events.jsonl"))

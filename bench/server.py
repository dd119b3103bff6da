"""zen serve: `GET /api/v1/agent/sessions` with 100 jobs against a bare uvicorn hello-world endpoint
(the same server and client, nothing of zen), and the delivery latency from an event appended to
a timeline to its arrival on an SSE stream, both measured in the same run.

Targets (issue 17): sessions p50 <= 5x the hello-world p50; event -> SSE delivery p95 <= 300 ms.
Also a small answer (a 401, headers and body written apart) on the same kept-alive connection:
with Nagle left on, each one waited ~40 ms for the client's delayed ACK (zen/server/run.py)."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.common import PY, ROOT, bench_env, p50, p95, row

HELLO = """
import sys, uvicorn
async def app(scope, receive, send):
    if scope["type"] != "http":
        return
    await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"application/json")]})
    await send({"type": "http.response.body", "body": b'{"hello":"world"}'})
uvicorn.run(app, host="127.0.0.1", port=int(sys.argv[1]), log_level="warning", access_log=False)
"""


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _jobs(home: Path, n: int) -> list[str]:
    """n job records with a few events each, as a supervisor would have left them."""
    from zen.core.ids import iso, make_job_id, utcnow
    from zen.core.model import Task
    from zen.store.home import Home
    from zen.store.jobs import JobStore

    store = JobStore(Home(home))
    ids = []
    for i in range(n):
        name = f"bench-{i}"
        task = Task(id=make_job_id(name), name=name, prompt=f"job {i}", lane="app", agent="sim",
                    created_at=iso(utcnow()))
        store.create(task)
        store.append(task.id, "worktree.created", path=f"/w/{i}", branch=f"zen/{task.id}", base_commit="0" * 40)
        store.append(task.id, "agent.spawned", session=f"zen-{task.id}", target="%1")
        store.append(task.id, "turn.waiting", reason="idle")
        store.snapshot(task.id)
        ids.append(task.id)
    return ids


def _serve(env: dict[str, str], home: Path) -> tuple[subprocess.Popen[bytes], int, str]:
    proc = subprocess.Popen([PY, "-m", "zen", "--home", str(home), "serve", "--port", "0"], env=env, cwd=ROOT,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    info = home / "control" / "server.json"
    deadline = time.monotonic() + 30
    while not info.exists():
        if time.monotonic() > deadline or proc.poll() is not None:
            raise RuntimeError("zen serve did not start")
        time.sleep(0.05)
    port = int(json.loads(info.read_text())["port"])
    token = (home / "control" / "api-token").read_text().strip()
    return proc, port, token


def _timed_gets(client: object, url: str, n: int, headers: dict[str, str], status: int = 200) -> list[float]:
    out = []
    for _ in range(n):
        t0 = time.perf_counter()
        r = client.get(url, headers=headers)  # type: ignore[attr-defined]
        out.append(time.perf_counter() - t0)
        assert r.status_code == status, r.text
    return out


def _delivery(port: int, token: str, home: Path, job: str, n: int) -> list[float]:
    """Append n events to a timeline; time each until it arrives on an open SSE stream."""
    import httpx

    from zen.store import events as ev_store

    arrived: dict[int, float] = {}
    ready = threading.Event()

    def listen() -> None:
        with httpx.Client(timeout=httpx.Timeout(60, read=60)) as c, c.stream(
                "GET", f"http://127.0.0.1:{port}/api/v1/agent/events", params={"job": job},
                headers={"Authorization": f"Bearer {token}"}) as r:
            for line in r.iter_lines():
                if line.startswith("retry"):
                    ready.set()
                if line.startswith("data:"):
                    ev = json.loads(line[5:])
                    if ev.get("type") == "usage":
                        arrived[int(ev["input_tokens"])] = time.perf_counter()
                        if len(arrived) >= n:
                            return

    t = threading.Thread(target=listen, daemon=True)
    t.start()
    ready.wait(10)
    time.sleep(0.2)
    sent: dict[int, float] = {}
    d = home / "jobs" / job
    for i in range(n):
        sent[i] = time.perf_counter()
        ev_store.append(d, job, "usage", input_tokens=i)
        time.sleep(0.02)
    t.join(timeout=30)
    return [arrived[i] - sent[i] for i in sent if i in arrived]


def run() -> list[dict]:
    import httpx

    rows = []
    with bench_env() as env, tempfile.TemporaryDirectory(prefix="zbs") as tmp:
        home = Path(tmp) / "zh"
        subprocess.run([PY, "-m", "zen", "init", str(home)], env=env, check=True, capture_output=True)
        ids = _jobs(home, 100)
        hello_port = _free_port()
        hello = subprocess.Popen([PY, "-c", HELLO, str(hello_port)], env=env, stdout=subprocess.DEVNULL,
                                 stderr=subprocess.DEVNULL)
        proc, port, token = _serve(env, home)
        try:
            auth = {"Authorization": f"Bearer {token}"}
            with httpx.Client(timeout=30) as c:
                deadline = time.monotonic() + 20
                while True:
                    try:
                        c.get(f"http://127.0.0.1:{hello_port}/")
                        break
                    except httpx.TransportError:
                        if time.monotonic() > deadline:
                            raise
                        time.sleep(0.05)
                sessions, base, small = [], [], []
                for _ in range(10):  # interleaved rounds, so load drift hits both alike
                    base += _timed_gets(c, f"http://127.0.0.1:{hello_port}/", 20, {})
                    sessions += _timed_gets(c, f"http://127.0.0.1:{port}/api/v1/agent/sessions", 20, auth)
                    small += _timed_gets(c, f"http://127.0.0.1:{port}/api/v1/agent/sessions", 5, {}, status=401)
                assert len(c.get(f"http://127.0.0.1:{port}/api/v1/agent/sessions", headers=auth).json()["sessions"]) == 100
            ratio = p50(sessions) / p50(base)
            rows.append(row("GET /sessions (100 jobs) p50 / uvicorn hello-world p50", ratio, "x", "<= 5", ratio <= 5,
                            f"sessions {p50(sessions) * 1000:.2f} ms, hello {p50(base) * 1000:.2f} ms"))
            ratio = p50(small) / p50(base)
            rows.append(row("a refused request (401, no token) p50 / uvicorn hello-world p50", ratio, "x", "<= 2",
                            ratio <= 2, f"401 {p50(small) * 1000:.2f} ms over {len(small)} on one kept-alive connection"))
            lat = _delivery(port, token, home, ids[0], 100)
            rows.append(row("event append -> SSE delivery p95", p95(lat) * 1000, "ms", "<= 300", p95(lat) <= 0.3,
                            f"p50 {p50(lat) * 1000:.1f} ms over {len(lat)} events (file events, no polling)"))
        finally:
            for p in (proc, hello):
                p.send_signal(signal.SIGTERM)
                try:
                    p.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    p.kill()
    return rows


if __name__ == "__main__":
    from bench.run import print_rows

    print_rows(run())

"""The kill switch of a Ray worker's home (zen.guard.policy.remote_switch): its guardian asks the
supervisor's endpoint on every call, through the real hook, and anything but a clear "released"
(the supervisor down, a wrong token, a garbled answer) clamps the job to observe-only."""

from __future__ import annotations

import json
import socket
import threading
from pathlib import Path

from tests.guard.util import hook, job_env, make_job, write_tool
from tests.helpers import zen
from zen.guard.policy.levels import kill_switch_on
from zen.orchestration.remote.endpoint import Endpoint
from zen.store.home import Home


def _point(worker: Path, url: str, token: str) -> None:
    (worker / "control" / "remote-switch.json").write_text(json.dumps({"v": 1, "url": url, "token": token}))


def test_the_worker_reads_the_supervisors_switch_and_fails_closed_without_it(home: Path, tmp_path: Path) -> None:
    sup = tmp_path / "sup"
    assert zen("init", str(sup)).returncode == 0
    endpoint = Endpoint(Home(sup))
    endpoint.start()
    try:
        wt = make_job(home, "j1")
        _point(home, endpoint.url, endpoint.token)
        assert kill_switch_on(str(home)) is False
        r = hook(write_tool(wt / "a.txt", wt), env=job_env(home, "j1"))
        assert r.returncode == 0, r.stderr

        (sup / "control" / "KILL").write_text("reason: test\n")   # engaged on the supervisor's machine
        assert kill_switch_on(str(home)) is True
        r = hook(write_tool(wt / "b.txt", wt), env=job_env(home, "j1"))
        assert r.returncode == 2 and "observe" in r.stderr
        (sup / "control" / "KILL").unlink()
        assert kill_switch_on(str(home)) is False

        _point(home, endpoint.url, "not-the-token")
        assert kill_switch_on(str(home)) is True
        # a restarted supervisor answers at the same address with the same token
        _point(home, endpoint.url, endpoint.token)
        url = endpoint.url
        endpoint.stop()
        assert kill_switch_on(str(home)) is True                    # nobody answers: fail closed
        r = hook(write_tool(wt / "c.txt", wt), env=job_env(home, "j1"))
        assert r.returncode == 2 and "observe" in r.stderr
        again = Endpoint(Home(sup))
        again.start()
        try:
            assert again.url == url and kill_switch_on(str(home)) is False
        finally:
            again.stop()
    finally:
        endpoint.stop()


def test_an_endpoint_that_answers_garbage_or_never_counts_as_engaged(home: Path) -> None:
    with socket.socket() as srv:
        srv.bind(("127.0.0.1", 0))
        srv.listen(4)
        port = srv.getsockname()[1]

        def serve() -> None:
            for answer in (b"HTTP/1.0 200 OK\r\n\r\nnot json", b"HTTP/1.0 200 OK\r\n\r\n{\"engaged\": null}"):
                conn, _ = srv.accept()
                with conn:
                    conn.recv(4096)
                    conn.sendall(answer)

        t = threading.Thread(target=serve, daemon=True)
        t.start()
        _point(home, f"http://127.0.0.1:{port}/v1/switch", "t")
        assert kill_switch_on(str(home)) is True
        assert kill_switch_on(str(home)) is True
        t.join(5)
    (home / "control" / "remote-switch.json").write_text("{not json")
    assert kill_switch_on(str(home)) is True

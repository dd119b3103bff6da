"""`zen gate`: the sanctioned door to a listed integration, against a local HTTP server (never the
network). It sends the credential from its configured source, refuses what the policy does not
list, does not follow redirects, and records every call."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from tests.guard.util import events, job_env, make_job, set_policy
from tests.helpers import one_line, zen


class Server:
    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        seen = self.requests

        class Handler(BaseHTTPRequestHandler):
            def _answer(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else b""
                seen.append({"method": self.command, "path": self.path, "headers": dict(self.headers),
                             "body": body})
                if self.path.startswith("/api/redirect"):
                    self.send_response(302)
                    self.send_header("Location", "http://127.0.0.1:9/steal")
                    self.end_headers()
                    return
                status = 404 if "missing" in self.path else 201 if self.command == "POST" else 200
                out = json.dumps({"ok": status < 300, "path": self.path}).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(out)))
                self.end_headers()
                self.wfile.write(out)

            do_GET = do_POST = do_DELETE = do_PUT = _answer

            def log_message(self, *a: Any) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.httpd.server_address[1]
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def server() -> Iterator[Server]:
    s = Server()
    yield s
    s.close()


@pytest.fixture
def gated(home: Path, server: Server, tmp_path: Path) -> Path:
    keyfile = tmp_path / "helpdesk.key"
    keyfile.write_text("file-secret\n")
    set_policy(home, f"""\
integrations:
  local:
    base_url: http://127.0.0.1:{server.port}/api
    methods: [GET, POST]
    credential: {{env: LOCAL_TOKEN}}
    auth: bearer
  desk:
    base_url: http://127.0.0.1:{server.port}/desk
    methods: [GET]
    credential: {{file: {keyfile}}}
    auth: header:X-Api-Key
""")
    return home


ENV = {"LOCAL_TOKEN": "s3cret"}


def test_get_sends_the_credential_and_prints_the_response(gated: Path, server: Server) -> None:
    r = zen("gate", "local", "GET", "/items?limit=2", env=ENV)
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout) == {"ok": True, "path": "/api/items?limit=2"}
    (req,) = server.requests
    assert req["method"] == "GET" and req["headers"]["Authorization"] == "Bearer s3cret"


def test_post_with_data_and_json_output(gated: Path, server: Server, tmp_path: Path) -> None:
    r = zen("gate", "local", "post", "/items", "--data", '{"name": "x"}', "--json", env=ENV)
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert out["status"] == 201 and out["integration"] == "local" and out["method"] == "POST"
    assert out["body"]["ok"] is True
    assert server.requests[-1]["body"] == b'{"name": "x"}'
    assert server.requests[-1]["headers"]["Content-Type"] == "application/json"
    f = tmp_path / "body.json"
    f.write_text('{"from": "file"}')
    assert zen("gate", "local", "POST", "/items", "--data", f"@{f}", env=ENV).returncode == 0
    assert server.requests[-1]["body"] == b'{"from": "file"}'


def test_a_credential_from_a_file_in_a_header(gated: Path, server: Server) -> None:
    r = zen("gate", "desk", "GET", "/tickets")
    assert r.returncode == 0, r.stderr
    assert server.requests[-1]["headers"]["X-Api-Key"] == "file-secret"


def test_non_2xx_exits_1(gated: Path, server: Server) -> None:
    r = zen("gate", "local", "GET", "/missing", env=ENV)
    assert r.returncode == 1 and "404" in r.stderr


@pytest.mark.parametrize(("args", "words"), [
    (["nosuch", "GET", "/x"], "no integration named"),
    (["local", "DELETE", "/items/1"], "does not allow DELETE"),
    (["desk", "POST", "/tickets"], "does not allow POST"),
    (["local", "GET", "items"], "must start with /"),
    (["local", "GET", "/../admin"], ".. segments"),
    (["local", "GET", "//evil.example/x"], None),
])
def test_refusals_are_one_sentence_and_send_nothing(gated: Path, server: Server, args: list[str],
                                                    words: str | None) -> None:
    r = zen("gate", *args, env=ENV)
    if words is None:     # stays on the integration's host whatever the path says
        assert all(req["path"].startswith("/api/") for req in server.requests)
        return
    assert r.returncode == 1 and one_line(r.stderr) and words in r.stderr, r.stderr
    assert server.requests == []


def test_a_missing_credential_is_one_sentence(gated: Path, server: Server) -> None:
    r = zen("gate", "local", "GET", "/items", env={"LOCAL_TOKEN": ""})
    assert r.returncode == 1 and one_line(r.stderr) and "LOCAL_TOKEN" in r.stderr
    assert server.requests == []


def test_redirects_are_not_followed(gated: Path, server: Server) -> None:
    r = zen("gate", "local", "GET", "/redirect", env=ENV)
    assert r.returncode == 1
    assert [q["path"] for q in server.requests] == ["/api/redirect"]


def test_calls_are_recorded_in_the_job_timeline_or_the_audit_log(gated: Path, server: Server) -> None:
    make_job(gated, "j1")
    r = zen("gate", "local", "GET", "/items?token=abc", env={**ENV, **job_env(gated, "j1")})
    assert r.returncode == 0, r.stderr
    (ev,) = [e for e in events(gated, "j1") if e["type"] == "gate.called"]
    assert (ev["integration"], ev["method"], ev["path"], ev["status"]) == ("local", "GET", "/items", 200)
    zen("gate", "local", "GET", "/missing", env=ENV)
    rec = json.loads((gated / "logs" / "guard-audit.jsonl").read_text().splitlines()[-1])
    assert rec["type"] == "gate.called" and rec["status"] == 404 and rec["integration"] == "local"


def test_the_kill_switch_closes_gates_to_writes(gated: Path, server: Server) -> None:
    assert zen("kill-switch").returncode == 0
    r = zen("gate", "local", "POST", "/items", "--data", "{}", env=ENV)
    assert r.returncode == 1 and one_line(r.stderr) and "observe" in r.stderr
    assert zen("gate", "local", "GET", "/items", env=ENV).returncode == 0


def test_a_broken_policy_opens_no_gate(home: Path, server: Server) -> None:
    set_policy(home, "integrations: [\n")
    r = zen("gate", "local", "GET", "/items", env=ENV)
    assert r.returncode == 1 and one_line(r.stderr) and "broken" in r.stderr

"""The supervisor's OTLP/HTTP receiver over real loopback HTTP, and the telemetry environment an
agent is started with: a job's token admits only that job's records, a retried batch counts once,
compressed bodies are read, protobuf and strangers are refused with a reason, the port survives
a restart, and a user's own settings are kept (resource attributes, their logs relayed)."""

from __future__ import annotations

import gzip
import json
import os
import stat
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.helpers import wait_until
from tests.observe.test_golden import CORPUS, EXPECTED, assert_figures
from zen.observe import snapshot, telemetry
from zen.observe.metrics import figures
from zen.observe.receiver import Receiver, for_supervisor
from zen.store import events
from zen.store.layout import Home


def _home(tmp_path: Path, *jobs: str) -> Home:
    home = Home(tmp_path / "zh")
    home.control.mkdir(parents=True)
    for job in jobs:
        d = home.job(job).dir
        d.mkdir(parents=True)
        events.append(d, job, "task.received", task={"name": job, "agent": "claude", "lane": "app"})
    return home


def _batch(name: str) -> bytes:
    return (CORPUS / "otlp" / name).read_bytes()


@pytest.fixture
def rx(tmp_path: Path) -> Iterator[Receiver]:
    with Receiver(_home(tmp_path, "J1", "J2")) as r:
        yield r


def _post(rx: Receiver, body: bytes, job: str | None = "J1", path: str = "/v1/logs",
          **headers: str) -> httpx.Response:
    h = {"Content-Type": "application/json"}
    if job is not None:
        h["Authorization"] = f"Bearer {telemetry.job_token(rx.secret, job)}"
    h.update(headers)
    return httpx.post(f"http://127.0.0.1:{rx.port}{path}", content=body, headers=h, timeout=10)


def _types(home: Home, job: str) -> list[str]:
    return [e["type"] for e in events.read_events(home.job(job).events)]


def test_a_jobs_batches_reach_its_timeline_once(rx: Receiver) -> None:
    assert _post(rx, _batch("batch1.json")).status_code == 200
    r = _post(rx, _batch("batch2.json"))          # one record again (an exporter's retry), one new
    assert r.status_code == 200
    assert _post(rx, _batch("batch2.json")).status_code == 200     # the whole batch again
    got = figures([snapshot.current(rx.home.job("J1").dir, "J1")])
    assert_figures(got, EXPECTED["otlp"]["J1"])
    # J2's record in batch2 came with J1's token: not J2's to count
    assert _types(rx.home, "J2") == ["task.received"]
    assert "J2" in json.dumps(json.loads(_batch("batch2.json")))


def test_gzip_bodies_and_records_without_a_job_attribute_go_to_the_tokens_job(rx: Receiver) -> None:
    data = json.loads(_batch("batch1.json"))
    for rl in data["resourceLogs"]:
        rl["resource"]["attributes"] = [a for a in rl["resource"]["attributes"] if a["key"] != "zen.job"]
    body = gzip.compress(json.dumps(data).encode())
    assert _post(rx, body, job="J2", **{"Content-Encoding": "gzip"}).status_code == 200
    assert _types(rx.home, "J2").count("api.request") == 2
    assert _types(rx.home, "J1") == ["task.received"]


@pytest.mark.parametrize(("job", "headers", "path", "code"), [
    (None, {}, "/v1/logs", 401),                                       # no token
    ("J1", {"Authorization": "Bearer zen1.J1.0000"}, "/v1/logs", 401),  # a forged one
    ("J1", {"Content-Type": "application/x-protobuf"}, "/v1/logs", 415),
    ("J1", {"Content-Encoding": "br"}, "/v1/logs", 400),
    ("J1", {}, "/v2/logs", 404),
])
def test_what_is_refused_says_why(rx: Receiver, job: str | None, headers: dict[str, str], path: str,
                                  code: int) -> None:
    r = _post(rx, _batch("batch1.json"), job=job, path=path, **headers)
    assert r.status_code == code
    assert r.json()["message"]
    assert _types(rx.home, "J1") == ["task.received"]


def test_metrics_and_traces_are_taken_and_dropped(rx: Receiver) -> None:
    for path in ("/v1/metrics", "/v1/traces"):
        assert _post(rx, b'{"resourceMetrics": []}', path=path).status_code == 200
    assert _post(rx, b"not json").status_code == 400
    assert _types(rx.home, "J1") == ["task.received"]


def test_the_port_is_kept_across_a_restart_and_published_for_this_process_only(tmp_path: Path) -> None:
    home = _home(tmp_path, "J1")
    with Receiver(home) as first:
        port = first.port
        assert telemetry.live_port(home.control) == port
    assert stat.S_IMODE(os.stat(telemetry.secret_file(home.control)).st_mode) == 0o600
    with Receiver(home) as again:
        assert again.port == port
        with Receiver(home) as third:                  # the port is taken: another free one
            assert third.port not in (0, port)
    data = telemetry.published(home.control)
    data["pid"] = 1
    (home.control / "otlp.json").write_text(json.dumps(data))
    assert telemetry.live_port(home.control) is None  # not this process's receiver: never pointed at


def test_the_supervisor_runs_none_when_telemetry_is_off_or_for_one_pass(tmp_path: Path) -> None:
    home = _home(tmp_path)
    assert for_supervisor(home, {"telemetry": False}, once=False) is None
    assert for_supervisor(home, {"telemetry": True}, once=True) is None
    r = for_supervisor(home, {"telemetry": True}, once=False)
    assert r is not None
    r.stop()


def test_a_claude_jobs_environment(tmp_path: Path) -> None:
    home = _home(tmp_path, "J1")
    job_dir = home.job("J1").dir
    assert telemetry.job_env(home.control, job_dir, "J1", "claude", "app", {}, {}) == {}  # no receiver
    with Receiver(home) as rx:
        user = {"OTEL_RESOURCE_ATTRIBUTES": "team=blue,zen.job=forged", "OTEL_METRICS_EXPORTER": "otlp"}
        env = telemetry.job_env(home.control, job_dir, "J1", "claude", "my lane", user,
                                {"telemetry": True, "export_interval": "500ms"})
        assert env["CLAUDE_CODE_ENABLE_TELEMETRY"] == "1"
        assert env["OTEL_LOGS_EXPORTER"] == "otlp"
        assert env["OTEL_EXPORTER_OTLP_LOGS_PROTOCOL"] == "http/json"
        assert env["OTEL_EXPORTER_OTLP_LOGS_ENDPOINT"] == f"http://127.0.0.1:{rx.port}/v1/logs"
        assert env["OTEL_LOGS_EXPORT_INTERVAL"] == "500"
        assert env["OTEL_RESOURCE_ATTRIBUTES"] == "team=blue,zen.job=J1,zen.lane=my%20lane"
        assert "OTEL_METRICS_EXPORTER" not in env           # the user's metrics stay theirs
        header = env["OTEL_EXPORTER_OTLP_LOGS_HEADERS"].split("=", 1)[1]
        assert telemetry.token_job(rx.secret, header) == "J1"
        assert telemetry.token_job(rx.secret, header.replace("J1", "J2")) is None
        assert not (job_dir / telemetry.RELAY_FILE).exists()
        for agent, obs in (("aider", {}), ("claude", {"telemetry": False})):
            assert telemetry.job_env(home.control, job_dir, "J1", agent, "app", {}, obs) == {}


class _Collector:
    def __init__(self) -> None:
        self.got: list[tuple[str, dict[str, str], bytes]] = []
        rec = self

        class H(BaseHTTPRequestHandler):
            def log_message(self, *a: Any) -> None:
                pass

            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                rec.got.append((self.path, dict(self.headers), body))
                self.send_response(200)
                self.send_header("Content-Length", "0")
                self.end_headers()

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), H)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"


def test_a_users_own_logs_export_is_relayed(tmp_path: Path) -> None:
    home = _home(tmp_path, "J1")
    job_dir = home.job("J1").dir
    collector = _Collector()
    try:
        user = {"CLAUDE_CODE_ENABLE_TELEMETRY": "1", "OTEL_LOGS_EXPORTER": "otlp",
                "OTEL_EXPORTER_OTLP_PROTOCOL": "http/json", "OTEL_EXPORTER_OTLP_ENDPOINT": collector.url + "/",
                "OTEL_EXPORTER_OTLP_HEADERS": "x-key=s%3Dcret,other=2"}
        with Receiver(home) as rx:
            telemetry.job_env(home.control, job_dir, "J1", "claude", "app", user, {})
            assert stat.S_IMODE(os.stat(job_dir / telemetry.RELAY_FILE).st_mode) == 0o600
            assert _post(rx, _batch("batch1.json")).status_code == 200
            wait_until(lambda: collector.got, timeout=10, message="the relayed batch")
        path, headers, body = collector.got[0]
        assert path == "/v1/logs" and headers["x-key"] == "s=cret" and headers["other"] == "2"
        assert json.loads(body) == json.loads(_batch("batch1.json"))
        assert "Authorization" not in headers
        # a user exporting over grpc or protobuf is not relayed (zen receives json only)
        for protocol in ("grpc", "http/protobuf"):
            found = telemetry.user_logs_export({**user, "OTEL_EXPORTER_OTLP_PROTOCOL": protocol})
            assert found is not None and found["protocol"] == protocol
        assert telemetry.user_logs_export({**user, "OTEL_LOGS_EXPORTER": "console"}) is None
        assert telemetry.user_logs_export({k: v for k, v in user.items() if k != "CLAUDE_CODE_ENABLE_TELEMETRY"}) is None
    finally:
        collector.server.shutdown()
        collector.server.server_close()


def test_a_codex_jobs_exporter_and_a_users_own_codex_telemetry(tmp_path: Path) -> None:
    home = _home(tmp_path, "J1")
    codex_home = tmp_path / "codex"
    codex_home.mkdir()
    user = {"CODEX_HOME": str(codex_home), "OTEL_RESOURCE_ATTRIBUTES": "team=blue"}
    assert telemetry.agent_args(home.control, "J1", "codex", user, {}) == []      # no receiver here
    with Receiver(home) as rx:
        args = telemetry.agent_args(home.control, "J1", "codex", user, {})
        assert args[0] == "-c" and args[1].startswith("otel.exporter={otlp-http={")
        assert f'endpoint="http://127.0.0.1:{rx.port}/v1/logs"' in args[1] and 'protocol="json"' in args[1]
        token = args[1].split('Authorization="', 1)[1].split('"', 1)[0]
        assert telemetry.token_job(rx.secret, token) == "J1"
        env = telemetry.job_env(home.control, home.job("J1").dir, "J1", "codex", "app", user, {})
        assert env == {"OTEL_RESOURCE_ATTRIBUTES": "team=blue,zen.job=J1,zen.lane=app"}
        assert telemetry.agent_args(home.control, "J1", "codex", user, {"telemetry": False}) == []
        assert telemetry.agent_args(home.control, "J1", "claude", user, {}) == []
        # the user exports Codex's telemetry themselves: zen leaves their exporter alone
        (codex_home / "config.toml").write_text('[otel]\nexporter = { otlp-http = { endpoint = "http://x/v1/logs" } }\n')
        assert telemetry.agent_args(home.control, "J1", "codex", user, {}) == []
        (codex_home / "config.toml").write_text('[otel]\nexporter = "none"\n')
        assert telemetry.agent_args(home.control, "J1", "codex", user, {}) != []


def _codex_completed(seq: int, counts: bool) -> dict[str, Any]:
    attrs = {"event.name": "codex.sse_event", "event.kind": "response.completed", "model": "gpt-5.5",
             "conversation.id": "c1", "event.sequence": seq}
    if counts:
        attrs |= {"input_token_count": "1000", "output_token_count": "50", "cached_token_count": "400",
                  "reasoning_token_count": "10"}
    return {"timeUnixNano": str(1764410400000000000 + seq), "body": {"stringValue": "codex.sse_event"},
            "attributes": [{"key": k, "value": {"stringValue": str(v)}} for k, v in attrs.items()]}


def test_codex_logs_each_response_once_with_its_counts(rx: Receiver) -> None:
    """Codex 0.171 logs response.completed twice per response, once without the counts."""
    body = {"resourceLogs": [{"resource": {"attributes": [
        {"key": "service.name", "value": {"stringValue": "codex_exec"}}]},
        "scopeLogs": [{"logRecords": [_codex_completed(1, False), _codex_completed(2, True)]}]}]}
    assert _post(rx, json.dumps(body).encode()).status_code == 200
    [call] = [e for e in events.read_events(rx.home.job("J1").events) if e["type"] == "api.request"]
    assert (call["input_tokens"], call["cache_read_input_tokens"], call["output_tokens"]) == (600, 400, 50)

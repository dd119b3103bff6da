"""The observatory with the real Claude Code: its OpenTelemetry reaches the supervisor's receiver,
tagged with the job, and agrees exactly with its transcript; a scripted API error is counted; a
user's own telemetry settings keep working."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from tests.claude.fakeapi import FakeAPI, bash, failing, text
from tests.claude.zenrun import Job, dispatch, supervisor
from tests.helpers import wait_until, zen, zen_json
from zen.observe import prices as price_table
from zen.observe.tokens import Tokens, anthropic_usage

pytestmark = pytest.mark.claude

U1 = {"input_tokens": 1200, "output_tokens": 300, "cache_creation_input_tokens": 2000,
      "cache_read_input_tokens": 9000}
U2 = {"input_tokens": 50, "output_tokens": 20, "cache_creation_input_tokens": 0,
      "cache_read_input_tokens": 11000}
# a response whose cache writes are mostly 1-hour ones: priced apart from the 5-minute ones
U3: dict[str, Any] = {"input_tokens": 700, "output_tokens": 90, "cache_creation_input_tokens": 5000,
                      "cache_read_input_tokens": 4000,
                      "cache_creation": {"ephemeral_5m_input_tokens": 1000, "ephemeral_1h_input_tokens": 4000}}


@pytest.fixture
def running(claude_lane: Path, claude_home: Path, tmp_path: Path,
            monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    # one retry, so an overloaded answer scripted twice fails the request for good (and quickly)
    monkeypatch.setenv("CLAUDE_CODE_MAX_RETRIES", "1")
    with supervisor(claude_home, tmp_path / "supervisor.log"):
        yield claude_home


def _sum(usages: list[dict[str, Any]]) -> Tokens:
    out = Tokens()
    for u in usages:
        out = out.plus(anthropic_usage(u))
    return out


def test_otel_and_transcript_agree_exactly_and_an_api_error_is_counted(running: Path, api: FakeAPI) -> None:
    # turn 1: a tool call, then the next request fails twice (529) and the turn ends on the API
    # error; turn 2 (after zen send): that request goes through (another tool call), then the answer
    api.script = [bash("echo one > one.txt", usage=U1),
                  failing(bash("echo two > two.txt", usage=U2), 529, times=2),
                  text("Second turn done.", usage=U3)]
    job = Job(running, dispatch("Write one.txt", "--lane", "app", "--name", "otel"))
    job.wait_event("api.error", timeout=120)
    # the turn's end is told at once by StopFailure (Notification's idle prompt would take 60 s)
    first = job.wait_event("turn.waiting", timeout=30, hook="StopFailure")
    assert first["reason"] == "idle" and first["error"]      # Claude Code's kind: server_error for a 529
    assert zen("send", job.id, "Please try again.").returncode == 0
    job.wait_event("turn.waiting", after_seq=job.wait_event("input.sent", after_seq=first["seq"])["seq"],
                   timeout=90, actor="hook")
    wait_until(lambda: api.answered() == 3, timeout=30, message="every scripted step answered")
    assert len(api.errors()) == 2                         # the first try and its one retry

    # OpenTelemetry: one api.request per answered call, tagged with this job by the receiver
    def otel_calls() -> list[dict[str, Any]]:
        return [e for e in job.of("api.request") if e.get("source") == "otel"]
    wait_until(lambda: len(otel_calls()) >= 3, timeout=30, message="3 api.request events")
    calls = otel_calls()
    model = str(calls[0]["model"])
    assert model and all(c["actor"] == "telemetry" for c in calls)
    assert all(isinstance(c.get("duration_ms"), int | float) for c in calls)
    [error] = job.of("api.error")
    assert error["status_code"] == 529 and "overloaded" in error["error"]

    # the transcript's usage events (the Stop hook) reach the same three calls
    def transcript_calls() -> int:
        return sum(int(e.get("api_calls") or 0) for e in job.of("usage"))
    wait_until(lambda: transcript_calls() == 3, timeout=30, message="usage events for 3 calls")

    want = _sum([U1, U2, U3])
    rates = price_table.lookup(model)
    assert rates is not None
    want_cost = price_table.cost(model, anthropic_usage(U1)) + price_table.cost(model, anthropic_usage(U2)) \
        + price_table.cost(model, anthropic_usage(U3))

    m = zen_json("metrics", job.id)
    assert m["api_calls"] == 3 and len(calls) == 3
    assert m["api_errors"] == 1 and m["error_rate"] == pytest.approx(1 / 4)
    assert m["input_tokens"] == want.input and m["output_tokens"] == want.output
    assert m["cache_read_input_tokens"] == want.cache_read
    assert m["cache_creation_input_tokens"] == want.cache_write
    assert m["cost_usd"] == pytest.approx(want_cost, abs=1e-6)
    assert m["api_latency_ms"]["count"] == 3
    # both sources counted the same calls: the figures come from the transcript on a tie
    assert m["usage_sources"] == {"otel": 0, "transcript_or_rollout": 1, "none": 0}
    rec = m["reconciliation"]
    assert rec["agree"] is True, rec
    for side in ("otel", "transcript_or_rollout"):
        assert rec[side]["api_calls"] == 3
        assert rec[side]["cache_creation_input_tokens"] == want.cache_write
        assert rec[side]["cache_creation_1h_input_tokens"] == want.cache_write_1h == 4000
        assert rec[side]["cost_usd"] == pytest.approx(want_cost, abs=1e-6)
    # tool calls from OpenTelemetry, and the headline in zen show
    assert m["tool_calls"] == 2 and m["tool_latency_ms"]["count"] == 2
    shown = zen("show", job.id)
    assert shown.returncode == 0 and "3 API calls, 1 errors" in shown.stdout, shown.stdout


class _Collector:
    """The user's own OTLP collector (http/json), recording every request."""

    def __init__(self) -> None:
        self.got: list[tuple[str, dict[str, str], Any]] = []
        rec = self

        class H(BaseHTTPRequestHandler):
            def log_message(self, *a: Any) -> None:
                pass

            def do_POST(self) -> None:
                n = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(n)
                try:
                    data = json.loads(body)
                except ValueError:
                    data = None
                rec.got.append((self.path, dict(self.headers), data))
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", "2")
                self.end_headers()
                self.wfile.write(b"{}")

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), H)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def paths(self) -> list[str]:
        return [p for p, _, _ in self.got]

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def _resource(data: Any, key: str) -> list[str]:
    out = []
    for group in ("resourceLogs", "resourceMetrics"):
        for r in (data or {}).get(group) or []:
            for a in r["resource"]["attributes"]:
                if a["key"] == key:
                    out.append(next(iter(a["value"].values())))
    return out


def test_the_users_own_telemetry_keeps_flowing(claude_lane: Path, claude_home: Path, api: FakeAPI,
                                               tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    collector = _Collector()
    try:
        for k, v in {"CLAUDE_CODE_ENABLE_TELEMETRY": "1", "OTEL_LOGS_EXPORTER": "otlp",
                     "OTEL_METRICS_EXPORTER": "otlp", "OTEL_EXPORTER_OTLP_PROTOCOL": "http/json",
                     "OTEL_EXPORTER_OTLP_ENDPOINT": collector.url,
                     "OTEL_EXPORTER_OTLP_HEADERS": "x-team-key=blue-secret",
                     "OTEL_METRIC_EXPORT_INTERVAL": "1000", "OTEL_RESOURCE_ATTRIBUTES": "team=blue"}.items():
            monkeypatch.setenv(k, v)
        api.script = [bash("echo hi > hi.txt"), text("Done.")]
        with supervisor(claude_home, tmp_path / "supervisor.log"):
            job = Job(claude_home, dispatch("Say hi", "--lane", "app", "--name", "own-otel"))
            job.wait_event("turn.waiting", timeout=120, actor="hook")
            wait_until(lambda: len(job.of("api.request")) == 2, timeout=30, message="zen's 2 api.request")
            # the user's collector gets the logs (relayed by zen, with the user's header and
            # resource attributes) and the metrics (straight from Claude Code)
            wait_until(lambda: "/v1/logs" in collector.paths() and "/v1/metrics" in collector.paths(),
                       timeout=30, message=f"logs and metrics at the user's collector: {collector.paths()}")
        logs = [(h, d) for p, h, d in collector.got if p == "/v1/logs"]
        assert all(h.get("x-team-key") == "blue-secret" for h, _ in logs)
        assert "Authorization" not in logs[0][0]          # zen's token stays zen's
        assert "blue" in _resource(logs[0][1], "team") and job.id in _resource(logs[0][1], "zen.job")
        names = json.dumps([d for _, d in logs])
        assert "claude_code.api_request" in names
        metrics = [d for p, _, d in collector.got if p == "/v1/metrics"]
        assert "blue" in _resource(metrics[0], "team")
    finally:
        collector.close()

"""The home's OTLP/HTTP receiver: agents' OpenTelemetry logs into their jobs' timelines.

The supervisor runs one (`Receiver(home).start()`), on 127.0.0.1, on the port it had last time
when that is free (agents started before a restart keep exporting to it), else on any free one;
`control/otlp.json` says where (zen/observe/telemetry.py gives each agent the address and a
token naming its job).

    POST /v1/logs     OTLP logs, http/json (gzip or deflate bodies too), Bearer token required:
                      the records of the token's job are ingested (zen/observe/ingest.py), a
                      record naming another job is dropped; 200 {"partialSuccess": ...}
    POST /v1/metrics  accepted and dropped (zen counts from the logs), as is /v1/traces
    anything else     404; protobuf bodies 415 (zen asks for http/json); a bad token 401

A batch is appended to the timeline before the answer (the exporter retries one that failed,
and a retried batch is recognised, never counted twice). When the user exported logs over
OTLP http/json themselves, each batch is then forwarded to their endpoint from a queue (best
effort: a full queue or a failing endpoint drops the copy, never zen's own record).
"""

from __future__ import annotations

import contextlib
import errno
import gzip
import io
import json
import logging
import queue
import threading
import zlib
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import httpx

from zen.observe import telemetry
from zen.observe.ingest import Ingest
from zen.observe.record import home_prices
from zen.store.layout import Home

log = logging.getLogger(__name__)

MAX_BODY = 32 << 20                 # bytes of one request, as sent or unpacked
RELAY_QUEUE = 256
RELAY_TIMEOUT_S = 5.0
_DROPPED = frozenset({"/v1/metrics", "/v1/traces"})


class Receiver:
    def __init__(self, home: Home) -> None:
        self.home = home
        self.ingest = Ingest(home, prices=lambda: home_prices(home.root))
        self.lock = threading.Lock()         # one batch at a time into the timelines
        self.server: ThreadingHTTPServer | None = None
        self.thread: threading.Thread | None = None
        self.relay = _Relay()
        self.rejected = 0                    # requests refused (token, format, size)
        self.secret = b""

    @property
    def port(self) -> int:
        return int(self.server.server_address[1]) if self.server is not None else 0

    def _bind(self) -> ThreadingHTTPServer:
        last = telemetry.published(self.home.control).get("port")
        for port in ([last] if isinstance(last, int) and 0 < last < 65536 else []) + [0]:
            try:
                return ThreadingHTTPServer(("127.0.0.1", port), _handler(self))
            except OSError as exc:
                if exc.errno != errno.EADDRINUSE or port == 0:
                    raise
        raise AssertionError("unreachable")

    def start(self) -> Receiver:
        self.secret = telemetry.ensure_secret(self.home.control)
        self.server = self._bind()
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, args=(0.2,), name="zen-otlp", daemon=True)
        self.thread.start()
        telemetry.publish(self.home.control, self.port)
        log.info("OTLP receiver on 127.0.0.1:%d", self.port)
        return self

    def stop(self) -> None:
        if self.server is not None:
            self.server.shutdown()
            self.server.server_close()
            self.server = None
        self.relay.stop()

    def __enter__(self) -> Receiver:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def logs(self, job: str, body: bytes) -> dict[str, Any]:
        """Ingest one decoded logs request of `job`; the OTLP answer."""
        data = json.loads(body)
        with self.lock:
            got = self.ingest.payload(data, job=job)
        relay = telemetry.relay_of(self.home.job(job).dir)
        if relay is not None and relay.get("protocol") == "http/json":
            self.relay.put(str(relay["endpoint"]), dict(relay.get("headers") or {}), body)
        out: dict[str, Any] = {}
        if got.ignored:
            out["partialSuccess"] = {"rejectedLogRecords": 0,
                                     "errorMessage": f"{got.ignored} records not counted by zen"}
        return out


def _unpack(body: bytes, encoding: str) -> bytes:
    encoding = encoding.strip().lower()
    if encoding in ("", "identity"):
        return body
    if encoding == "gzip":
        out = gzip.GzipFile(fileobj=io.BytesIO(body)).read(MAX_BODY + 1)
    elif encoding == "deflate":
        d = zlib.decompressobj()
        out = d.decompress(body, MAX_BODY + 1)
    else:
        raise ValueError(f"unsupported Content-Encoding {encoding!r}")
    if len(out) > MAX_BODY:
        raise OverflowError("body too large")
    return out


def _handler(rx: Receiver) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        server_version = "zen-otlp"
        # the answer's head and body are two writes: without this, Nagle and the client's delayed
        # ACK hold every answer ~40 ms on a kept-alive connection
        disable_nagle_algorithm = True

        def log_message(self, format: str, *args: Any) -> None:
            log.debug("otlp %s", format % args)

        def _answer(self, code: int, obj: Any) -> None:
            data = json.dumps(obj).encode()
            self.send_response(code)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
            if code >= 400:
                rx.rejected += 1

        def _refuse(self, code: int, message: str) -> None:
            self._answer(code, {"code": code, "message": message})

        def do_GET(self) -> None:
            self._refuse(404, "zen's OTLP receiver takes POST /v1/logs")

        def do_POST(self) -> None:
            path = self.path.split("?", 1)[0]
            try:
                size = int(self.headers.get("Content-Length") or -1)
            except ValueError:
                size = -1
            if size < 0 or size > MAX_BODY:
                self.close_connection = True
                self._refuse(413 if size > MAX_BODY else 411, "a Content-Length up to 32 MiB is required")
                return
            raw = self.rfile.read(size)
            if path in _DROPPED:
                self._answer(200, {})
                return
            if path != telemetry.LOGS_PATH:
                self._refuse(404, "zen's OTLP receiver takes POST /v1/logs")
                return
            job = telemetry.token_job(rx.secret, self.headers.get("Authorization"))
            if job is None:
                self._refuse(401, "a zen job's telemetry token is required")
                return
            if "protobuf" in (self.headers.get("Content-Type") or ""):
                self._refuse(415, "zen receives OTLP as http/json")
                return
            try:
                answer = rx.logs(job, _unpack(raw, self.headers.get("Content-Encoding") or ""))
            except OverflowError:
                self._refuse(413, "the unpacked body is over 32 MiB")
            except (ValueError, OSError, EOFError, zlib.error) as exc:
                self._refuse(400, f"not an OTLP http/json body: {str(exc)[:200]}")
            except Exception:
                log.exception("OTLP batch of job %s could not be recorded", job)
                self._refuse(503, "zen could not record the batch; retry")
            else:
                self._answer(200, answer)

    return Handler


class _Relay:
    """Forwards copies of batches to the user's own OTLP endpoint, from one thread."""

    def __init__(self) -> None:
        self.q: queue.Queue[tuple[str, dict[str, str], bytes] | None] = queue.Queue(RELAY_QUEUE)
        self.thread: threading.Thread | None = None
        self.sent = self.dropped = 0

    def put(self, endpoint: str, headers: dict[str, str], body: bytes) -> None:
        if self.thread is None:
            self.thread = threading.Thread(target=self._run, name="zen-otlp-relay", daemon=True)
            self.thread.start()
        try:
            self.q.put_nowait((endpoint, headers, body))
        except queue.Full:
            self.dropped += 1

    def _run(self) -> None:
        with httpx.Client(timeout=RELAY_TIMEOUT_S) as client:
            while True:
                item = self.q.get()
                if item is None:
                    return
                endpoint, headers, body = item
                try:
                    r = client.post(endpoint, content=body,
                                    headers={**headers, "Content-Type": "application/json"})
                    ok = r.status_code < 300
                except httpx.HTTPError:
                    ok = False
                if ok:
                    self.sent += 1
                else:
                    self.dropped += 1
                    log.info("OTLP relay to %s failed; the copy is dropped", endpoint)

    def stop(self) -> None:
        if self.thread is not None:
            with contextlib.suppress(queue.Full):
                self.q.put_nowait(None)
            self.thread.join(timeout=RELAY_TIMEOUT_S + 1)
            self.thread = None


def for_supervisor(home: Home, observatory: dict[str, Any], *, once: bool) -> Receiver | None:
    """The supervisor's receiver, started; None when telemetry is off (zen.yaml), for a single
    pass (`--once`: its agents outlive it), or when it cannot listen (then usage comes from the
    transcripts alone, and the supervisor runs on)."""
    if once or not observatory.get("telemetry", True):
        return None
    try:
        return Receiver(home).start()
    except (OSError, ValueError) as exc:
        log.warning("no OTLP receiver (agents' telemetry is off this run): %s", exc)
        return None

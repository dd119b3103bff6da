"""The supervisor's endpoint for its Ray workers: the kill switch, read by every worker's
guardian (zen.guard.policy.remote_switch) on every call (DESIGN 14).

    GET /v1/switch    Authorization: Bearer <token>   ->  {"v": 1, "engaged": <control/KILL exists>}

It runs in a thread of `zen supervise` while the home has remote work (stdlib http.server: one
tiny read-only route needs no framework). `control/remote-endpoint.json` keeps its port and token,
so a restarted supervisor answers at the same address and the turns that kept running on the
cluster meanwhile find it again (while it is down they fail closed: observe-only). Listen address
and the URL workers use come from zen.yaml `remote.listen` / `remote.advertise`.
"""

from __future__ import annotations

import contextlib
import hmac
import json
import logging
import secrets
import socket
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from zen.store.atomic import atomic_write
from zen.store.layout import Home

log = logging.getLogger(__name__)

SWITCH_PATH = "/v1/switch"
DEFAULT_LISTEN = "127.0.0.1:0"


def _split(listen: str) -> tuple[str, int]:
    host, sep, port = listen.rpartition(":")
    if not sep:
        return listen or "127.0.0.1", 0
    return host or "127.0.0.1", int(port or 0)


class Endpoint:
    def __init__(self, home: Home, listen: str = DEFAULT_LISTEN, advertise: str = "") -> None:
        self.home = home
        self.listen = listen or DEFAULT_LISTEN
        self.advertise = advertise.rstrip("/")
        self.server: ThreadingHTTPServer | None = None
        self.thread: threading.Thread | None = None
        self.token = ""

    # -- the record of where it listens ------------------------------------------------------------
    def _saved(self) -> dict[str, Any]:
        try:
            data = json.loads(self.home.remote_endpoint.read_text())
            return data if isinstance(data, dict) else {}
        except (OSError, ValueError):
            return {}

    def start(self) -> None:
        if self.server is not None:
            return
        saved = self._saved()
        host, port = _split(self.listen)
        self.token = str(saved.get("token") or secrets.token_urlsafe(24))
        server = None
        if port == 0 and saved.get("host") == host and isinstance(saved.get("port"), int):
            # the address the running turns know, if it is still free
            with contextlib.suppress(OSError):
                server = self._bind(host, int(saved["port"]))
        if server is None:
            server = self._bind(host, port)
        self.server = server
        record = {"v": 1, "host": host, "port": self.port, "token": self.token}
        self.home.control.mkdir(parents=True, exist_ok=True)
        atomic_write(self.home.remote_endpoint, json.dumps(record) + "\n", mode=0o600)
        self.thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.5},
                                       name="zen-remote-endpoint", daemon=True)
        self.thread.start()
        log.info("remote endpoint on %s", self.url)

    def _bind(self, host: str, port: int) -> ThreadingHTTPServer:
        endpoint = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                endpoint.answer(self)

            def log_message(self, format: str, *args: Any) -> None:
                pass  # every guard call asks: no line per request

        server = ThreadingHTTPServer((host, port), Handler)
        server.daemon_threads = True
        return server

    def stop(self) -> None:
        if self.server is not None:
            self.server.shutdown()
            self.server.server_close()
            self.server = None

    @property
    def port(self) -> int:
        assert self.server is not None
        return int(self.server.server_address[1])

    @property
    def url(self) -> str:
        """What a worker's guardian asks."""
        if self.advertise:
            return self.advertise + SWITCH_PATH
        host, _ = _split(self.listen)
        if host in ("0.0.0.0", "::", ""):
            host = socket.gethostname()
        return f"http://{host}:{self.port}{SWITCH_PATH}"

    # -- the route ---------------------------------------------------------------------------------------
    def answer(self, req: BaseHTTPRequestHandler) -> None:
        auth = req.headers.get("Authorization", "")
        if req.path.split("?", 1)[0] != SWITCH_PATH:
            self._reply(req, 404, {"v": 1, "error": "not found"})
        elif not hmac.compare_digest(auth, f"Bearer {self.token}"):
            self._reply(req, 401, {"v": 1, "error": "bad token"})
        else:
            self._reply(req, 200, {"v": 1, "engaged": self.home.kill_file.exists()})

    @staticmethod
    def _reply(req: BaseHTTPRequestHandler, status: int, body: dict[str, Any]) -> None:
        data = json.dumps(body).encode()
        req.send_response(status)
        req.send_header("Content-Type", "application/json")
        req.send_header("Content-Length", str(len(data)))
        req.end_headers()
        req.wfile.write(data)


__all__ = ["SWITCH_PATH", "Endpoint"]

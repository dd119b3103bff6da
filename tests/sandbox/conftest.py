"""The real agents' fixtures (tests/claude; tests/codex in codex/) for the wall's suite: each test
here that needs an agent binary is skipped, naming how to install it, when it is missing. And
`sink`: a receiver on a second loopback address, which no lane allows."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import ClassVar

import pytest

from tests.claude.conftest import api, claude_env, claude_home, claude_lane, needs_claude  # noqa: F401


class _Sink(BaseHTTPRequestHandler):
    got: ClassVar[list[bytes]] = []

    def do_POST(self) -> None:
        self.got.append(self.rfile.read(int(self.headers.get("content-length") or 0)))
        self.send_response(200)
        self.end_headers()

    do_PUT = do_POST

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def sink() -> Iterator[tuple[str, list[bytes]]]:
    """(its URL, the bodies it received): nothing should ever arrive."""
    got: list[bytes] = []
    srv = ThreadingHTTPServer(("127.0.0.2", 0), type("S", (_Sink,), {"got": got}))
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    yield f"http://127.0.0.2:{srv.server_address[1]}/", got
    srv.shutdown()

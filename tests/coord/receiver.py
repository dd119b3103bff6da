"""A webhook receiver on 127.0.0.1 for the tests: records every request, fails on demand."""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


class Receiver:
    """`fail_first`: answer 503 to the first N attempts of each id; `status`: answer this to
    everything; `delay_s`: sleep before answering (a slow receiver, to kill a sender mid-call)."""

    def __init__(self, fail_first: int = 0, status: int = 200, delay_s: float = 0.0) -> None:
        self.fail_first = fail_first
        self.status = status
        self.delay_s = delay_s
        self.requests: list[dict[str, Any]] = []      # every attempt, answered or not
        self.lock = threading.Lock()
        self.started = threading.Event()
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                rec = {"headers": dict(self.headers), "body": body, "at": time.time()}
                with outer.lock:
                    outer.requests.append(rec)
                    tries = sum(1 for r in outer.requests if r["headers"].get("webhook-id") == self.headers.get("webhook-id"))
                outer.started.set()
                if outer.delay_s:
                    time.sleep(outer.delay_s)
                code = outer.status if tries > outer.fail_first else 503
                rec["answered"] = code
                self.send_response(code)
                self.send_header("Content-Type", "text/plain")
                self.end_headers()
                self.wfile.write(b"ok\n" if code < 300 else b"try again later\n")

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/hook"

    def delivered(self) -> dict[str, dict[str, Any]]:
        """id -> the payload of the first attempt answered 2xx."""
        with self.lock:
            out: dict[str, dict[str, Any]] = {}
            for r in self.requests:
                if 200 <= r.get("answered", 0) < 300:
                    out.setdefault(r["headers"]["webhook-id"], json.loads(r["body"]))
            return out

    def attempts(self, item_id: str) -> int:
        with self.lock:
            return sum(1 for r in self.requests if r["headers"].get("webhook-id") == item_id)

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()

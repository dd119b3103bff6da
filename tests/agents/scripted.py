"""What the scripted API stand-ins for Codex, Gemini CLI and aider share: a script of steps, a
loopback HTTP server that records every request, and `{cwd}` filling.

A script is a flat list of steps: `shell("rm -rf ~")` asks the agent to run a shell command,
`say("All done.")` answers with text and ends the turn. Which step to answer with is read from the
conversation in the request (each agent's stand-in counts the tool results and the plain answers
already in it), so a retried request gets the same answer. Each stand-in subclasses
`ScriptedServer` and implements `respond()`.
"""

from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

DEFAULT_USAGE = {"input_tokens": 1200, "cached_tokens": 200, "output_tokens": 30, "reasoning_tokens": 0}


@dataclass
class Step:
    kind: str                      # "shell" | "tool" | "text"
    command: str = ""
    text: str = ""
    usage: dict[str, int] = field(default_factory=lambda: dict(DEFAULT_USAGE))
    args: dict[str, Any] = field(default_factory=dict)   # more tool arguments, agent-specific


def shell(command: str, usage: dict[str, int] | None = None, **args: Any) -> Step:
    """A shell command; `args` go into the tool call too (Codex: sandbox_permissions, ...)."""
    return Step("shell", command=command, usage={**DEFAULT_USAGE, **(usage or {})}, args=args)


def tool(name: str, usage: dict[str, int] | None = None, **args: Any) -> Step:
    """A call of the agent's own tool `name` with `args` (e.g. Gemini CLI's write_file)."""
    return Step("tool", command=name, usage={**DEFAULT_USAGE, **(usage or {})}, args=args)


def say(words: str, usage: dict[str, int] | None = None) -> Step:
    return Step("text", text=words, usage={**DEFAULT_USAGE, **(usage or {})})


@dataclass
class Request:
    method: str
    path: str
    headers: dict[str, str]
    body: Any
    step: int | None = None        # the script step answered; None = not a script step
    kind: str = ""                 # what the stand-in took it for ("script", "title", "router", ...)
    at: float = field(default_factory=time.time)


def fill(value: Any, cwd: str) -> Any:
    """`{cwd}` in a step's strings becomes the agent's working directory (the job's worktree)."""
    if isinstance(value, str):
        return value.replace("{cwd}", cwd)
    if isinstance(value, dict):
        return {k: fill(v, cwd) for k, v in value.items()}
    if isinstance(value, list):
        return [fill(v, cwd) for v in value]
    return value


@dataclass
class Reply:
    status: int = 200
    json_body: Any = None                                   # a JSON answer
    events: list[tuple[str | None, Any]] | None = None     # an SSE answer: (event name, data)
    headers: dict[str, str] = field(default_factory=dict)


class ScriptedServer:
    """`with Sub() as api:` serves on api.url until the block ends; `api.script` is the script."""

    def __init__(self, script: list[Step] | None = None) -> None:
        self.script: list[Step] = list(script or [])
        self.requests: list[Request] = []
        self.lock = threading.Lock()
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def port(self) -> int:
        return int(self.server.server_address[1])

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def __enter__(self) -> ScriptedServer:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()

    # -- what tests assert on ------------------------------------------------------------------
    def script_requests(self) -> list[Request]:
        with self.lock:
            return [r for r in self.requests if r.kind == "script"]

    def answered(self) -> int:
        """How many distinct script steps have been answered."""
        return len({r.step for r in self.script_requests() if r.step is not None and r.step < len(self.script)})

    def step_at(self, at: int) -> tuple[int, Step]:
        if at < len(self.script):
            return at, self.script[at]
        return at, say("The script is finished.")

    # -- for subclasses ------------------------------------------------------------------------
    def respond(self, req: Request) -> Reply:
        raise NotImplementedError

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        api = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:  # keep test output quiet
                pass

            def _serve(self, method: str) -> None:
                n = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(n) if n else b""
                try:
                    body: Any = json.loads(raw) if raw else None
                except ValueError:
                    body = raw.decode("utf-8", "replace")
                req = Request(method, self.path, dict(self.headers), body)
                try:
                    reply = api.respond(req)
                except Exception as exc:  # a broken script shows as a 500 with the reason
                    reply = Reply(500, {"error": {"message": f"stand-in failed: {exc!r}"}})
                with api.lock:
                    api.requests.append(req)
                self.send_response(reply.status)
                for k, v in reply.headers.items():
                    self.send_header(k, v)
                if reply.events is None:
                    data = json.dumps(reply.json_body if reply.json_body is not None else {}).encode()
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                    return
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Cache-Control", "no-cache")
                self.send_header("Connection", "close")
                self.end_headers()
                for name, data in reply.events:
                    head = f"event: {name}\n" if name else ""
                    text = data if isinstance(data, str) else json.dumps(data)   # a str as is: [DONE]
                    self.wfile.write(f"{head}data: {text}\n\n".encode())
                    self.wfile.flush()
                self.close_connection = True

            def do_GET(self) -> None:
                self._serve("GET")

            def do_POST(self) -> None:
                self._serve("POST")

        return Handler

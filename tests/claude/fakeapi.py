"""A scripted stand-in for the Anthropic Messages API on 127.0.0.1, for the real Claude Code.

Each test gives it a script: a flat list of steps, each either a tool call (`tool("Bash",
command="...")`) or a text answer (`text("All done.")`). A text step ends a turn (stop_reason
`end_turn`); a tool step asks Claude Code to run the tool (stop_reason `tool_use`), and Claude Code
comes back with the tool's result in the next request.

Which step to answer with is read from the conversation in the request, so a retried or repeated
request gets the same answer: the number of `tool_result` blocks (one per tool step already run)
plus the number of assistant messages that made no tool call (one per text step already said).
String inputs may say `{cwd}`: it becomes the working directory Claude Code reports in the
request ("Primary working directory: ..."), i.e. the job's worktree, which a test cannot know
before zen creates it.

Requests without tools (side requests such as a title) get a short text and do not move the script.

A step may fail first: `failing(step, status=529, times=1)` answers the first `times` requests that
reach it with that HTTP error (an Anthropic error body), then with the step itself, as an
overloaded API does before a retry goes through.

Every request is recorded (path, headers, parsed body, the step answered) for the test to assert on.
"""

from __future__ import annotations

import itertools
import json
import re
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

_ids = itertools.count(1)


@dataclass
class Step:
    kind: str                      # "tool" | "text"
    name: str = ""                 # tool name
    input: dict[str, Any] = field(default_factory=dict)
    text: str = ""
    usage: dict[str, int] = field(default_factory=dict)
    fail_status: int = 0           # answer the first `fail_times` requests with this HTTP error
    fail_times: int = 0


DEFAULT_USAGE = {"input_tokens": 120, "output_tokens": 30,
                 "cache_creation_input_tokens": 400, "cache_read_input_tokens": 2000}


def tool(name: str, usage: dict[str, int] | None = None, **tool_input: Any) -> Step:
    return Step("tool", name=name, input=tool_input, usage=dict(usage or DEFAULT_USAGE))


def bash(command: str, description: str = "scripted command", **kw: Any) -> Step:
    return tool("Bash", command=command, description=description, **kw)


def text(words: str, usage: dict[str, int] | None = None) -> Step:
    return Step("text", text=words, usage=dict(usage or DEFAULT_USAGE))


def failing(step: Step, status: int = 529, times: int = 1) -> Step:
    """`step`, answered with HTTP `status` the first `times` times it is asked for."""
    step.fail_status, step.fail_times = status, times
    return step


_ERROR_TYPES = {400: "invalid_request_error", 429: "rate_limit_error", 500: "api_error",
                529: "overloaded_error"}


@dataclass
class Request:
    method: str
    path: str
    headers: dict[str, str]
    body: Any
    step: int | None = None        # index of the script step answered, None = not a script step
    status: int = 200              # the HTTP status answered
    at: float = field(default_factory=time.time)   # when it arrived (epoch seconds)

    @property
    def messages(self) -> list[dict[str, Any]]:
        if isinstance(self.body, dict):
            return list(self.body.get("messages") or [])
        return []

    def tool_results(self) -> list[dict[str, Any]]:
        """Every tool_result block in this request's conversation, oldest first."""
        out = []
        for m in self.messages:
            if m.get("role") == "user" and isinstance(m.get("content"), list):
                out.extend(b for b in m["content"] if isinstance(b, dict) and b.get("type") == "tool_result")
        return out


def _result_text(block: dict[str, Any]) -> str:
    content = block.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(str(c.get("text", "")) for c in content if isinstance(c, dict))
    return ""


_CWD = re.compile(r"Primary working directory: ([^\s\\\"]+)")


def working_dir(body: dict[str, Any]) -> str:
    found = _CWD.search(json.dumps(body.get("system"))) or _CWD.search(json.dumps(body.get("messages")))
    return found.group(1) if found else ""


def _fill(value: Any, cwd: str) -> Any:
    if isinstance(value, str):
        return value.replace("{cwd}", cwd)
    if isinstance(value, dict):
        return {k: _fill(v, cwd) for k, v in value.items()}
    if isinstance(value, list):
        return [_fill(v, cwd) for v in value]
    return value


def position(body: dict[str, Any]) -> int:
    """How many script steps the conversation in `body` has already been through."""
    done = 0
    for m in body.get("messages") or []:
        content = m.get("content")
        blocks = content if isinstance(content, list) else []
        if m.get("role") == "user":
            done += sum(1 for b in blocks if isinstance(b, dict) and b.get("type") == "tool_result")
        elif m.get("role") == "assistant" and not any(
                isinstance(b, dict) and b.get("type") == "tool_use" for b in blocks):
            done += 1
    return done


class FakeAPI:
    """`with FakeAPI([...]) as api:` serves on api.url until the block ends."""

    def __init__(self, script: list[Step] | None = None) -> None:
        self.script: list[Step] = list(script or [])
        self.requests: list[Request] = []
        self.failed: dict[int, int] = {}     # script step -> errors answered for it so far
        self.lock = threading.Lock()
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    # --- lifecycle ---------------------------------------------------------------------------
    @property
    def port(self) -> int:
        return int(self.server.server_address[1])

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> FakeAPI:
        self.thread.start()
        return self

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()

    def __enter__(self) -> FakeAPI:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # --- what the test asserts on --------------------------------------------------------------
    def message_requests(self) -> list[Request]:
        with self.lock:
            return [r for r in self.requests if r.path.startswith("/v1/messages")
                    and not r.path.startswith("/v1/messages/count_tokens")]

    def script_requests(self) -> list[Request]:
        return [r for r in self.message_requests() if r.step is not None]

    def answered(self) -> int:
        """How many distinct script steps have been answered."""
        return len({r.step for r in self.script_requests() if r.step is not None and r.step < len(self.script)})

    def tool_result_for(self, step: int) -> dict[str, Any] | None:
        """The tool_result Claude Code sent back for the tool call of script step `step`."""
        tool_id = self.tool_use_id(step)
        for r in reversed(self.message_requests()):
            for b in r.tool_results():
                if b.get("tool_use_id") == tool_id:
                    return {**b, "text": _result_text(b)}
        return None

    def errors(self) -> list[Request]:
        """The message requests answered with a scripted HTTP error."""
        return [r for r in self.message_requests() if r.status != 200]

    def tool_use_id(self, step: int) -> str:
        return f"toolu_zen{step:04d}"

    # --- the HTTP side -----------------------------------------------------------------------
    def _record(self, req: Request) -> None:
        with self.lock:
            self.requests.append(req)

    def _choose(self, body: dict[str, Any]) -> tuple[int | None, Step]:
        if not body.get("tools"):
            return None, text("OK", usage={"input_tokens": 5, "output_tokens": 1,
                                           "cache_creation_input_tokens": 0,
                                           "cache_read_input_tokens": 0})
        at = position(body)
        if at < len(self.script):
            return at, self.script[at]
        return at, text("The script is finished.")

    def _events(self, body: dict[str, Any], step_no: int | None, step: Step) -> list[tuple[str, dict[str, Any]]]:
        model = str(body.get("model") or "claude-sonnet-4-5")
        msg_id = f"msg_zen{next(_ids):06d}"
        usage = dict(step.usage)
        out_tokens = usage.pop("output_tokens", 1)
        start_usage = {**usage, "output_tokens": 1}
        evs: list[tuple[str, dict[str, Any]]] = [("message_start", {
            "type": "message_start",
            "message": {"id": msg_id, "type": "message", "role": "assistant", "model": model,
                        "content": [], "stop_reason": None, "stop_sequence": None,
                        "usage": start_usage}})]
        if step.kind == "tool":
            tid = self.tool_use_id(step_no if step_no is not None else 9999)
            evs += [
                ("content_block_start", {"type": "content_block_start", "index": 0,
                                         "content_block": {"type": "tool_use", "id": tid,
                                                           "name": step.name, "input": {}}}),
                ("content_block_delta", {"type": "content_block_delta", "index": 0,
                                         "delta": {"type": "input_json_delta",
                                                   "partial_json": json.dumps(
                                                       _fill(step.input, working_dir(body)))}}),
                ("content_block_stop", {"type": "content_block_stop", "index": 0}),
            ]
            stop = "tool_use"
        else:
            evs += [
                ("content_block_start", {"type": "content_block_start", "index": 0,
                                         "content_block": {"type": "text", "text": ""}}),
                ("content_block_delta", {"type": "content_block_delta", "index": 0,
                                         "delta": {"type": "text_delta", "text": step.text}}),
                ("content_block_stop", {"type": "content_block_stop", "index": 0}),
            ]
            stop = "end_turn"
        evs += [
            ("message_delta", {"type": "message_delta",
                               "delta": {"stop_reason": stop, "stop_sequence": None},
                               "usage": {"output_tokens": out_tokens}}),
            ("message_stop", {"type": "message_stop"}),
        ]
        return evs

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        api = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:  # keep test output quiet
                pass

            def _body(self) -> Any:
                n = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(n) if n else b""
                try:
                    return json.loads(raw) if raw else None
                except ValueError:
                    return raw.decode("utf-8", "replace")

            def _json(self, code: int, obj: Any) -> None:
                data = json.dumps(obj).encode()
                self.send_response(code)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def _other(self, method: str) -> None:
                body = self._body() if method in ("POST", "PUT", "PATCH") else None
                api._record(Request(method, self.path, dict(self.headers), body))
                self._json(404, {"type": "error", "error": {"type": "not_found_error",
                                                            "message": "not scripted"}})

            def do_GET(self) -> None:
                self._other("GET")

            def do_HEAD(self) -> None:
                api._record(Request("HEAD", self.path, dict(self.headers), None))
                self.send_response(200)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def do_PUT(self) -> None:
                self._other("PUT")

            def do_POST(self) -> None:
                path = self.path.split("?", 1)[0]
                if path == "/v1/messages/count_tokens":
                    body = self._body()
                    api._record(Request("POST", self.path, dict(self.headers), body))
                    self._json(200, {"input_tokens": 100})
                    return
                if path != "/v1/messages":
                    self._other("POST")
                    return
                body = self._body()
                if not isinstance(body, dict):
                    api._record(Request("POST", self.path, dict(self.headers), body))
                    self._json(400, {"type": "error", "error": {"type": "invalid_request_error",
                                                                "message": "body is not JSON"}})
                    return
                step_no, step = api._choose(body)
                if step_no is not None and step.fail_times:
                    with api.lock:
                        fail = api.failed.get(step_no, 0) < step.fail_times
                        if fail:
                            api.failed[step_no] = api.failed.get(step_no, 0) + 1
                    if fail:
                        api._record(Request("POST", self.path, dict(self.headers), body, step_no,
                                            status=step.fail_status))
                        kind = _ERROR_TYPES.get(step.fail_status, "api_error")
                        self._json(step.fail_status, {"type": "error", "error": {
                            "type": kind, "message": f"scripted {kind} for step {step_no}"}})
                        return
                api._record(Request("POST", self.path, dict(self.headers), body, step_no))
                events = api._events(body, step_no, step)
                if not body.get("stream"):
                    self._json(200, _collapse(events))
                    return
                self.send_response(200)
                self.send_header("request-id", f"req_zen{next(_ids):06d}")
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Cache-Control", "no-cache")
                self.send_header("Connection", "close")
                self.end_headers()
                for name, data in events:
                    self.wfile.write(f"event: {name}\ndata: {json.dumps(data)}\n\n".encode())
                    self.wfile.flush()
                self.close_connection = True

        return Handler


def _collapse(events: list[tuple[str, dict[str, Any]]]) -> dict[str, Any]:
    """The non-streaming Message for the same events (rarely asked for)."""
    msg = dict(events[0][1]["message"])
    content: list[dict[str, Any]] = []
    for name, data in events[1:]:
        if name == "content_block_start":
            content.append(dict(data["content_block"]))
        elif name == "content_block_delta":
            d = data["delta"]
            if d["type"] == "text_delta":
                content[-1]["text"] = content[-1].get("text", "") + d["text"]
            else:
                content[-1]["input"] = json.loads(d["partial_json"])
        elif name == "message_delta":
            msg["stop_reason"] = data["delta"]["stop_reason"]
            msg["usage"] = {**msg["usage"], **data["usage"]}
    msg["content"] = content
    return msg

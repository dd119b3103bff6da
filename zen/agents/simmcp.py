"""The simulated agent's MCP client: JSON-RPC lines over stdio to the server named `zen` in its
--mcp-config file, as Claude Code talks to its MCP servers. Standard library only, like the agent
(zen/agents/simagent.py), whose start-up must be fast."""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
from typing import Any


class McpClient:
    """A minimal MCP client over stdio (JSON-RPC lines), standard library only: the server named
    `zen` in the --mcp-config file, started at the first call and kept for the session, as
    Claude Code keeps its servers."""

    def __init__(self, config: dict[str, Any] | None, as_job: str | None = None) -> None:
        self.entry = ((config or {}).get("mcpServers") or {}).get("zen")
        if self.entry is not None and as_job is not None:   # a forged copy: another job's id
            self.entry = {**self.entry, "env": {**(self.entry.get("env") or {}), "ZEN_JOB_ID": as_job}}
        self.proc: subprocess.Popen[str] | None = None
        self.next_id = 0

    def _start(self) -> subprocess.Popen[str]:
        if self.entry is None:
            raise RuntimeError("no MCP server named zen (--mcp-config)")
        env = {**os.environ, **{str(k): str(v) for k, v in (self.entry.get("env") or {}).items()}}
        proc = subprocess.Popen([str(self.entry["command"]), *[str(a) for a in self.entry.get("args") or []]],
                                stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env)
        self.proc = proc
        self._request("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                                     "clientInfo": {"name": "zen-sim", "version": "1"}})
        self._send({"jsonrpc": "2.0", "method": "notifications/initialized", "params": {}})
        return proc

    def _send(self, msg: dict[str, Any]) -> None:
        assert self.proc is not None and self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(msg) + "\n")
        self.proc.stdin.flush()

    def _request(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        self.next_id += 1
        self._send({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params})
        assert self.proc is not None and self.proc.stdout is not None
        while True:
            line = self.proc.stdout.readline()
            if not line:
                raise RuntimeError("the MCP server closed its output")
            msg = json.loads(line)
            if msg.get("id") == self.next_id:
                if "error" in msg:
                    raise RuntimeError(str(msg["error"].get("message")))
                return dict(msg.get("result") or {})

    def call(self, tool: str, args: dict[str, Any]) -> tuple[bool, Any]:
        """(ok, structured result or the error text)."""
        if self.proc is None:
            self._start()
        result = self._request("tools/call", {"name": tool, "arguments": args})
        if result.get("isError"):
            return False, " ".join(c.get("text", "") for c in result.get("content") or [])
        return True, result.get("structuredContent")

    def close(self) -> None:
        if self.proc is not None:
            with contextlib.suppress(OSError):
                if self.proc.stdin is not None:
                    self.proc.stdin.close()
            try:
                self.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.proc.kill()

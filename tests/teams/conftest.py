"""Fixtures for the team tests: the supervisor tests' home and supervisors, plus a real MCP
client on `zen mcp serve` (the official SDK's stdio client), acting as a job's agent would. The
test runs outside every job's agent, so it speaks for a job as a person would: with the job's
token from the home's team key (zen.store.teamkey), which no agent can read."""

from __future__ import annotations

import asyncio
import json
import os
import sys
import threading
from collections.abc import Iterator
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any

import pytest
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

from tests.helpers import tune
from tests.supervisor.conftest import Supervisors, make_fast, sup, sups, zh  # fixtures, re-exported
from zen.store import teamkey
from zen.store.home import Home

__all__ = ["Mcp", "Supervisors", "make_fast", "mcp_for", "sup", "sups", "tune", "zh"]




class Mcp:
    """MCP sessions to `zen mcp serve` for one job, on an event loop in a thread of their own (the
    SDK's context managers must open and close in one task: that task holds them)."""

    def __init__(self, home: Path, job: str, servers: int = 1) -> None:
        self.home, self.job, self.servers = home, job, servers
        self.token = teamkey.token(Home(home), job)
        self.loop = asyncio.new_event_loop()
        self.sessions: list[ClientSession] = []
        self.ready = threading.Event()
        self.failed: BaseException | None = None
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()
        self.closing = asyncio.run_coroutine_threadsafe(self._make_event(), self.loop).result()
        self.holder = asyncio.run_coroutine_threadsafe(self._hold(), self.loop)
        self.ready.wait(60)
        if self.failed is not None or not self.ready.is_set():
            raise AssertionError(f"zen mcp serve did not start: {self.failed!r}")

    async def _make_event(self) -> asyncio.Event:
        return asyncio.Event()

    async def _hold(self) -> None:
        env = {"ZEN_HOME": str(self.home), "ZEN_JOB_ID": self.job, "ZEN_MCP_TOKEN": self.token,
               "HOME": os.environ["HOME"],
               "TMUX_TMPDIR": os.environ.get("TMUX_TMPDIR", ""), "PATH": os.environ.get("PATH", "")}
        params = StdioServerParameters(command=sys.executable, args=["-m", "zen", "mcp", "serve"], env=env)
        try:
            async with AsyncExitStack() as stack:
                for _ in range(self.servers):
                    read, write = await stack.enter_async_context(stdio_client(params))
                    session = await stack.enter_async_context(ClientSession(read, write))
                    await session.initialize()
                    self.sessions.append(session)
                self.ready.set()
                await self.closing.wait()
        except BaseException as exc:
            self.failed = exc
            self.ready.set()
            raise

    async def _call(self, i: int, tool: str, args: dict[str, Any]) -> tuple[bool, Any]:
        r: Any = await self.sessions[i % len(self.sessions)].call_tool(tool, args)
        if r.is_error:
            text = " ".join(getattr(c, "text", "") for c in r.content)
            return False, json.loads(text[text.index("{"):]) if "{" in text else text
        return True, r.structured_content

    def call(self, tool: str, **args: Any) -> tuple[bool, Any]:
        """(ok, structured result) or (False, the error as a dict)."""
        return asyncio.run_coroutine_threadsafe(self._call(0, tool, args), self.loop).result(300)

    def ok(self, tool: str, **args: Any) -> Any:
        ok, result = self.call(tool, **args)
        assert ok, result
        return result

    def many(self, calls: list[tuple[str, dict[str, Any]]]) -> list[tuple[bool, Any]]:
        """All calls at once, spread over the sessions."""
        async def run() -> list[tuple[bool, Any]]:
            return list(await asyncio.gather(*(self._call(i, t, a) for i, (t, a) in enumerate(calls))))
        return asyncio.run_coroutine_threadsafe(run(), self.loop).result(300)

    def close(self) -> None:
        self.loop.call_soon_threadsafe(self.closing.set)
        try:
            self.holder.result(30)
        finally:
            self.loop.call_soon_threadsafe(self.loop.stop)
            self.thread.join(10)
            self.loop.close()


@pytest.fixture
def mcp_for() -> Iterator[Any]:
    opened: list[Mcp] = []

    def make(home: Path, job: str, servers: int = 1) -> Mcp:
        m = Mcp(home, job, servers)
        opened.append(m)
        return m

    yield make
    for m in opened:
        m.close()

"""What every request shares, loaded once per server: the home, the token, the tickets, the live
feed, and the address the server answers to. Routers get it through FastAPI dependencies."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from fastapi import Request

from zen.server.auth import Tickets, read_token
from zen.server.hub import Hub
from zen.store.home import Home


@dataclass
class ServerContext:
    home: Home
    host: str
    port: int
    hub: Hub
    tickets: Tickets = field(default_factory=Tickets)
    keepalive_s: float = 15.0
    _token: str | None = None
    _token_key: tuple[int, int] | None = None

    @property
    def token(self) -> str:
        """The token in control/api-token, re-read when the file is replaced (rotation)."""
        path: Path = self.home.api_token
        try:
            st = path.stat()
            key = (st.st_ino, st.st_mtime_ns)
        except OSError:
            key = None
        if self._token is None or key != self._token_key:
            self._token = read_token(self.home)
            self._token_key = key
        return self._token


def ctx(request: Request) -> ServerContext:
    """The FastAPI dependency every router takes."""
    c: ServerContext = request.app.state.zen
    return c


def home(request: Request) -> Home:
    return ctx(request).home

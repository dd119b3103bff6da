"""What every request shares, loaded once per server: the home, the token, the tickets, the live
feed, and the address the server answers to. Routers get it through FastAPI dependencies."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from pathlib import Path

from fastapi import Request

from zen.errors import ZenError
from zen.server.auth import Tickets, read_token
from zen.server.hub import Hub
from zen.server.models import Session
from zen.store.home import Home
from zen.store.jobs import JobStore


class SessionCache:
    """Each job's session as JSON, kept until its timeline grows: GET /sessions with a hundred
    jobs costs a stat per job instead of a replay and a validation per job (bench/server.py)."""

    def __init__(self) -> None:
        self._rows: dict[str, tuple[tuple[int, int], bool, bytes]] = {}
        self._lock = threading.Lock()

    def get(self, home: Home, job_id: str) -> tuple[bool, bytes] | None:
        """(live, the session's JSON) of one job, or None when it has no readable record."""
        try:
            st = home.job(job_id).events.stat()
        except OSError:
            return None
        key = (st.st_size, st.st_mtime_ns)
        with self._lock:
            hit = self._rows.get(job_id)
        if hit is not None and hit[0] == key:
            return hit[1], hit[2]
        try:
            snap = JobStore(home).snapshot(job_id)
        except (ZenError, OSError, ValueError):
            return None
        row = (snap.state.live, Session(**snap.model_dump(mode="json")).model_dump_json().encode())
        with self._lock:
            self._rows[job_id] = (key, *row)
        return row


@dataclass
class ServerContext:
    home: Home
    host: str
    port: int
    hub: Hub
    tickets: Tickets = field(default_factory=Tickets)
    keepalive_s: float = 15.0
    sessions: SessionCache = field(default_factory=SessionCache)
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

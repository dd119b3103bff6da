"""What every request shares, loaded once per server: the home, the token, the logins, the live
feed, and the address the server answers to. Routers get it through FastAPI dependencies."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from fastapi import Request

from zen.core.durations import parse_duration
from zen.errors import ZenError
from zen.server.auth import SESSION_TTL_S, Logins, read_token
from zen.server.hub import Hub
from zen.server.models import Session
from zen.store.config import Config
from zen.store.home import Home
from zen.store.jobs import JobStore
from zen.store.layout import EVENTS, TASK

Row = tuple[tuple[int, int], bool, bytes]  # ((events.jsonl size, mtime), live, the session's JSON)
Listing = list[tuple[str, tuple[int, int]]]  # (job id, (events.jsonl size, mtime)), in id order


class SessionCache:
    """Each job's session as JSON, kept until its timeline grows: GET /sessions with a hundred
    jobs costs a listing and a stat per job instead of a replay and a validation per job
    (bench/server.py). Plain string paths here: building pathlib objects for a hundred jobs
    cost more than the stats themselves.

    In steps, so the endpoint can run the cheap ones on the event loop and only the reading
    of changed jobs in the thread pool: `listing` (the stats), `stale` (what changed), `load`
    (read and serialise those), then `rows` (the answer, in `JobStore.ids` order)."""

    def __init__(self) -> None:
        # replaced whole by each `rows`, so jobs that went away (zen gc) are forgotten, and a
        # reader sees one consistent dict without a lock
        self._rows: dict[str, Row] = {}

    @staticmethod
    def listing(home: Home) -> Listing:
        """Every job directory with a timeline, and that timeline's size and mtime."""
        jobs_dir = str(home.jobs)
        try:
            names = sorted(os.listdir(jobs_dir))
        except FileNotFoundError:
            return []
        out = []
        for job_id in names:
            if job_id.startswith("."):
                continue  # .index.json and its lock
            try:
                st = os.stat(f"{jobs_dir}/{job_id}/{EVENTS}")
            except OSError:
                continue
            out.append((job_id, (st.st_size, st.st_mtime_ns)))
        return out

    def stale(self, listing: Listing) -> Listing:
        """The jobs of `listing` whose cached row is missing or older than their timeline."""
        known = self._rows
        return [(job_id, key) for job_id, key in listing if (hit := known.get(job_id)) is None or hit[0] != key]

    def load(self, home: Home, stale: Listing) -> dict[str, Row]:
        """Each stale job's row, read now (it does file I/O: the thread pool's work). A job
        without task.json (not a job yet: JobStore.ids skips it too) or unreadable is left out."""
        store = JobStore(home)
        jobs_dir = str(home.jobs)
        out = {}
        for job_id, key in stale:
            if not os.path.isfile(f"{jobs_dir}/{job_id}/{TASK}"):
                continue
            try:
                snap = store.snapshot(job_id)
            except (ZenError, OSError, ValueError):
                continue
            # keyed on the stat taken before the read: a timeline that grew meanwhile only makes
            # the next listing read it again
            out[job_id] = (key, snap.state.live, Session(**snap.model_dump(mode="json")).model_dump_json().encode())
        return out

    def rows(self, listing: Listing, loaded: dict[str, Row]) -> list[tuple[bool, bytes]]:
        """(live, the session's JSON) of every listed job with a row, in listing order."""
        known = self._rows
        kept: dict[str, Row] = {}
        for job_id, key in listing:
            hit = loaded.get(job_id) or known.get(job_id)
            if hit is not None and hit[0] == key:
                kept[job_id] = hit
        self._rows = kept
        return [(hit[1], hit[2]) for hit in kept.values()]


@dataclass
class ServerContext:
    home: Home
    host: str
    port: int
    hub: Hub
    logins: Logins = field(init=False)
    keepalive_s: float = 15.0
    tls: bool = False
    sessions: SessionCache = field(default_factory=SessionCache)
    _token: str | None = None
    _token_key: tuple[int, int] | None = None

    def __post_init__(self) -> None:
        self.logins = Logins(self.home, session_ttl(self.home))

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


def session_ttl(home: Home) -> float:
    """zen.yaml `server.session_ttl` (a duration, 12h when unset): how long a login lasts."""
    try:
        value = Config.load(home).section("server").get("session_ttl")
        return parse_duration(value) if value is not None else SESSION_TTL_S
    except (ZenError, ValueError) as exc:
        raise ZenError(f"zen.yaml server.session_ttl: {exc}") from None


async def ctx(request: Request) -> ServerContext:
    """The FastAPI dependency every router takes. Async on purpose: it does no I/O, and a plain
    def would cost every request a hop to the thread pool and back."""
    c: ServerContext = request.app.state.zen
    return c


async def home(request: Request) -> Home:
    c: ServerContext = request.app.state.zen
    return c.home

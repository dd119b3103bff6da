"""Running `zen serve`: one server per home (a flock on control/server.lock), uvicorn in the
foreground or detached, stopped by SIGTERM within a second even with clients connected.

uvicorn waits for open responses before it exits, and an SSE stream never ends by itself
(reference/fleet.md C.3): the server's exit handler therefore stops the live feed first, which
ends every stream at once, and a one-second graceful timeout bounds whatever is left.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import logging
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from types import FrameType
from typing import Any

import uvicorn

from zen.core.events import timestamp
from zen.errors import ZenError
from zen.server import auth
from zen.server.app import create_app
from zen.server.hub import Hub
from zen.store import layout
from zen.store.atomic import atomic_write, is_locked
from zen.store.home import Home

log = logging.getLogger(__name__)

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = layout.SERVER_PORT


def lock_path(home: Home) -> Path:
    return home.server_lock


def info_path(home: Home) -> Path:
    return home.server_info


def running(home: Home) -> dict[str, Any] | None:
    """The running server's pid, host and port, or None (the held flock is the liveness signal)."""
    if not is_locked(lock_path(home)):
        return None
    try:
        data = json.loads(info_path(home).read_text())
        return data if isinstance(data, dict) else {}
    except (OSError, ValueError):
        return {}


def take_lock(home: Home) -> int:
    home.control.mkdir(parents=True, exist_ok=True)
    fd = os.open(lock_path(home), os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        info = running(home) or {}
        raise ZenError(f"zen serve is already running for {home.root} (pid {info.get('pid', '?')}, "
                       f"port {info.get('port', '?')}); zen serve --stop stops it") from None
    return fd


def _bind(host: str, port: int) -> socket.socket:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    # IPPROTO_TCP named, not 0: asyncio sets TCP_NODELAY only on connections whose proto says TCP,
    # and without it every small answer written in two parts (headers, then body) waited ~40 ms
    # for the client's delayed ACK (Nagle)
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        raise ZenError(f"cannot listen on {host}:{port}: {exc.strerror} (another program uses it? try --port)") from None
    sock.listen(128)
    sock.set_inheritable(True)
    return sock


def serve(home: Home, host: str = DEFAULT_HOST, port: int = DEFAULT_PORT, *, ready: Any = None,
          keepalive_s: float = 15.0, cert: tuple[Path, Path] | None = None) -> int:
    """Run the server in this process until SIGTERM or SIGINT; 0 after a clean stop."""
    auth.ensure_token(home)
    fd = take_lock(home)
    sock = _bind(host, port)
    port = sock.getsockname()[1]
    app = create_app(home, host=host, port=port, keepalive_s=keepalive_s, tls=cert is not None)
    config = uvicorn.Config(app, log_level="warning", access_log=False, lifespan="on",
                            timeout_graceful_shutdown=1, timeout_keep_alive=5,
                            ssl_certfile=str(cert[0]) if cert else None, ssl_keyfile=str(cert[1]) if cert else None)
    server = _Server(config, app.ctx.hub)
    try:
        atomic_write(info_path(home), json.dumps({"pid": os.getpid(), "host": host, "port": port, "tls": cert is not None,
                                                  "started_at": timestamp()}) + "\n", durable=False)
        if ready is not None:
            ready(port)
        server.run(sockets=[sock])
    finally:
        sock.close()
        with contextlib.suppress(OSError):
            info_path(home).unlink()
        os.close(fd)
    return 0


class _Server(uvicorn.Server):
    """uvicorn's Server whose exit handler first ends every live stream (see the module doc)."""

    def __init__(self, config: uvicorn.Config, hub: Hub) -> None:
        super().__init__(config)
        self.hub = hub

    def handle_exit(self, sig: int, frame: FrameType | None) -> None:
        self.hub.stop()
        super().handle_exit(sig, frame)
        # a clean stop exits 0 rather than re-raising the signal after shutdown
        captured = getattr(self, "_captured_signals", None)
        if isinstance(captured, list):
            captured.clear()


def detach(home: Home, host: str, port: int, timeout_s: float = 30, cert: tuple[Path, Path] | None = None) -> dict[str, Any]:
    """Start `zen serve` in the background (log: logs/server.log); its pid and port."""
    info = running(home)
    if info is not None:
        raise ZenError(f"zen serve is already running for {home.root} (pid {info.get('pid', '?')}); "
                       "zen serve --stop stops it")
    home.logs.mkdir(parents=True, exist_ok=True)
    log_file = home.server_log
    env = {k: v for k, v in os.environ.items() if k not in ("ZEN_JOB_ID",)}
    with open(os.open(log_file, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600), "ab") as out:
        os.fchmod(out.fileno(), 0o600)  # a log from before stays private too
        proc = subprocess.Popen([sys.executable, "-P", "-m", "zen", "--home", str(home.root), "serve", "--host", host,
                                 "--port", str(port), "--detached",
                                 *(["--cert", str(cert[0]), "--key", str(cert[1])] if cert else [])], stdin=subprocess.DEVNULL, stdout=out, stderr=out,
                                start_new_session=True, close_fds=True, env=env)
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        info = running(home)
        if info and info.get("pid") == proc.pid and _answers(host, int(info.get("port") or port)):
            return info
        code = proc.poll()
        if code is not None:
            raise ZenError(f"zen serve exited at once with code {code} (see {log_file})")
        time.sleep(0.05)
    raise ZenError(f"zen serve did not start within {timeout_s:.0f}s (see {log_file})")


def _answers(host: str, port: int) -> bool:
    try:
        with socket.create_connection((host if host not in ("0.0.0.0", "::") else "127.0.0.1", port), timeout=0.5):
            return True
    except OSError:
        return False


def stop(home: Home, timeout_s: float = 10) -> int | None:
    """SIGTERM the running server and wait for its lock to go; its pid, or None if none ran."""
    info = running(home)
    if info is None:
        return None
    pid = info.get("pid")
    if not isinstance(pid, int) or pid <= 0:
        raise ZenError(f"a server holds {lock_path(home)} but its pid is unknown; stop it by hand")
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + timeout_s
    while running(home) is not None:
        if time.monotonic() >= deadline:
            raise ZenError(f"zen serve (pid {pid}) did not stop within {timeout_s:.0f}s")
        time.sleep(0.05)
    return pid


def setup_logging(home: Home) -> None:
    home.logs.mkdir(parents=True, exist_ok=True)
    os.close(os.open(home.server_log, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600))
    handler = logging.FileHandler(home.server_log)
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    root = logging.getLogger()
    root.addHandler(handler)
    root.setLevel(logging.INFO if root.level > logging.INFO else root.level)


__all__ = ["DEFAULT_HOST", "DEFAULT_PORT", "detach", "running", "serve", "stop"]

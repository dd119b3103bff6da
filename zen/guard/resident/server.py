"""`zen guard serve [--home DIR] [--parent PID]`: the resident guardian of one home.

A hook call is a fresh Python process that must import the parser and the rules before it can
decide; the resident guardian has them loaded. It listens on `<home>/control/guard.sock` (0600,
in control/, which no agent may write), and answers each connection with the hook's `verdict()` (given as `judge`): the
hook's own decision code on the caller's arguments, stdin, working directory and environment,
so an answer from the server is the answer the hook would have given itself (the wire format is
zen/guard/resident/wire.py, the client zen/guard/resident/client.py).

It declines (the client then decides in-process) a caller from another user, a caller running
other zen code than the server, and the self-tests; it stops, and lets the hooks decide alone
until the next one starts, when:

- its parent (--parent, the supervisor that started it) is gone,
- the socket at its path is no longer its own, or the home's control/ is gone,
- a source file of the zen code it runs changed (checked at most once a second),
- SIGTERM or SIGINT.

One per home (control/guard.lock). `Resident` (handle.py) is the supervisor's handle: started
with it, restarted when it ends, stopped with it. One thread reads, decides and answers (a selector loop:
threads queueing for the interpreter on a loaded machine answered slower than one loop); the
audit records are committed in groups on a second (Journal, journal.py), and each answer waits
for its own.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import selectors
import signal
import socket
import struct
import sys
import time
from collections.abc import Callable
from typing import Any

from zen.adapters import procs
from zen.errors import HomeError
from zen.guard.api import Context, Decision, ToolCall
from zen.guard.context import Guard
from zen.guard.resident import walls, wire
from zen.guard.resident.client import socket_path
from zen.guard.resident.journal import Entry, Journal
from zen.store import layout
from zen.store.panes import pane_pid
from zen.store.readers import discover_home

MAX_REQUEST = 3 * wire.MAX_FIELD
# The hook's own decision, `zen.guard.hook.verdict`, given by whoever starts the server (the CLI):
# (argv, stdin, cwd, environment, writes_check, recorder=...) -> (exit code, stdout, reason)
Judge = Callable[..., tuple[int, str, str]]
# A walled agent's turn signal (`turn EVENT ...`), recorded for it: zen.orchestration.job.turnhook.relayed
# (argv after "turn", stdin, environment, the caller's pid, checked to run under the job's pane)
Turns = Callable[[list[str], bytes, dict[str, str], int], None]
READ_S = 2.0
CODE_CHECK_S = 1.0
_PEERCRED = struct.Struct("3i")
_SELFTESTS = (b"ZEN_GUARD_SELFTEST_CRASH=", b"ZEN_GUARD_SELFTEST_HANG=")
DECLINED_ANSWER = wire.pack(wire.DECLINED, b"", b"")


def _package_dir() -> str:
    return os.path.dirname(os.path.abspath(sys.modules["zen"].__file__ or ""))


def code_stamp() -> tuple[tuple[str, int], ...]:
    """(file, mtime) of every zen module loaded: the code this process decides with."""
    files = sorted({f for name, m in list(sys.modules.items())
                    if (name == "zen" or name.startswith("zen.")) and (f := getattr(m, "__file__", None))})
    out = []
    for f in files:
        try:
            out.append((f, os.stat(f).st_mtime_ns))
        except OSError:
            out.append((f, -1))
    return tuple(out)


class Conn:
    """One caller: what it sent so far, and the answer still to send."""

    __slots__ = ("born", "inbox", "outbox", "pid", "size", "sock")

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self.pid = 0               # the caller's process, as the kernel says (SO_PEERCRED)
        self.inbox: list[bytes] = []
        self.size = 0
        self.outbox = b""
        self.born = time.monotonic()


class Callers:
    """Which job a caller belongs to, by what the kernel says (issue 31, finding M14): the process
    of the job's tmux pane (its latest agent.spawned pid) must be among the caller's ancestors. A
    request that names a job from anywhere else (a socket client of an agent's own, under another
    job or under none) is refused, so no one writes a timeline, a lease or an approval in another
    job's name."""

    def __init__(self, home: str) -> None:
        self.home = home
        self._panes: dict[str, int] = {}

    def runs_under(self, job: str, pid: int) -> bool | None:
        """Whether process `pid` runs under the job's pane; None when the job has no pane on record."""
        above = procs.ancestors(pid) if pid > 0 else []
        known = self._panes.get(job)
        if known is not None and known in above:
            return True
        pane = pane_pid(self.home, job)
        if pane is None:
            return None
        self._panes[job] = pane
        return pane in above


class Server:
    def __init__(self, home: str, judge: Judge, writes_check: Callable[[], Any] | None = None,
                 parent: int | None = None, turns: Turns | None = None) -> None:
        self.home = home
        self.judge = judge
        self.turns = turns
        self.writes_check = writes_check
        self.parent = parent
        self.path = socket_path(home)
        self.control = os.path.dirname(self.path)
        self.package = os.fsencode(_package_dir())
        self.stopping = False      # a plain flag: stop_soon() sets it from a signal handler
        self._wake_r, self._wake_w = os.pipe()
        os.set_blocking(self._wake_r, False)
        os.set_blocking(self._wake_w, False)
        self.journal = Journal(self._wake_w)
        self._sel = selectors.DefaultSelector()
        self._conns: dict[int, Conn] = {}
        self._lock_fd: int | None = None
        self._sock: socket.socket | None = None
        self._ino: int | None = None
        self._stamp: tuple[tuple[str, int], ...] = ()
        self.callers = Callers(home)
        self._stamp_at = 0.0

    # -- life cycle ---------------------------------------------------------------------------
    def bind(self) -> bool:
        """Take the home's guard lock and the socket; False when another server holds the lock."""
        fd = os.open(os.path.join(self.control, layout.GUARD_SERVER_LOCK), os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            # a record lock too, whose holder the hook can ask the kernel for (F_GETLK): how it
            # tells this server's socket from one planted in its place (resident/client.py)
            fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(fd)
            return False
        self._lock_fd = fd
        self._warm()
        tmp = os.path.join(self.control, f".{layout.GUARD_SOCKET}.{os.getpid()}")
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        dirfd = os.open(self.control, os.O_RDONLY | os.O_DIRECTORY)
        try:
            # bound through /proc/self/fd: a home's path may be longer than AF_UNIX allows
            old = os.umask(0o177)
            try:
                sock.bind(f"/proc/self/fd/{dirfd}/{os.path.basename(tmp)}")
            finally:
                os.umask(old)
            sock.listen(512)
            os.rename(tmp, self.path)     # atomic: a stale socket is replaced, never missing
        finally:
            os.close(dirfd)
        self._ino = os.stat(self.path).st_ino
        sock.setblocking(False)
        self._sock = sock
        self._publish_for_walls()
        return True

    def _publish_for_walls(self) -> None:
        try:
            walls.publish(self.control)
        except OSError as exc:
            self.log(f"the walls cannot reach this server: {exc}")

    def _warm(self) -> None:
        """Load the core and the policy before the first caller waits for them."""
        probe = ToolCall(tool="Bash", command="true", raw={"command": "true"})
        with contextlib.suppress(Exception):
            Guard(home=self.home, agent=True).check(probe, self.home, act=False, audit=False)
        if self.writes_check is not None:
            with contextlib.suppress(Exception):
                self.writes_check()
        self._stamp = code_stamp()
        self._stamp_at = time.monotonic()

    def serve(self) -> None:
        """One thread for all callers (and the journal's): a burst of calls on a loaded machine
        is answered in order of arrival, not held up by threads queueing for the interpreter."""
        assert self._sock is not None
        self._sel.register(self._sock, selectors.EVENT_READ, None)
        self._sel.register(self._wake_r, selectors.EVENT_READ, None)
        checked = 0.0
        while not self.stopping:
            for key, mask in self._sel.select(timeout=0.5):
                if key.fileobj is self._sock:
                    self._accept()
                elif key.fileobj == self._wake_r:
                    self._finished()
                else:
                    self._io(key.data, mask)
            now = time.monotonic()
            if now - checked >= 0.5:
                checked = now
                if self.should_stop():
                    break
                for conn in [c for c in self._conns.values() if now - c.born > READ_S]:
                    self._drop(conn)
        self.close()

    def should_stop(self) -> bool:
        if self.parent is not None and os.getppid() != self.parent:
            return True
        try:
            return os.stat(self.path).st_ino != self._ino
        except OSError:
            return True

    def stop_soon(self) -> None:
        """End serve() from a signal handler: a flag and a byte on the wake pipe, no lock (an
        Event's set() there could wait forever for the lock the interrupted main thread holds)."""
        self.stopping = True
        with contextlib.suppress(OSError):
            os.write(self._wake_w, b"x")

    def close(self) -> None:
        self.stopping = True
        for conn in list(self._conns.values()):
            self._drop(conn)
        if self._sock is not None:
            walls.withdraw(self.control, self._ino)
            with contextlib.suppress(KeyError, ValueError):
                self._sel.unregister(self._sock)
            self._sock.close()
            self._sock = None
        if self._lock_fd is not None:
            os.close(self._lock_fd)
            self._lock_fd = None

    # -- connections --------------------------------------------------------------------------
    def _accept(self) -> None:
        assert self._sock is not None
        while True:
            try:
                sock, _ = self._sock.accept()
            except (BlockingIOError, InterruptedError):
                return
            except OSError as exc:
                self.log(f"accept: {exc}")
                return
            sock.setblocking(False)
            conn = Conn(sock)
            self._conns[sock.fileno()] = conn
            conn.pid, uid, _gid = _PEERCRED.unpack(sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED,
                                                                   _PEERCRED.size))
            if uid != os.getuid():
                self._reply(conn, DECLINED_ANSWER)
                continue
            self._sel.register(sock, selectors.EVENT_READ, conn)

    def _io(self, conn: Conn, mask: int) -> None:
        try:
            if mask & selectors.EVENT_WRITE:
                self._flush(conn)
                return
            while True:
                chunk = conn.sock.recv(1 << 20)
                if not chunk:
                    break
                conn.size += len(chunk)
                if conn.size > MAX_REQUEST:
                    self._drop(conn)
                    return
                conn.inbox.append(chunk)
        except (BlockingIOError, InterruptedError):
            return
        except OSError:
            self._drop(conn)
            return
        self._sel.unregister(conn.sock)
        records: list[Entry] = []
        try:
            answer = self._answer(b"".join(conn.inbox), records, conn.pid)
        except Exception as exc:  # never a traceback into nowhere: the caller decides alone
            self.log(f"{type(exc).__name__}: {exc}")
            self._drop(conn)
            return
        conn.inbox = []
        self.journal.submit(records, (conn, answer))

    def _finished(self) -> None:
        with contextlib.suppress(OSError):
            while os.read(self._wake_r, 4096):
                pass
        while self.journal.finished:
            conn, answer = self.journal.finished.popleft()
            if conn.sock.fileno() in self._conns:
                self._reply(conn, answer)

    def _reply(self, conn: Conn, answer: bytes) -> None:
        conn.outbox = answer
        self._flush(conn)

    def _flush(self, conn: Conn) -> None:
        try:
            while conn.outbox:
                n = conn.sock.send(conn.outbox)
                conn.outbox = conn.outbox[n:]
        except (BlockingIOError, InterruptedError):
            key = self._sel.get_map().get(conn.sock.fileno())
            if key is None:
                self._sel.register(conn.sock, selectors.EVENT_WRITE, conn)
            return
        except OSError:
            pass
        self._drop(conn)

    def _drop(self, conn: Conn) -> None:
        fd = conn.sock.fileno()
        if fd >= 0:
            with contextlib.suppress(KeyError, ValueError):
                self._sel.unregister(conn.sock)
            self._conns.pop(fd, None)
        conn.sock.close()

    # -- one call -----------------------------------------------------------------------------
    def _answer(self, request: bytes, records: list[Entry], pid: int = 0) -> bytes:
        """The answer to one request from process `pid`; its audit records go to `records`
        (committed before the answer is sent)."""
        fields = wire.unpack(request, 5)
        if fields is None:
            return DECLINED_ANSWER
        argv_b, cwd_b, env_b, package, data = fields
        if package != self.package or any(t in env_b for t in _SELFTESTS) or not cwd_b.startswith(b"/"):
            return DECLINED_ANSWER
        if self.stopping or self.code_changed():
            self.stopping = True
            return DECLINED_ANSWER
        argv = [os.fsdecode(a) for a in argv_b.split(b"\0")] if argv_b else []
        env = wire.env_of(env_b)
        claimed = env.get("ZEN_JOB_ID")
        if argv[:1] == ["turn"]:
            # a turn signal is written only for a caller known to run under the job's own pane
            if self.turns is None or not claimed or self.callers.runs_under(claimed, pid) is not True:
                return DECLINED_ANSWER
            self.turns(argv[1:], data, env, pid)
            return wire.pack(wire.ALLOW, b"", b"")
        if claimed:
            # None: no agent of that job on record here (not started yet, or remote): nothing to check
            if self.callers.runs_under(claimed, pid) is False:
                # finding M14: the job is the caller's own say; believed only from under its pane
                return wire.pack(wire.BLOCK, b"", f"this call names job {claimed}, but it does not come "
                                 f"from that job's agent (its pane is not among the caller's parents); "
                                 f"blocked".encode())

        def recorder(ctx: Context | None, call: ToolCall, decision: Decision, job_id: str | None,
                     core: Decision | None = None) -> bool:
            records.append((ctx, call, decision, job_id, core))
            return True

        code, out, reason = self.judge(argv, data, os.fsdecode(cwd_b), env,
                                        self.writes_check, recorder=recorder)
        return wire.pack(wire.ALLOW if code == 0 else wire.BLOCK, out.encode("utf-8", "replace"),
                         reason.encode("utf-8", "replace"))

    def code_changed(self) -> bool:
        now = time.monotonic()
        if now - self._stamp_at < CODE_CHECK_S:
            return False
        self._stamp_at = now
        for f, mtime in self._stamp:
            try:
                if os.stat(f).st_mtime_ns != mtime:
                    return True
            except OSError:
                return True
        return False

    def log(self, message: str) -> None:
        line = f"{time.strftime('%Y-%m-%dT%H:%M:%S')} pid {os.getpid()}: {message}\n"
        with contextlib.suppress(OSError):
            fd = os.open(os.path.join(self.home, layout.LOGS, layout.GUARD_SERVER_LOG),
                         os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
            try:
                os.write(fd, line.encode("utf-8", "replace"))
            finally:
                os.close(fd)


def parse_args(argv: list[str]) -> dict[str, str]:
    opts: dict[str, str] = {}
    args = list(argv)
    while args:
        name, eq, value = args.pop(0).partition("=")
        if name not in ("--home", "--parent"):
            raise ValueError(f"unknown argument {name!r} (zen guard serve takes --home, --parent)")
        if not eq:
            if not args:
                raise ValueError(f"{name} needs a value")
            value = args.pop(0)
        opts[name[2:]] = value
    if "parent" in opts and not opts["parent"].isdigit():
        raise ValueError("--parent takes a process id")
    return opts


def main(argv: list[str], judge: Judge, writes_check: Callable[[], Any] | None = None,
         turns: Turns | None = None) -> int:
    """Serve until told to stop. 0 when it stopped or another server already serves the home."""
    try:
        opts = parse_args(argv)
    except ValueError as exc:
        sys.stderr.write(f"zen: {exc}\n")
        return 2          # a usage error, as everywhere in zen
    try:
        home = discover_home(os.getcwd(), opts.get("home"))
    except HomeError as exc:
        sys.stderr.write(f"zen: {exc}\n")
        return 1
    if home is None:
        sys.stderr.write("zen: no zen home here or above (give --home, or set ZEN_HOME)\n")
        return 1
    server = Server(home, judge, writes_check, int(opts["parent"]) if "parent" in opts else None, turns)
    if not server.bind():
        return 0
    for s in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(s, lambda *_: server.stop_soon())
    try:
        server.serve()
    finally:
        server.close()
    return 0

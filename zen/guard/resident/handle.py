"""The supervisor's handle on the resident guardian of its home (`zen guard serve`, server.py).

`Resident.ensure()` starts the server as a process of its own (and again when it has ended, at
most every RESTART_S), `stop()` ends it. Without one the hooks decide alone.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time

from zen.store import layout


class Resident:
    """The supervisor's resident guardian: `ensure()` starts it (and starts it again when it has
    ended, at most every RESTART_S), `stop()` ends it. Without one the hooks decide alone."""

    RESTART_S = 5.0

    def __init__(self, home: str, argv: list[str] | None = None) -> None:
        self.home = home
        self.argv = argv or [sys.executable, "-P", "-m", "zen", "guard", "serve", "--home", home,
                             "--parent", str(os.getpid())]
        self.proc: subprocess.Popen[bytes] | None = None
        self._started = -self.RESTART_S

    def ensure(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            return
        if time.monotonic() - self._started < self.RESTART_S:
            return
        self._started = time.monotonic()
        try:
            log = open(os.path.join(self.home, layout.LOGS, layout.GUARD_SERVER_LOG), "ab")  # noqa: SIM115
        except OSError:
            log = None
        try:
            self.proc = subprocess.Popen(self.argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                         stderr=log or subprocess.DEVNULL, start_new_session=True)
        except OSError:
            self.proc = None
        finally:
            if log is not None:
                log.close()

    def stop(self) -> None:
        proc, self.proc = self.proc, None
        if proc is None or proc.poll() is not None:
            return
        proc.terminate()
        try:
            proc.wait(timeout=3)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()

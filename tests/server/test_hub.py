"""The server hub's stop(): what uvicorn's exit handler calls on SIGINT / SIGTERM."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.helpers import REPO_ROOT

# A fresh hub stopped again and again on the main thread while a 5 kHz signal handler stops the
# current one too: what a second Ctrl-C during the first stop does, many thousand times over.
SIGNAL_HAMMER = """
import signal, sys, time
from pathlib import Path
from zen.server.hub import Hub
from zen.store.home import Home
home = Home(Path(sys.argv[1]))
current = [Hub(home)]
signal.signal(signal.SIGALRM, lambda *_: current[0].stop())
signal.setitimer(signal.ITIMER_REAL, 0.0002, 0.0002)
stopped, end = 0, time.monotonic() + 2
while time.monotonic() < end:
    current[0] = Hub(home)
    current[0].stop()
    stopped += current[0].stopping
signal.setitimer(signal.ITIMER_REAL, 0)
print(stopped)
"""


def test_a_second_stop_from_a_signal_inside_the_first_never_hangs_or_fails(tmp_path: Path) -> None:
    """stop() sets a threading.Event, whose set() holds a lock; a signal handler that calls stop()
    again on the same thread, inside that set(), waited for that lock for good (or recursed until
    the interpreter died). Only the first call may set the Event: the test fails on a hub without it."""
    r = subprocess.run([sys.executable, "-c", SIGNAL_HAMMER, str(tmp_path)], cwd=REPO_ROOT,
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr[-2000:]
    assert int(r.stdout) > 100, r.stdout

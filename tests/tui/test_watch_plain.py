"""`zen watch --plain` piped into a log: the table once, then one line per change of state."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
from pathlib import Path

from tests.helpers import REPO_ROOT, wait_until, zen
from tests.supervisor.util import dispatch_sim
from tests.tui.conftest import Supervisors


def test_plain_watch_logs_each_change_and_who_needs_you(zh: Path, sups: Supervisors, tmp_path: Path) -> None:
    sups.start()
    proc = subprocess.Popen([sys.executable, "-m", "zen", "watch", "--plain"], cwd=REPO_ROOT,
                            env={**os.environ, "ZEN_HOME": str(zh)}, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    lines: list[str] = []

    def read() -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            lines.append(line.rstrip("\n"))

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    try:
        wait_until(lambda: any(ln.endswith("· 0 working") for ln in lines), timeout=30, message="the first table")
        job = dispatch_sim(zh, tmp_path, "asker", [{"say": "hello"}, {"ask": "Proceed with the migration?"},
                                                   {"exit": 0}])
        wait_until(lambda: any("asker" in ln and "NEEDS YOU" in ln for ln in lines), timeout=30,
                   message="the question logged")
        needs = next(ln for ln in lines if "NEEDS YOU" in ln)
        assert f"asker ({job}): working -> waiting (question)  NEEDS YOU  Proceed with the migration?" in needs
        assert zen("send", job, "yes").returncode == 0
        wait_until(lambda: any("asker" in ln and "-> harvested" in ln for ln in lines), timeout=30,
                   message="the end logged")
        changes = [ln.split(": ", 1)[1] for ln in lines if f"({job})" in ln]
        assert changes[0].startswith(("new -> pending", "new -> queued", "new -> starting", "new -> working"))
        assert any(c.startswith("working -> waiting (question)") for c in changes)
        assert any(c.startswith("waiting (question) -> working") for c in changes)
    finally:
        proc.send_signal(signal.SIGINT)
        code = proc.wait(timeout=10)
    assert proc.stderr is not None
    err = proc.stderr.read()
    assert code == 0, err
    assert "Traceback" not in err

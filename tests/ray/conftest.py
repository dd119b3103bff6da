"""One real Ray cluster (head + one more node, 127.0.0.1 only, usage stats off) for the whole
test session, started on first use and stopped at the end (tests/ray/cluster.py).

The Ray tests are marked `ray` and run in their own serial pytest invocation (`make test-ray`,
part of `make test`): one cluster per session, never one per xdist worker. A run whose `-m` does
not ask for `ray` deselects them. Ray comes with the optional extra (`pip install -e '.[ray]'`,
which `make install` does); without it they skip and say so.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.helpers import REPO_ROOT

HERE = Path(__file__).parent
START_TIMEOUT_S = 180


def _importable() -> bool:
    try:
        import importlib.util

        return importlib.util.find_spec("ray") is not None
    except (ImportError, ValueError):
        return False


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    ours = [i for i in items if HERE in Path(str(i.fspath)).parents and i.get_closest_marker("ray")]
    if not ours:
        return
    if "ray" not in (config.getoption("markexpr") or ""):
        keep = [i for i in items if i not in ours]
        config.hook.pytest_deselected(items=ours)
        items[:] = keep
        return
    if not _importable():
        skip = pytest.mark.skip(reason="ray is not installed: pip install -e '.[ray]' (make install does it)")
        for item in ours:
            item.add_marker(skip)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class RayCluster:
    address: str          # the job API, http://127.0.0.1:PORT
    proc: subprocess.Popen[str]
    tmp: Path
    env: dict[str, str]   # the environment the nodes (and so every turn's entrypoint) run with

    def stop(self) -> None:
        if self.proc.poll() is None:
            with contextlib.suppress(OSError):
                self.proc.stdin.close()  # type: ignore[union-attr]
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(60)
            except subprocess.TimeoutExpired:
                pass
        # whatever the shutdown left (its own session: raylets, GCS, dashboard, workers)
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.proc.pid, signal.SIGKILL)
        shutil.rmtree(self.tmp, ignore_errors=True)


def start_cluster() -> RayCluster:
    tmp = Path(tempfile.mkdtemp(prefix="zr", dir="/tmp"))   # short: Ray's socket paths have a limit
    (tmp / "home").mkdir()
    (tmp / "ray").mkdir()
    bin_dir = str(Path(sys.executable).parent)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ZEN_", "RAY_", "TMUX"))}
    env.update({
        "HOME": str(tmp / "home"), "TMPDIR": str(tmp), "RAY_TMPDIR": str(tmp),
        "PATH": bin_dir + os.pathsep + env.get("PATH", ""), "PYTHONPATH": str(REPO_ROOT),
        "RAY_USAGE_STATS_ENABLED": "0", "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0",
        "GIT_CONFIG_NOSYSTEM": "1", "GIT_AUTHOR_NAME": "zen test", "GIT_AUTHOR_EMAIL": "test@zen.invalid",
        "GIT_COMMITTER_NAME": "zen test", "GIT_COMMITTER_EMAIL": "test@zen.invalid",
    })
    port = free_port()
    with open(tmp / "cluster.log", "w") as err:
        proc = subprocess.Popen([sys.executable, "-m", "tests.ray.cluster", str(tmp / "ray"), str(port)],
                                cwd=REPO_ROOT, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                stderr=err, text=True, start_new_session=True)
    cluster = RayCluster(f"http://127.0.0.1:{port}", proc, tmp, env)
    import selectors

    sel = selectors.DefaultSelector()
    sel.register(proc.stdout, selectors.EVENT_READ)  # type: ignore[arg-type]
    if not sel.select(START_TIMEOUT_S):
        log = (tmp / "cluster.log").read_text()[-3000:]
        cluster.stop()
        raise RuntimeError(f"the Ray cluster did not start in {START_TIMEOUT_S}s:\n{log}")
    line = proc.stdout.readline()  # type: ignore[union-attr]
    if not line:
        log = (tmp / "cluster.log").read_text()[-3000:]
        cluster.stop()
        raise RuntimeError(f"the Ray cluster failed to start:\n{log}")
    info = json.loads(line)
    cluster.address = info["address"]
    return cluster


@pytest.fixture(scope="session")
def ray_cluster() -> Iterator[RayCluster]:
    cluster = start_cluster()
    try:
        yield cluster
    finally:
        cluster.stop()

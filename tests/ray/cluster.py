"""A real two-node Ray cluster on 127.0.0.1, for the tests and bench/ray.py.

    cluster = start_cluster()     # head + one more node, the job API on 127.0.0.1:PORT
    ...
    cluster.stop()                # both nodes and every process they started

Run as its own process (`python -m tests.ray.cluster TMPDIR DASHBOARD_PORT`, which start_cluster
does): head and one more node, each a real raylet with its own resources (`zen_slot` on both, and
`zen_node_head` / `zen_node_b` to pin a job to one), the dashboard's job API on
127.0.0.1:DASHBOARD_PORT. Ray's `cluster_utils.Cluster` (the multi-node helper of Ray's own test
suite) starts both nodes: `ray start` on Linux turns 127.0.0.1 into the host's outward address,
which this keeps away from (RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER=0 makes every node bind
loopback). Usage stats are off; one CPU and a small object store per node. The process prints
one JSON line when the job API answers, then runs until its stdin closes or it gets TERM, and
shuts both nodes down. Importing this module does not import Ray.
"""

from __future__ import annotations

import contextlib
import json
import os
import selectors
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]
NODE_MEMORY = 80 * 1024 * 1024
START_TIMEOUT_S = 180


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



# -- the cluster's own process -------------------------------------------------------------------

def main(tmpdir: str, dashboard_port: int) -> int:
    os.environ["RAY_USAGE_STATS_ENABLED"] = "0"
    os.environ["RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"] = "0"
    from ray.cluster_utils import Cluster  # only in the cluster's process, after the env it reads

    started = time.monotonic()
    cluster = Cluster(initialize_head=True, shutdown_at_exit=True, head_node_args={
        "num_cpus": 1, "resources": {"zen_slot": 4, "zen_node_head": 1}, "include_dashboard": True,
        "dashboard_host": "127.0.0.1", "dashboard_port": dashboard_port, "object_store_memory": NODE_MEMORY,
        "temp_dir": tmpdir})
    cluster.add_node(num_cpus=1, resources={"zen_slot": 4, "zen_node_b": 1}, object_store_memory=NODE_MEMORY)
    cluster.wait_for_nodes()
    address = f"http://127.0.0.1:{dashboard_port}"
    deadline = time.monotonic() + 90
    while True:
        try:
            with urllib.request.urlopen(f"{address}/api/version", timeout=2) as r:
                if r.status == 200:
                    break
        except OSError:
            pass
        if time.monotonic() > deadline:
            cluster.shutdown()
            return 1
        time.sleep(0.2)
    done = threading.Event()
    signal.signal(signal.SIGTERM, lambda *a: done.set())
    threading.Thread(target=lambda: (sys.stdin.read(), done.set()), daemon=True).start()
    print(json.dumps({"address": address, "gcs": cluster.address, "started_s": round(time.monotonic() - started, 1)}),
          flush=True)
    done.wait()
    cluster.shutdown()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], int(sys.argv[2])))

"""A real two-node Ray cluster on 127.0.0.1, for the tests (run as its own process):

    python -m tests.ray.cluster TMPDIR DASHBOARD_PORT

Head and one more node, each a real raylet with its own resources (`zen_slot` on both, and
`zen_node_head` / `zen_node_b` to pin a job to one), the dashboard's job API on
127.0.0.1:DASHBOARD_PORT. Ray's `cluster_utils.Cluster` (the multi-node helper of Ray's own test
suite) starts both nodes: `ray start` on Linux turns 127.0.0.1 into the host's outward address,
which this keeps away from (RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER=0 makes every node bind
loopback). Usage stats are off. Prints one JSON line when the job API answers, then runs until
its stdin closes or it gets TERM, and shuts both nodes down.
"""

from __future__ import annotations

import json
import os
import signal
import sys
import threading
import time
import urllib.request

os.environ["RAY_USAGE_STATS_ENABLED"] = "0"
os.environ["RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"] = "0"

# after the environment it reads at import
from ray.cluster_utils import Cluster

NODE_MEMORY = 80 * 1024 * 1024


def main(tmpdir: str, dashboard_port: int) -> int:
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

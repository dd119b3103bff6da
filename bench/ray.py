"""Turns on a Ray cluster (DESIGN 14): `zen dispatch` -> the agent running on a node, as a ratio
to a bare `ray job submit` of a no-op to the same cluster in the same run (target <= 1.5x).

zen's figure runs from the moment `zen dispatch` starts to the worker's `remote.started` (the
agent's process is running on the node: its timestamp is the worker's clock, the same machine
here). It includes the supervisor's pickup, preflight, the worktree, the push of the base commit,
the submission, Ray starting the driver, and `zen remote-turn` fetching the lane and making the
worktree. The baseline is `ray job submit --address URL --no-wait -- sh -c 'date +%s.%N > FILE'`, from
the moment it starts to the time that no-op entrypoint wrote: Ray's own CLI, the submission and
the driver starting the entrypoint, i.e. a bare Ray job's "dispatch -> running".

A real two-node cluster on 127.0.0.1 (tests/ray/cluster.py), stopped at the end.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

# run as a script, this folder comes first on sys.path, where this file would pose as Ray itself
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.common import PY, bench_env, make_home, p50, row, zen  # noqa: E402 (after the path fix)
from zen.core.ids import parse_iso  # noqa: E402

RUNS = 5
TURN_TIMEOUT_S = 120


def _started_at(home: Path, job: str, deadline: float) -> float:
    path = home / "jobs" / job / "events.jsonl"
    while time.monotonic() < deadline:
        if path.exists():
            for line in path.read_text().splitlines():
                ev = json.loads(line)
                if ev.get("type") == "remote.started":
                    return parse_iso(str(ev.get("worker_ts") or ev["ts"])).timestamp()
        time.sleep(0.02)
    raise RuntimeError(f"job {job} never reached remote.started")


def _dispatch_to_running(home: Path, env: dict[str, str], n: int) -> float:
    t0 = time.time()
    r = zen("dispatch", f"bench remote {n}", "--name", f"remote-{n}", "--lane", "app", "--agent", "cmd",
            "--cmd", "true", env=env)
    return _started_at(home, r.stdout.strip(), time.monotonic() + TURN_TIMEOUT_S) - t0


def _submit_to_running(ray_cli: str, address: str, env: dict[str, str], stamp: Path) -> float:
    t0 = time.time()
    subprocess.run([ray_cli, "job", "submit", "--address", address, "--no-wait", "--", "sh", "-c",
                    f"date +%s.%N > {stamp}"],
                   env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    deadline = time.monotonic() + TURN_TIMEOUT_S
    while time.monotonic() < deadline:
        text = stamp.read_text().strip() if stamp.exists() else ""
        if text:
            return float(text) - t0
        time.sleep(0.02)
    raise RuntimeError("the bare Ray job never ran")


def run() -> list[dict]:
    try:
        from tests.ray.cluster import start_cluster  # the test suite's cluster launcher; needs ray
    except ImportError as exc:
        return [row("ray: dispatch -> agent running / ray job submit", 0, "x", "<= 1.5", False,
                    f"not available: {exc}")]
    ray_cli = str(Path(PY).parent / "ray")
    cluster = start_cluster()
    sup = None
    try:
        with bench_env() as env:
            home, _repo, env = make_home(env)
            remote = Path(env["BENCH_TMP"]) / "remote.git"
            subprocess.run(["git", "init", "-q", "--bare", str(remote)], check=True)
            zen("lane", "set", "app", "--executor", "ray", "--ray-address", cluster.address, "--remote", str(remote),
                env=env)
            cfg = home / "zen.yaml"
            cfg.write_text(cfg.read_text().replace("tick: 0.25s", "tick: 0.05s"))
            sup = subprocess.Popen([PY, "-m", "zen", "supervise"], env=env, stdout=subprocess.DEVNULL,
                                   stderr=subprocess.DEVNULL)
            ray_env = {**cluster.env, "RAY_API_SERVER_ADDRESS": cluster.address}
            stamps = Path(env["BENCH_TMP"])
            _dispatch_to_running(home, env, 0)  # warm: the first driver on each node pays for imports
            _submit_to_running(ray_cli, cluster.address, ray_env, stamps / "stamp-0")
            base, ours = [], []
            for n in range(1, RUNS + 1):
                base.append(_submit_to_running(ray_cli, cluster.address, ray_env, stamps / f"stamp-{n}"))
                ours.append(_dispatch_to_running(home, env, n))
    finally:
        if sup is not None:
            sup.terminate()
            sup.wait(20)
        cluster.stop()
    ratio = p50(ours) / p50(base)
    return [row("ray: dispatch -> agent running on a node / ray job submit of a no-op", ratio, "x", "<= 1.5",
                ratio <= 1.5, f"zen {p50(ours):.2f} s, ray job submit -> running {p50(base):.2f} s (p50 of {RUNS})")]


if __name__ == "__main__":
    from bench.run import print_rows

    print_rows(run())

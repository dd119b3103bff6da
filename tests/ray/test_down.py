"""A lane whose Ray cluster does not answer (no Ray needed: nothing listens at its address):
`zen preflight` says so in one line, and its tasks wait in the queue with that reason, never
failed and never lost, until the cluster answers or a human cancels them."""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path

from tests.helpers import wait_until, zen, zen_json
from tests.ray.cluster import free_port
from tests.supervisor.conftest import Supervisors, make_fast
from tests.supervisor.util import dispatch_cmd, gap_free, snap, types


def test_a_cluster_that_is_down_fails_preflight_and_its_tasks_wait_with_the_reason(
        home: Path, git_repo: Path, tmp_path: Path) -> None:
    remote = tmp_path / "remote.git"
    subprocess.run(["git", "init", "-q", "--bare", str(remote)], check=True)
    address = f"127.0.0.1:{free_port()}"
    r = zen("lane", "add", "app", str(git_repo), "--executor", "ray", "--ray-address", address,
            "--remote", str(remote))
    assert r.returncode == 0, r.stderr
    make_fast(home)

    r = zen("preflight")
    assert r.returncode == 1
    line = next(ln for ln in r.stdout.splitlines() if "ray cluster" in ln)
    assert f"cannot reach the Ray cluster at http://{address}" in line and "wait" in line
    r = zen("preflight", "--json")
    assert r.returncode == 1
    checks = {c["check"]: c for c in json.loads(r.stdout)["checks"]}
    assert checks["lane app ray cluster"]["status"] == "FAIL"

    sups = Supervisors(home, tmp_path)
    try:
        sups.start()
        job = dispatch_cmd("echo never", "waits")
        s = wait_until(lambda: (x := snap(home, job)).reason and x, timeout=30, message="a reason to wait")
        assert s.state.value == "queued" and s.reason.startswith("waits for its Ray cluster")
        assert address in s.reason
        time.sleep(1.0)   # a few supervisor passes later: still one record of the outage, no failure
        t = types(home, job)
        assert t.count("preflight.failed") == 1 and "job.failed" not in t and "remote.submit" not in t
        assert "waits for its Ray cluster" in zen("status").stdout
        r = zen("cancel", job)
        assert r.returncode == 0, r.stderr
        assert snap(home, job).state.value == "cancelled" and gap_free(home, job)
    finally:
        sups.close()


def test_lane_set_moves_a_lane_to_ray_and_back_and_refuses_what_cannot_work(home: Path, git_repo: Path,
                                                                              tmp_path: Path) -> None:
    assert zen("lane", "add", "app", str(git_repo)).returncode == 0
    r = zen("lane", "set", "app", "--executor", "ray", "--ray-address", "127.0.0.1:8265")
    assert r.returncode == 1 and "--remote" in r.stderr and len(r.stderr.strip().splitlines()) == 1
    r = zen("lane", "set", "app", "--executor", "ray", "--ray-address", "127.0.0.1:8265", "--remote",
            str(tmp_path / "nothing.git"))
    assert r.returncode == 1 and "is not a git repository" in r.stderr
    remote = tmp_path / "remote.git"
    subprocess.run(["git", "init", "-q", "--bare", str(remote)], check=True)
    r = zen("lane", "set", "app", "--executor", "ray", "--ray-address", "127.0.0.1:8265", "--remote", str(remote),
            "--ray-resource", "zen_slot=2")
    assert r.returncode == 0, r.stderr
    lane = zen_json("lane", "list")[0]
    assert lane["executor"] == {"kind": "ray", "address": "http://127.0.0.1:8265", "resources": {"zen_slot": 2.0}}
    assert lane["remote"] == str(remote)
    assert "ray http://127.0.0.1:8265" in zen("lane", "list").stdout
    assert "# Lanes:" in (home / "zen.yaml").read_text()   # the user's comments are kept
    r = zen("lane", "set", "app", "--executor", "local")
    assert r.returncode == 0 and "runs on local" in r.stdout
    assert "executor" not in zen_json("lane", "list")[0]
    assert zen("lane", "set", "app").returncode == 2
    r = zen("lane", "set", "app", "--executor", "slurm")
    assert r.returncode == 1 and "local or ray" in r.stderr

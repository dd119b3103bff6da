"""zen's Ray job client (zen/adapters/ray.py) against the real two-node cluster: what the
executor builds on. A submission id is taken once; logs, status and stop behave as relied on."""

from __future__ import annotations

import time
import uuid

import pytest

from tests.helpers import wait_until
from tests.ray.cluster import RayCluster, free_port
from zen.adapters.ray import AlreadySubmitted, RayJobs, RayUnreachable

pytestmark = pytest.mark.ray


def _sid() -> str:
    return f"t-{uuid.uuid4().hex[:8]}-1"


def test_a_job_runs_on_the_node_its_resources_name_and_its_id_is_taken_once(ray_cluster: RayCluster) -> None:
    with RayJobs(ray_cluster.address) as jobs:
        assert jobs.version()["ray_version"].startswith("2.60")
        sid = _sid()
        jobs.submit(sid, "echo out-$ZEN_T; exit 3", env={"ZEN_T": "x"}, resources={"zen_node_b": 1},
                    metadata={"zen_job": "t"})
        with pytest.raises(AlreadySubmitted):
            jobs.submit(sid, "echo second")
        job = wait_until(lambda: (j := jobs.status(sid)) is not None and j.ended and j, timeout=60,
                         message="the job to end")
        assert job.status == "FAILED" and job.exit_code == 3
        assert job.metadata == {"zen_job": "t"}
        assert "out-x" in jobs.logs(sid)
        assert "second" not in jobs.logs(sid)
        assert jobs.status("t-never-submitted-1") is None
        nodes = {n for n in [job.node_id] if n}
        assert nodes, "Ray says which node ran the job"


def test_stop_ends_a_running_job_and_its_children(ray_cluster: RayCluster, tmp_path) -> None:  # type: ignore[no-untyped-def]
    marker = tmp_path / "alive"
    with RayJobs(ray_cluster.address) as jobs:
        sid = _sid()
        jobs.submit(sid, f"sh -c 'while true; do touch {marker}; sleep 0.1; done' & wait")
        wait_until(lambda: (j := jobs.status(sid)) is not None and j.status == "RUNNING" and marker.exists(),
                   timeout=60, message="the job to run")
        assert jobs.stop(sid)
        job = wait_until(lambda: (j := jobs.status(sid)) is not None and j.ended and j, timeout=30,
                         message="the job to stop")
        assert job.status == "STOPPED"
        marker.unlink()
        time.sleep(0.5)
        assert not marker.exists(), "the job's child process survived the stop"


def test_a_cluster_that_is_not_there_is_a_sentence() -> None:
    port = free_port()
    with RayJobs(f"127.0.0.1:{port}", timeout_s=2) as jobs, pytest.raises(RayUnreachable) as err:
        jobs.version()
    assert f"127.0.0.1:{port}" in str(err.value) and "\n" not in str(err.value)

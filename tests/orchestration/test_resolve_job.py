"""What a user types to name a job, resolved on a real home (zen.orchestration.read.query.resolve_job):
the whole id, a unique prefix, a unique name; ambiguity and misses in one sentence."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers import one_line
from zen.core.ids import iso, utcnow
from zen.core.model import Task
from zen.errors import Ambiguous, NotFound
from zen.orchestration.intake.dispatch import dispatch
from zen.orchestration.read.query import resolve_job
from zen.store.home import Home
from zen.store.jobs import JobStore

A = "20270101T000000Z-build-aaaa"
B = "20270101T000001Z-build-bbbb"
C = "20270102T000000Z-deploy-cccc"


@pytest.fixture
def jobs(home: Path) -> Home:
    h = Home(home)
    store = JobStore(h)
    for job_id, name in ((A, "build"), (B, "build"), (C, "deploy")):
        store.create(Task.model_validate({"id": job_id, "name": name, "prompt": "p", "lane": "app",
                                          "created_at": iso(utcnow())}))
    return h


@pytest.mark.parametrize(("ref", "want"), [(A, A), (f"  {C}\n", C), ("20270102", C), ("20270101T000001", B),
                                           ("deploy", C)])
def test_an_id_a_unique_prefix_or_a_unique_name_names_one_job(jobs: Home, ref: str, want: str) -> None:
    assert resolve_job(jobs, ref) == want


@pytest.mark.parametrize("ref", ["build", "20270101"])
def test_a_name_or_prefix_two_jobs_share_is_ambiguous_and_lists_them(jobs: Home, ref: str) -> None:
    with pytest.raises(Ambiguous) as exc:
        resolve_job(jobs, ref)
    msg = str(exc.value)
    assert one_line(msg) and f"job {ref!r} is ambiguous" in msg and A in msg and B in msg and C not in msg


@pytest.mark.parametrize(("ref", "msg"), [("nothing", "no job matches 'nothing' (zen status lists them)"),
                                          ("   ", "no job given")])
def test_a_miss_says_where_to_look(jobs: Home, ref: str, msg: str) -> None:
    with pytest.raises(NotFound) as exc:
        resolve_job(jobs, ref)
    assert str(exc.value) == msg


def test_a_task_still_in_the_spool_is_not_a_job_yet(lane: Path, jobs: Home) -> None:
    task = dispatch(jobs, {"prompt": "waiting", "name": "waiting"})
    with pytest.raises(NotFound):
        resolve_job(jobs, task.id)
    with pytest.raises(NotFound):
        resolve_job(jobs, "waiting")


def test_a_job_folder_without_its_task_file_is_not_a_job(jobs: Home) -> None:
    (jobs.jobs / "20270103T000000Z-stray-dddd").mkdir()
    with pytest.raises(NotFound):
        resolve_job(jobs, "20270103")


def test_many_candidates_are_cut_to_eight_in_the_sentence(home: Path) -> None:
    h = Home(home)
    store = JobStore(h)
    for i in range(10):
        store.create(Task.model_validate({"id": f"20270101T0000{i:02}Z-same-{i:04x}", "name": "same", "prompt": "p",
                                          "lane": "app", "created_at": iso(utcnow())}))
    with pytest.raises(Ambiguous) as exc:
        resolve_job(h, "same")
    assert str(exc.value).endswith(" ...") and str(exc.value).count("-same-") == 8

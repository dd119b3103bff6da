"""zen watch marks a job the anomaly watch flagged (issue 38), in every face that prints a row."""

from __future__ import annotations

from zen.core.model import JobSnapshot, JobStatus
from zen.tui.rows import JobView
from zen.tui.source import view_of


def test_a_flagged_job_reads_flagged_in_its_row_and_an_ordinary_one_does_not() -> None:
    snap = JobSnapshot(job="20261204T101500Z-loop-3fa9", name="loop", state=JobStatus.working,
                       anomalies=1, anomaly="the same call 9 times in a row")
    v = view_of(snap, None, "")
    assert v.state_text() == "working · anomaly" and v.anomaly == "the same call 9 times in a row"
    assert JobView(job="j", name="j", state="waiting", reason="idle", anomalies=3).state_text() == \
        "waiting (idle) · 3 anomalies"
    assert view_of(JobSnapshot(job="j", state=JobStatus.working), None, "").state_text() == "working"

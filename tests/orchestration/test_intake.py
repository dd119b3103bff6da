"""Intake in-process (zen.orchestration.intake.intake, DESIGN 3): spool/new to spool/cur to a job record,
in order, once; claims cut short by a crash finished on the next pass; entries that are not tasks
set aside under a free name with their reason, readable by `zen status`."""

from __future__ import annotations

import os
from pathlib import Path

from zen.core.ids import make_job_id
from zen.orchestration.intake.dispatch import dispatch
from zen.orchestration.intake.intake import Intake
from zen.store import spool
from zen.store.events import read_events_any
from zen.store.home import Home
from zen.store.jobs import JobStore, load_task_text


def intake(home: Path) -> Intake:
    h = Home(home)
    return Intake(h, JobStore(h))


def rejected(home: Path) -> dict[str, str]:
    return {e["file"]: e["reason"] for e in read_events_any(home / "logs" / "control.jsonl")
            if e.get("type") == "task.rejected"}


def test_waiting_tasks_become_queued_jobs_oldest_id_first_and_leave_spool_new(lane: Path, home: Path) -> None:
    h = Home(home)
    ids = [dispatch(h, {"prompt": f"task {i}", "name": f"t{i}"}).id for i in range(3)]
    got = intake(home).claim_new()
    assert got == sorted(ids)
    assert list((home / "spool" / "new").iterdir()) == []
    assert sorted(p.stem for p in (home / "spool" / "cur").iterdir()) == sorted(ids)
    store = JobStore(h)
    for job_id in ids:
        assert [e["type"] for e in store.events(job_id)] == ["task.received", "job.queued"]
        assert store.snapshot(job_id).state.value == "queued"


def test_a_second_pass_finds_nothing_new(lane: Path, home: Path) -> None:
    dispatch(Home(home), {"prompt": "once"})
    i = intake(home)
    assert len(i.claim_new()) == 1
    assert i.claim_new() == [] and i.unrecorded() == []


def test_recording_a_claimed_task_twice_makes_one_record(lane: Path, home: Path) -> None:
    h = Home(home)
    task = dispatch(h, {"prompt": "twice"})
    claimed = spool.claim(h, home / "spool" / "new" / f"{task.id}.yaml")
    assert claimed is not None
    i = intake(home)
    assert i.record(claimed) == task.id
    assert i.record(claimed) == task.id
    assert [e["type"] for e in JobStore(h).events(task.id)] == ["task.received", "job.queued"]


def test_a_task_claimed_but_not_recorded_before_a_crash_is_found_and_recorded(lane: Path, home: Path) -> None:
    h = Home(home)
    task = dispatch(h, {"prompt": "crashed in between"})
    assert spool.claim(h, home / "spool" / "new" / f"{task.id}.yaml") is not None   # then the crash
    i = intake(home)
    assert [p.stem for p in i.unrecorded()] == [task.id]
    assert i.record(i.unrecorded()[0]) == task.id
    assert i.unrecorded() == []


def test_a_claim_cut_short_between_link_and_unlink_is_finished_not_quarantined(lane: Path, home: Path) -> None:
    h = Home(home)
    task = dispatch(h, {"prompt": "half claimed"})
    src = home / "spool" / "new" / f"{task.id}.yaml"
    os.link(src, home / "spool" / "cur" / src.name)      # the link happened, the unlink did not
    i = intake(home)
    assert i.claim_new() == []
    assert not src.exists() and rejected(home) == {}
    [left] = i.unrecorded()
    assert i.record(left) == task.id


def test_a_cancelled_job_claimed_again_is_not_queued_again(lane: Path, home: Path) -> None:
    h = Home(home)
    task = dispatch(h, {"prompt": "cancel me"})
    i = intake(home)
    i.claim_new()
    JobStore(h).append(task.id, "job.cancelled", actor="human", reason="x")
    assert i.record(home / "spool" / "cur" / f"{task.id}.yaml") is None
    assert JobStore(h).snapshot(task.id).state.value == "cancelled"


def test_hidden_names_in_spool_new_are_left_alone(lane: Path, home: Path) -> None:
    hidden = home / "spool" / "new" / ".in-progress.yaml"
    hidden.write_text("not yet\n")
    assert intake(home).claim_new() == []
    assert hidden.exists() and rejected(home) == {}


def test_an_entry_that_is_not_yaml_named_is_set_aside_with_its_reason(home: Path) -> None:
    bad = home / "spool" / "new" / "notes.txt"
    bad.write_text("hello\n")
    intake(home).claim_new()
    assert not bad.exists()
    assert rejected(home) == {"notes.txt": "notes.txt is not named <id>.yaml"}
    assert spool.quarantined(Home(home)) == [("notes.txt", "notes.txt is not named <id>.yaml")]


def test_two_rejected_entries_of_one_name_both_survive_under_free_names(home: Path) -> None:
    h = Home(home)
    new = home / "spool" / "new"
    for content in ("first\n", "second\n"):
        (new / "junk.txt").write_text(content)
        intake(home).claim_new()
    q = home / "spool" / "quarantine"
    assert (q / "junk.txt").read_text() == "first\n" and (q / "junk.txt.1").read_text() == "second\n"
    assert [name for name, _ in spool.quarantined(h)] == ["junk.txt", "junk.txt.1"]


def test_a_task_file_with_a_model_error_is_quarantined_with_the_models_sentence(home: Path) -> None:
    job_id = make_job_id("broken")
    (home / "spool" / "new" / f"{job_id}.yaml").write_text(
        f"zen: 1\nid: {job_id}\nname: broken\nprompt: p\nlane: app\npriority: 9\ncreated_at: x\n")
    assert intake(home).claim_new() == []
    reason = rejected(home)[f"{job_id}.yaml"]
    assert reason.startswith(f"{job_id}.yaml: ") and "priority" in reason
    assert not JobStore(Home(home)).exists(job_id)


def test_a_quarantined_entry_without_its_reason_file_still_shows(home: Path) -> None:
    q = home / "spool" / "quarantine"
    q.mkdir(parents=True, exist_ok=True)
    (q / "orphan.yaml").write_text("x")
    assert spool.quarantined(Home(home)) == [("orphan.yaml", "(no reason recorded)")]


def _same_file(a: Path, b: Path) -> bool:
    return os.stat(a).st_ino == os.stat(b).st_ino


def test_a_task_zen_dispatch_wrote_is_recorded_as_a_link_of_its_claimed_file(lane: Path, home: Path) -> None:
    """Both writers of zen dispatch (the stdlib fast lane and the model's dump): task.yaml is the
    claimed spool file itself, not a second copy written and fsynced while git checks out."""
    from zen.orchestration.intake.enqueue import enqueue

    h = Home(home)
    quick = enqueue(h, {"prompt": "fast lane", "name": "quick"})
    assert quick is not None, "the fast lane took this plain task"
    model = dispatch(h, {"prompt": "model lane: 'quoted', ü, 🎉\n  and a second line", "name": "model"})
    assert sorted(intake(home).claim_new()) == sorted([quick["id"], model.id])
    store = JobStore(h)
    for job_id in (quick["id"], model.id):
        record = home / "jobs" / job_id / "task.yaml"
        assert _same_file(record, home / "spool" / "cur" / f"{job_id}.yaml")
        assert load_task_text(record.read_text(), "task.yaml").id == job_id
    assert store.task(model.id).prompt == "model lane: 'quoted', ü, 🎉\n  and a second line"


def test_a_hand_written_task_file_is_recorded_in_zens_form_not_linked(lane: Path, home: Path) -> None:
    h = Home(home)
    job_id = dispatch(h, {"prompt": "hand made", "name": "by-hand"}).id
    published = home / "spool" / "new" / f"{job_id}.yaml"
    published.write_text("# written by hand\n" + published.read_text())
    assert intake(home).claim_new() == [job_id]
    record = home / "jobs" / job_id / "task.yaml"
    assert not _same_file(record, home / "spool" / "cur" / f"{job_id}.yaml")
    assert "# written by hand" not in record.read_text()
    assert JobStore(h).task(job_id).prompt == "hand made"


def test_a_lost_task_yaml_of_a_recorded_job_is_made_again_on_restart(lane: Path, home: Path) -> None:
    h = Home(home)
    task = dispatch(h, {"prompt": "keep me"})
    claimed = spool.claim(h, home / "spool" / "new" / f"{task.id}.yaml")
    assert claimed is not None
    (home / "jobs" / task.id).mkdir(parents=True)   # a crash left the folder, not the record
    assert intake(home).unrecorded() == [claimed]
    assert intake(home).record(claimed) == task.id
    assert _same_file(home / "jobs" / task.id / "task.yaml", claimed)
    assert [e["type"] for e in JobStore(h).events(task.id)] == ["task.received", "job.queued"]

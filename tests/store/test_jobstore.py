"""zen.store.jobs.JobStore: a job's record is created once (even when a crash cut the first try
short), state.json is only a cache of events.jsonl (replayed, caught up, rebuilt when it cannot be
trusted), and finished jobs land in jobs/.index.json."""

from __future__ import annotations

import datetime
import json
from pathlib import Path

import pytest

from zen.core.model import Task
from zen.errors import NotFound
from zen.store import index, jobs
from zen.store.home import init_home
from zen.store.jobs import JobStore, dump_task, load_task_text
from zen.store.layout import EVENTS, STATE, TASK, Home


@pytest.fixture
def zh(tmp_path: Path) -> Home:
    home, _ = init_home(tmp_path / "zh")
    return home


@pytest.fixture
def js(zh: Home) -> JobStore:
    return JobStore(zh)


def _task(job_id: str = "20261201T000000Z-fix-0001", **kw: object) -> Task:
    fields: dict[str, object] = {"id": job_id, "name": "fix", "prompt": "Fix the bug.", "lane": "app",
                                 "agent": "sim", "created_at": "2026-12-01T00:00:00.000Z", "priority": 2}
    fields.update(kw)
    return Task(**fields)  # type: ignore[arg-type]


def _state_file(js: JobStore, job_id: str) -> dict:
    return json.loads((js.dir(job_id) / STATE).read_text())


# -- create -------------------------------------------------------------------------------------------

def test_create_records_the_task_received_and_queued_together(js: JobStore) -> None:
    task = _task()
    assert js.create(task) is True
    evs = js.events(task.id)
    assert [(e["seq"], e["type"]) for e in evs] == [(1, "task.received"), (2, "job.queued")]
    assert evs[0]["task"]["prompt"] == "Fix the bug." and evs[1]["priority"] == 2
    assert js.task(task.id) == task
    assert js.exists(task.id) and js.ids() == [task.id]


def test_create_twice_records_once(js: JobStore) -> None:
    task = _task()
    assert js.create(task) is True
    assert js.create(task) is False
    assert len(js.events(task.id)) == 2


def test_create_after_a_crash_between_task_and_events_finishes_the_record(js: JobStore) -> None:
    task = _task()
    d = js.dir(task.id)
    d.mkdir(parents=True)
    (d / TASK).write_text(dump_task(task))          # the crash came before any event
    assert js.create(task) is True
    assert [e["type"] for e in js.events(task.id)] == ["task.received", "job.queued"]


def test_create_never_rewrites_a_task_yaml(js: JobStore) -> None:
    first = _task(prompt="the first prompt")
    js.create(first)
    js.create(_task(prompt="a different prompt"))
    assert js.task(first.id).prompt == "the first prompt"


def _fresh_read(js: JobStore, job_id: str) -> Task:
    jobs._TASKS.clear()
    return js.task(job_id)


def test_the_task_create_keeps_is_what_reading_its_file_gives(js: JobStore, monkeypatch: pytest.MonkeyPatch) -> None:
    # a spool file's YAML gives a script a date and an int-looking timeout; task.yaml holds text
    spooled = load_task_text(
        "id: 20261201T000000Z-fix-0001\nname: fix\nprompt: \"Fix it \U0001F389\\n\"\nlane: app\ntimeout: 90\n"
        "created_at: '2026-12-01T00:00:00.000Z'\nscript:\n- {say: hi, when: 2026-12-01, n: ~}\n", "spool")
    assert spooled.script is not None and spooled.script[0]["when"] == datetime.date(2026, 12, 1)
    with monkeypatch.context() as m:
        m.setattr(jobs, "load_task_text", _no_parse)
        assert js.create(spooled) is True
        kept = js.task(spooled.id)                # no YAML parsed: the task create wrote
    read = _fresh_read(js, spooled.id)
    assert kept == read and kept.model_dump() == read.model_dump()
    assert kept.script == [{"say": "hi", "when": "2026-12-01", "n": None}] and kept.prompt == "Fix it 🎉\n"
    assert type(kept.timeout) is type(read.timeout)


def _no_parse(text: str, source: str) -> Task:
    raise AssertionError(f"{source} parsed again")


def test_a_task_yaml_already_there_is_what_task_gives_not_the_one_create_was_handed(js: JobStore) -> None:
    first = _task(prompt="the first prompt")
    d = js.dir(first.id)
    d.mkdir(parents=True)
    (d / TASK).write_text(dump_task(first))       # a crash came before any event
    jobs._TASKS.clear()
    assert js.create(_task(prompt="a different prompt")) is True
    assert js.task(first.id).prompt == "the first prompt"


def test_the_sim_script_is_kept_in_task_yaml_but_not_in_the_timeline(js: JobStore) -> None:
    task = _task(script=[{"say": "hello"}])
    js.create(task)
    received = js.events(task.id)[0]
    assert "script" not in received["task"]
    assert js.task(task.id).script == [{"say": "hello"}]


def test_a_job_with_no_task_yaml_is_not_a_job(js: JobStore, zh: Home) -> None:
    (zh.jobs / "stray").mkdir()
    (zh.jobs / "stray" / EVENTS).write_text("")
    assert js.ids() == [] and not js.exists("stray")
    with pytest.raises(NotFound, match=r"^job stray has no record$"):
        js.task("stray")


def test_ids_are_sorted_and_an_empty_home_has_none(tmp_path: Path) -> None:
    assert JobStore(Home(tmp_path / "nothing")).ids() == []
    home, _ = init_home(tmp_path / "zh")
    js = JobStore(home)
    ids = [f"20261201T00000{n}Z-job-000{n}" for n in (3, 1, 2)]
    for jid in ids:
        js.create(_task(jid))
    assert js.ids() == sorted(ids)


# -- snapshots --------------------------------------------------------------------------------------

def test_a_snapshot_is_the_replayed_timeline_and_is_saved_with_its_offset(js: JobStore) -> None:
    task = _task()
    js.create(task)
    snap = js.snapshot(task.id)
    assert snap.state == "queued" and snap.seq == 2 and snap.name == "fix" and snap.priority == 2
    saved = _state_file(js, task.id)
    assert saved["seq"] == 2
    assert saved["_offset"] == (js.dir(task.id) / EVENTS).stat().st_size


def test_a_snapshot_catches_up_with_new_events(js: JobStore) -> None:
    task = _task()
    js.create(task)
    js.snapshot(task.id)
    js.append(task.id, "worktree.created", path="/w", branch="zen/fix")
    js.append(task.id, "agent.spawned", session="s")
    snap = js.snapshot(task.id)
    assert snap.state == "working" and snap.seq == 4
    assert _state_file(js, task.id)["seq"] == 4


def test_write_false_leaves_state_json_alone(js: JobStore) -> None:
    task = _task()
    js.create(task)
    snap = js.snapshot(task.id, write=False)
    assert snap.seq == 2
    assert not (js.dir(task.id) / STATE).exists()


@pytest.mark.parametrize("damage", [
    "",                                    # emptied by a power loss
    "{not json",                           # half-written by something else
    '{"v": 1, "job": 5, "state": "nonsense"}',   # of another version
    "[]",
])
def test_a_damaged_state_json_is_replayed_from_the_timeline(js: JobStore, damage: str) -> None:
    task = _task()
    js.create(task)
    js.append(task.id, "worktree.created", path="/w")
    (js.dir(task.id) / STATE).write_text(damage)
    snap = js.snapshot(task.id)
    assert snap.state == "starting" and snap.seq == 3


def test_a_state_json_ahead_of_its_timeline_is_rebuilt(js: JobStore) -> None:
    # state.json read 3 events, then the timeline was replaced by a shorter one (a restore)
    task = _task()
    js.create(task)
    js.append(task.id, "worktree.created", path="/w")
    js.snapshot(task.id)
    events = js.dir(task.id) / EVENTS
    lines = events.read_bytes().splitlines(keepends=True)
    events.write_bytes(b"".join(lines[:2]))
    snap = js.snapshot(task.id)
    assert snap.state == "queued" and snap.seq == 2
    assert _state_file(js, task.id)["seq"] == 2


def test_a_state_json_that_does_not_line_up_with_the_timeline_is_rebuilt(js: JobStore) -> None:
    task = _task()
    js.create(task)
    js.snapshot(task.id)
    state = js.dir(task.id) / STATE
    data = json.loads(state.read_text())
    data["seq"] = 1                      # claims fewer events than its offset covers
    state.write_text(json.dumps(data))
    js.append(task.id, "worktree.created", path="/w")
    snap = js.snapshot(task.id)
    assert snap.seq == 3 and snap.state == "starting"


def test_rebuild_replays_everything_and_ignores_the_cache(js: JobStore) -> None:
    task = _task()
    js.create(task)
    js.snapshot(task.id)
    state = js.dir(task.id) / STATE
    data = json.loads(state.read_text())
    data["name"] = "a lie"
    state.write_text(json.dumps(data))
    assert js.snapshot(task.id).name == "a lie"          # the cache is trusted while it lines up
    assert js.rebuild(task.id).name == "fix"
    assert _state_file(js, task.id)["name"] == "fix"


def test_a_torn_last_event_does_not_move_the_snapshot(js: JobStore) -> None:
    task = _task()
    js.create(task)
    with (js.dir(task.id) / EVENTS).open("ab") as f:
        f.write(b'{"v":1,"seq":3,"type":"agent.spawned"')
    snap = js.snapshot(task.id)
    assert snap.seq == 2 and snap.state == "queued"
    js.append(task.id, "worktree.created", path="/w")
    assert js.snapshot(task.id).state == "starting"


def test_an_event_the_state_machine_forbids_is_recorded_but_does_not_move_the_state(js: JobStore) -> None:
    task = _task()
    js.create(task)
    js.append(task.id, "job.cancelled", by="human")
    js.append(task.id, "agent.spawned", session="late")   # cancelled is final
    snap = js.snapshot(task.id)
    assert snap.state == "cancelled" and snap.seq == 4


# -- the index of finished jobs ----------------------------------------------------------------------

def test_a_finished_job_is_put_in_the_index_with_its_offset(js: JobStore, zh: Home) -> None:
    task = _task()
    js.create(task)
    js.append(task.id, "job.cancelled", by="human")
    js.snapshot(task.id)
    rows = index.read(str(zh.jobs))
    assert rows[task.id]["offset"] == (js.dir(task.id) / EVENTS).stat().st_size
    assert rows[task.id]["row"]["state"] == "cancelled" and rows[task.id]["row"]["name"] == "fix"


def test_a_live_job_is_not_in_the_index(js: JobStore, zh: Home) -> None:
    task = _task()
    js.create(task)
    js.snapshot(task.id)
    assert task.id not in index.read(str(zh.jobs))


def test_reindex_puts_finished_jobs_the_index_lacks_and_only_those(js: JobStore, zh: Home) -> None:
    done, live = _task("20261201T000001Z-done-0001"), _task("20261201T000002Z-live-0002")
    for t in (done, live):
        js.create(t)
    js.append(done.id, "job.cancelled", by="human")
    js.snapshot(done.id)
    Path(index.path(str(zh.jobs))).unlink()              # a home from before the index
    assert js.reindex() == 1
    assert set(index.read(str(zh.jobs))) == {done.id}
    assert js.reindex() == 0                              # up to date: nothing to put


def test_reindex_refreshes_a_row_whose_timeline_grew(js: JobStore, zh: Home) -> None:
    task = _task()
    js.create(task)
    js.append(task.id, "job.cancelled", by="human")
    js.snapshot(task.id)
    js.append(task.id, "notify.sent", reason="ended")     # the timeline grew after the row
    assert js.reindex() == 1
    assert index.read(str(zh.jobs))[task.id]["offset"] == (js.dir(task.id) / EVENTS).stat().st_size


def test_snapshots_of_every_job(js: JobStore) -> None:
    ids = ["20261201T000001Z-a-0001", "20261201T000002Z-b-0002"]
    for jid in ids:
        js.create(_task(jid))
    assert [s.job for s in js.snapshots()] == ids


def test_a_state_json_of_another_job_is_not_taken_for_this_ones(js: JobStore) -> None:
    # a job folder copied by hand carries the other job's state.json
    task = _task()
    js.create(task)
    (js.dir(task.id) / STATE).write_text(json.dumps({"v": 1, "job": "20261130T000000Z-other-0009",
                                                     "state": "harvested", "seq": 0}))
    snap = js.snapshot(task.id)
    assert snap.job == task.id and snap.state == "queued" and snap.seq == 2
    assert _state_file(js, task.id)["job"] == task.id

"""The lean readers (zen.store.readers, zen.store.snapshots, zen.store.index): stdlib-only reads
that `zen status` and the guard hook use. They must say what the full store says: the same
snapshot as JobStore, an index row only while the timeline has not grown, lanes and task fields
as ruamel would read them, and nothing at all (never a traceback) for damaged files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from zen.core.model import Task
from zen.store import index, readers, snapshots, spool
from zen.store.config import Config, edit_config
from zen.store.home import init_home
from zen.store.jobs import JobStore
from zen.store.layout import EVENTS, STATE, Home


@pytest.fixture
def zh(tmp_path: Path) -> Home:
    home, _ = init_home(tmp_path / "zh")
    return home


def _job(js: JobStore, n: int, **kw: object) -> str:
    fields: dict[str, object] = {"id": f"20261201T00000{n}Z-job-000{n}", "name": f"job-{n}", "prompt": "p",
                                 "lane": "app", "created_at": "2026-12-01T00:00:00.000Z"}
    fields.update(kw)
    task = Task(**fields)  # type: ignore[arg-type]
    js.create(task)
    return task.id


def _full(js: JobStore, job_id: str) -> dict:
    return js.snapshot(job_id, write=False).model_dump(mode="json")


# -- snapshots agree with the store ------------------------------------------------------------------

def test_the_lean_state_is_the_stores_snapshot_with_and_without_state_json(zh: Home) -> None:
    js = JobStore(zh)
    jid = _job(js, 1, domain="docs")
    js.append(jid, "worktree.created", path="/w", branch="zen/job-1")
    js.append(jid, "agent.spawned", session="s")
    assert snapshots.state(str(zh.jobs), jid) == _full(js, jid)     # no state.json yet: replayed
    js.snapshot(jid)
    assert snapshots.state(str(zh.jobs), jid) == _full(js, jid)     # from state.json
    js.append(jid, "turn.waiting", reason="question")
    assert snapshots.state(str(zh.jobs), jid) == _full(js, jid)     # state.json caught up with new lines
    assert snapshots.state(str(zh.jobs), jid)["state"] == "waiting"


def test_a_lean_state_never_writes(zh: Home) -> None:
    js = JobStore(zh)
    jid = _job(js, 1)
    snapshots.state(str(zh.jobs), jid)
    assert not (zh.job_dir(jid) / STATE).exists()


@pytest.mark.parametrize("damage", ["", "{", "[]", '{"v": 1, "job": "someone-else", "state": "queued"}',
                                    '{"v": 1, "state": "exploded"}'])
def test_a_damaged_state_json_is_replayed_not_believed(zh: Home, damage: str) -> None:
    js = JobStore(zh)
    jid = _job(js, 1)
    (zh.job_dir(jid) / STATE).write_text(damage)
    assert snapshots.state(str(zh.jobs), jid) == _full(js, jid)


def test_a_state_json_ahead_of_a_cut_timeline_is_replayed(zh: Home) -> None:
    js = JobStore(zh)
    jid = _job(js, 1)
    js.append(jid, "worktree.created", path="/w")
    js.snapshot(jid)
    events = zh.job_dir(jid) / EVENTS
    events.write_bytes(b"".join(events.read_bytes().splitlines(keepends=True)[:2]))
    got = snapshots.state(str(zh.jobs), jid)
    assert got is not None and got["seq"] == 2 and got["state"] == "queued"


def test_a_folder_without_task_yaml_has_no_state(zh: Home) -> None:
    (zh.jobs / "20261201T000009Z-stray-0009").mkdir()
    assert snapshots.state(str(zh.jobs), "20261201T000009Z-stray-0009") is None


def test_ids_skip_hidden_names_and_the_index(zh: Home) -> None:
    js = JobStore(zh)
    a = _job(js, 1)
    js.append(a, "job.cancelled", by="human")
    js.snapshot(a)                         # writes jobs/.index.json
    assert Path(index.path(str(zh.jobs))).exists()
    assert snapshots.ids(str(zh.jobs)) == [a]
    assert snapshots.ids(str(zh.root / "none")) == []


# -- the index ------------------------------------------------------------------------------------------

def test_rows_use_the_index_while_the_timeline_has_not_grown(zh: Home) -> None:
    js = JobStore(zh)
    jid = _job(js, 1)
    js.append(jid, "job.cancelled", by="human")
    js.snapshot(jid)
    # the row is what `zen status` shows, straight from the index
    (zh.job_dir(jid) / STATE).write_text("damaged, but the index still answers")
    (row,) = snapshots.rows(str(zh.jobs))
    assert row["job"] == jid and row["state"] == "cancelled" and set(row) == {"job", *index.ROW_FIELDS}
    # full=True reads each job itself
    (full,) = snapshots.rows(str(zh.jobs), full=True)
    assert full == _full(js, jid)


def test_a_row_is_not_trusted_once_the_timeline_grew(zh: Home) -> None:
    js = JobStore(zh)
    jid = _job(js, 1)
    js.append(jid, "job.cancelled", by="human")
    js.snapshot(jid)
    js.append(jid, "notify.sent", reason="ended")
    (row,) = snapshots.rows(str(zh.jobs))
    assert row["seq"] == 4                     # read from the job, not the index's row


@pytest.mark.parametrize("damage", ["", "garbage", "[]", '{"v": 2, "jobs": {}}', '{"v": 1, "jobs": []}'])
def test_a_damaged_index_reads_as_empty(zh: Home, damage: str) -> None:
    Path(index.path(str(zh.jobs))).write_text(damage)
    assert index.read(str(zh.jobs)) == {}


def test_update_puts_and_drops_and_skips_a_write_that_changes_nothing(zh: Home) -> None:
    state = {"name": "n", "state": "harvested", "reason": None, "agent": "sim", "lane": "app",
             "created_at": "t", "usage": {}, "executor": "local", "remote_host": None,
             "remote_address": None, "not_a_row_field": 1}
    index.update(zh, {"a": (10, state), "b": (20, state)})
    got = index.read(str(zh.jobs))
    assert got["a"] == {"offset": 10, "row": index.row_of(state)} and "not_a_row_field" not in got["a"]["row"]
    mtime = Path(index.path(str(zh.jobs))).stat().st_mtime_ns
    index.update(zh, {"a": (10, state)})
    assert Path(index.path(str(zh.jobs))).stat().st_mtime_ns == mtime
    index.update(zh, {}, drop=("a", "never-there"))
    assert set(index.read(str(zh.jobs))) == {"b"}


def test_unfinished_and_queued_count(zh: Home) -> None:
    js = JobStore(zh)
    queued = _job(js, 1)
    done = _job(js, 2)
    starting = _job(js, 3)
    js.append(done, "job.cancelled", by="human")
    js.snapshot(done)
    js.append(starting, "worktree.created", path="/w")
    assert sorted(s["job"] for s in snapshots.unfinished(str(zh.jobs))) == [queued, starting]
    spool.publish_text(zh, "20261201T000009Z-waiting-0009", "prompt: p\n")
    assert snapshots.queued_count(zh) == 2     # one in the spool, one queued job


# -- task fields and domains, without a YAML parser ------------------------------------------------

@pytest.mark.parametrize("raw, value", [
    (" docs", "docs"),
    (" 'quoted # not a comment'", "quoted # not a comment"),
    (' "double"', "double"),
    (" plain # a comment", "plain"),
    (" null", ""),
    (" ~", ""),
    ("", ""),
    (" 'unterminated", "unterminated"),
    (" a#b", "a#b"),                           # no space before '#': part of the value
])
def test_scalar(raw: str, value: str) -> None:
    assert readers.scalar(raw) == value


def test_task_field_reads_what_the_store_writes(zh: Home) -> None:
    js = JobStore(zh)
    jid = _job(js, 1, domain="payments", name="fix-it")
    assert readers.task_field(str(zh.root), jid, "domain") == "payments"
    assert readers.task_field(str(zh.root), jid, "name") == "fix-it"
    assert readers.task_field(str(zh.root), jid, "repo") is None          # written as null
    assert readers.task_field(str(zh.root), jid, "nope") is None
    assert readers.task_field(str(zh.root), "../escape", "domain") is None


def test_task_field_of_a_file_that_is_not_utf8_is_none(zh: Home) -> None:
    d = zh.job_dir("20261201T000001Z-bin-0001")
    d.mkdir()
    (d / "task.yaml").write_bytes(b"domain: \xff\xfe\n")
    assert readers.task_field(str(zh.root), "20261201T000001Z-bin-0001", "domain") is None


def test_job_domain_prefers_state_json_then_the_task(zh: Home) -> None:
    js = JobStore(zh)
    jid = _job(js, 1, domain="docs")
    assert readers.job_domain(str(zh.root), jid) == "docs"               # no state.json: task.yaml
    js.snapshot(jid)
    state = json.loads((zh.job_dir(jid) / STATE).read_text())
    state["domain"] = "from-state"
    (zh.job_dir(jid) / STATE).write_text(json.dumps(state))
    assert readers.job_domain(str(zh.root), jid) == "from-state"
    state["domain"] = ""
    (zh.job_dir(jid) / STATE).write_text(json.dumps(state))
    assert readers.job_domain(str(zh.root), jid) == "docs"


# -- lanes, without ruamel ---------------------------------------------------------------------------

def _lanes_both_ways(home: Home) -> tuple[dict, dict]:
    full = {n: {k: str(v) for k, v in spec.items()} for n, spec in Config.load(home).lanes.items()}
    return readers.read_lanes(str(home.root)), full


def test_read_lanes_agrees_with_the_full_parser_after_zen_writes_them(zh: Home) -> None:
    long_setup = "npm ci && npm run build && npm run generate -- --with-a-very-long-list-of-flags " * 2

    def change(cfg: Config) -> None:
        cfg.data["lanes"]["app"] = {"path": "/src/app", "base": "main", "domain": "code"}
        cfg.data["lanes"]["web"] = {"path": "/src/web site", "base": "release/1.x", "setup": long_setup.strip()}

    edit_config(zh, change)
    lean, full = _lanes_both_ways(zh)
    assert lean == full
    assert lean["web"]["setup"] == long_setup.strip()


def test_read_lanes_handles_comments_quotes_and_the_next_section(zh: Home) -> None:
    zh.config_path.write_text(
        "zen: 1\n"
        "# a comment before\n"
        "lanes:\n"
        "  # a comment inside\n"
        "  app:\n"
        "    path: '/src/my app'   # quoted, with a comment\n"
        "    base: main\n"
        "\n"
        "  'quoted-name':\n"
        "    path: /q\n"
        "defaults:\n"
        "  agent: sim\n")
    lean, full = _lanes_both_ways(zh)
    assert lean == full == {"app": {"path": "/src/my app", "base": "main"}, "quoted-name": {"path": "/q"}}


def test_read_lanes_falls_back_to_the_parser_for_flow_style(zh: Home) -> None:
    zh.config_path.write_text("zen: 1\nlanes: {app: {path: /src/app, base: main}}\n")
    assert readers.read_lanes(str(zh.root)) == {"app": {"path": "/src/app", "base": "main"}}


def test_read_lanes_of_no_lanes_and_of_no_file(zh: Home, tmp_path: Path) -> None:
    assert readers.read_lanes(str(zh.root)) == {}
    assert readers.read_lanes(str(tmp_path / "nowhere")) == {}


def test_read_lanes_of_a_broken_file_is_empty_not_a_traceback(zh: Home) -> None:
    zh.config_path.write_text("zen: 1\nlanes: {app: [unclosed\n")
    assert readers.read_lanes(str(zh.root)) == {}

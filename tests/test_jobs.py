"""Job records: claim, events (gap-free under concurrent appenders, torn lines), state.json,
rebuild; and reading them back with zen status / show / log."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers import REPO_ROOT, one_line, zen
from zen.core.model import JobStatus, Task
from zen.orchestration.context import JobContext
from zen.orchestration.lanes import LaneGone, resolve_lane
from zen.store import spool
from zen.store.config import Config
from zen.store.home import Home
from zen.store.jobs import JobStore, load_task_text


def claim_all(home_path: Path) -> list[str]:
    """What the supervisor does on intake: claim each spooled task and create its job record."""
    home = Home(home_path)
    store = JobStore(home)
    ids = []
    for path in spool.pending(home):
        claimed = spool.claim(home, path)
        assert claimed is not None
        task = load_task_text(claimed.read_text(), str(claimed))
        assert store.create(task)
        ids.append(task.id)
    return ids


def test_claim_creates_the_record_once(lane: Path, home: Path) -> None:
    job_id = zen("dispatch", "do it", "--name", "doit").stdout.strip()
    assert claim_all(home) == [job_id]
    store = JobStore(Home(home))
    assert (home / "spool" / "cur" / f"{job_id}.yaml").exists()
    assert not (home / "spool" / "new" / f"{job_id}.yaml").exists()
    # creating again (a restart after a crash mid-intake) adds nothing
    assert store.create(store.task(job_id)) is False
    evs = store.events(job_id)
    assert [e["type"] for e in evs] == ["task.received", "job.queued"]
    assert [e["seq"] for e in evs] == [1, 2] and all(e["v"] == 1 for e in evs)
    snap = store.snapshot(job_id)
    assert snap.state is JobStatus.queued and snap.name == "doit" and snap.revision == 2
    state = json.loads((home / "jobs" / job_id / "state.json").read_text())
    assert state["state"] == "queued" and state["v"] == 1


_APPENDER = """
import sys
from pathlib import Path
from zen.store import events
d = Path(sys.argv[1])
for i in range(int(sys.argv[2])):
    events.append(d, d.name, "usage", actor=sys.argv[3], input_tokens=1)
"""


def test_concurrent_appenders_keep_seq_gap_free(lane: Path, home: Path) -> None:
    zen("dispatch", "x", "--name", "busy")
    [job_id] = claim_all(home)
    d = home / "jobs" / job_id
    procs = [subprocess.Popen([sys.executable, "-c", _APPENDER, str(d), "40", f"p{i}"], cwd=REPO_ROOT)
             for i in range(6)]
    assert all(p.wait(timeout=120) == 0 for p in procs)
    store = JobStore(Home(home))
    seqs = [e["seq"] for e in store.events(job_id)]
    assert seqs == list(range(1, 2 + 6 * 40 + 1))
    assert store.snapshot(job_id).usage["input_tokens"] == 240


def test_a_torn_last_line_is_skipped_and_closed_off(lane: Path, home: Path) -> None:
    zen("dispatch", "x", "--name", "torn")
    [job_id] = claim_all(home)
    store = JobStore(Home(home))
    path = store.events_path(job_id)
    with path.open("ab") as f:
        f.write(b'{"v":1,"seq":3,"ts":"2026-11-29T10:00:00.000Z","type":"turn.wor')  # crash mid-write
    assert [e["seq"] for e in store.events(job_id)] == [1, 2]
    ev = store.append(job_id, "agent.spawned", session="s", target="%1")
    assert ev["seq"] == 3
    assert [e["seq"] for e in store.events(job_id)] == [1, 2, 3]
    assert store.snapshot(job_id).state is JobStatus.working


def _waiting_job(home: Path, name: str) -> tuple[JobStore, str]:
    """A dispatched job whose (pretend) agent started and now waits with a question."""
    zen("dispatch", "x", "--name", name)
    [job_id] = claim_all(home)
    store = JobStore(Home(home))
    store.append(job_id, "worktree.created", path="/w", branch=f"zen/{job_id}", base_commit="abc")
    store.append(job_id, "agent.spawned", session="s", target="%1")
    store.append(job_id, "turn.waiting", reason="question")
    return store, job_id


def test_state_rebuilds_from_events(lane: Path, home: Path) -> None:
    store, job_id = _waiting_job(home, "rebuild")
    store.snapshot(job_id)
    state_file = home / "jobs" / job_id / "state.json"
    state_file.write_text("{ not json")
    r = zen("doctor", "--rebuild", "--json")
    assert r.returncode == 0, r.stderr
    [report] = json.loads(r.stdout)["jobs"]
    problems = report.pop("problems")
    assert report == {"job": job_id, "events": 5, "gap_free": True, "state": "waiting", "rebuilt": True, "ok": True}
    assert [(p["line"], p["fault"]) for p in problems] == [(None, False)]  # the unreadable state.json, rebuilt
    state = json.loads(state_file.read_text())
    assert state["state"] == "waiting" and state["reason"] == "question" and state["branch"] == f"zen/{job_id}"
    # a stale snapshot (events appended behind its back, e.g. by a hook) is caught up on read
    store.append(job_id, "turn.working", actor="hook")
    assert json.loads(zen("show", job_id, "--json").stdout)["state"]["state"] == "working"


def test_a_state_json_a_power_loss_emptied_is_replayed_from_the_timeline(lane: Path, home: Path) -> None:
    """state.json is written without fsync (a cache): after a crash of the machine it may be
    empty or missing; every reader then replays the timeline, and the snapshot is written again."""
    store, job_id = _waiting_job(home, "emptied")
    state_file = home / "jobs" / job_id / "state.json"
    for damage in ("empty", "missing"):
        store.snapshot(job_id)
        if damage == "empty":
            state_file.write_bytes(b"")
        else:
            state_file.unlink()
        shown = json.loads(zen("show", job_id, "--json").stdout)["state"]
        assert shown["state"] == "waiting" and shown["reason"] == "question", damage
        snap = store.snapshot(job_id)
        assert snap.state is JobStatus.waiting and snap.branch == f"zen/{job_id}"
        assert json.loads(state_file.read_text())["state"] == "waiting", damage


def test_status_show_and_log(lane: Path, home: Path) -> None:
    a = zen("dispatch", "first task", "--name", "alpha").stdout.strip()
    claim_all(home)
    b = zen("dispatch", "second task", "--name", "beta").stdout.strip()
    st = json.loads(zen("status", "--json").stdout)
    assert [p["id"] for p in st["pending"]] == [b]
    assert [(j["job"], j["state"]) for j in st["jobs"]] == [(a, "queued")]
    assert st["supervisor"]["running"] is False
    text = zen("status").stdout
    assert a in text and b in text and "pending" in text and "queued" in text
    # show by name, by prefix, by full id
    for ref in ("alpha", a[:20] + a[20:30], a):
        r = zen("show", ref, "--json")
        assert r.returncode == 0, r.stderr
        assert json.loads(r.stdout)["task"]["id"] == a
    shown = zen("show", "alpha").stdout
    assert "first task" in shown and "job.queued" in shown
    log = zen("log", "alpha")
    assert log.returncode == 0 and "task.received" in log.stdout and "job.queued" in log.stdout
    # --json is one document (issue 15); with --follow it is JSON lines, one event each
    doc = json.loads(zen("log", "alpha", "--json").stdout)
    assert doc["job"] == a and [e["seq"] for e in doc["events"]] == [1, 2]


def test_ambiguous_and_unknown_references(lane: Path, home: Path) -> None:
    zen("dispatch", "x", "--name", "twin")
    zen("dispatch", "y", "--name", "twin")
    ids = claim_all(home)
    r = zen("show", "twin")
    assert r.returncode == 1 and one_line(r.stderr) and "ambiguous" in r.stderr
    assert all(i in r.stderr for i in ids)
    r = zen("log", "nothing-like-this")
    assert r.returncode == 1 and one_line(r.stderr) and "zen status" in r.stderr


def test_log_follow_stops_when_the_job_ends(lane: Path, home: Path) -> None:
    zen("dispatch", "x", "--name", "follow")
    [job_id] = claim_all(home)
    p = subprocess.Popen([sys.executable, "-m", "zen", "log", job_id, "--follow"], stdout=subprocess.PIPE,
                         text=True, cwd=REPO_ROOT)
    store = JobStore(Home(home))
    store.append(job_id, "job.cancelled", reason="test")
    out, _ = p.communicate(timeout=20)
    assert "job.cancelled" in out and p.returncode == 0


def test_log_follow_json_is_one_event_per_line(lane: Path, home: Path) -> None:
    zen("dispatch", "x", "--name", "follow")
    [job_id] = claim_all(home)
    JobStore(Home(home)).append(job_id, "job.cancelled", reason="test")
    r = zen("log", job_id, "--follow", "--json")
    events = [json.loads(line) for line in r.stdout.splitlines()]
    assert r.returncode == 0 and [e["type"] for e in events] == ["task.received", "job.queued", "job.cancelled"]


def test_dependencies_resolve_by_name(lane: Path, home: Path) -> None:
    a = zen("dispatch", "first", "--name", "first").stdout.strip()
    r = zen("dispatch", "second", "--depends-on", "first", "--json")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["depends_on"] == [a]


def test_a_job_context_reads_the_task_once_and_resolves_its_lane(lane: Path, home: Path, tmp_path: Path) -> None:
    job_id = zen("dispatch", "ctx work", "--name", "ctx", "--base", "main").stdout.strip()
    claim_all(home)
    ctx = JobContext.load(Home(home), job_id)
    assert ctx.task.name == "ctx" and ctx.agent == ctx.task.agent.value
    assert (ctx.lane.name, ctx.lane.repo, ctx.lane.base) == ("app", lane, "main")
    assert ctx.lane is ctx.lane                      # resolved once
    assert ctx.paths.events == home / "jobs" / job_id / "events.jsonl"
    ctx.append("job.cancelled", actor="human", reason="changed my mind")
    assert ctx.snapshot().state is JobStatus.cancelled and ctx.events()[-1]["actor"] == "human"
    # a lane removed from zen.yaml: a sentence, at the first use
    assert zen("lane", "remove", "app").returncode == 0
    gone = JobContext.load(Home(home), job_id)
    with pytest.raises(LaneGone, match=r"lane 'app' is no longer in zen\.yaml"):
        _ = gone.lane


def test_resolve_lane_for_a_lane_and_for_a_repo(lane: Path, home: Path, tmp_path: Path) -> None:
    cfg = Config.load(Home(home))
    on_lane = Task(id="20261129T101500Z-a-0000", name="a", prompt="p", lane="app", created_at="t")
    got = resolve_lane(cfg, on_lane)
    assert (got.name, got.repo, got.base, got.setup, got.includes) == ("app", lane, "main", None, [])
    pinned = on_lane.model_copy(update={"base": "v1"})
    assert resolve_lane(cfg, pinned).base == "v1"
    on_repo = Task(id="20261129T101500Z-b-0000", name="b", prompt="p", repo=str(tmp_path / "other"), created_at="t")
    got = resolve_lane(cfg, on_repo)
    assert (got.name, got.repo, got.base, dict(got.spec)) == ("other", tmp_path / "other", "HEAD", {})

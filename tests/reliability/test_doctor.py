"""zen doctor checks every timeline line against the event catalogue and names the line of each
problem; --rebuild skips bad lines instead of crashing; a state.json that has read past the end
of its timeline is caught (issue 15)."""

from __future__ import annotations

import json
from pathlib import Path

from tests.helpers import zen
from zen.store import spool
from zen.store.home import Home
from zen.store.jobs import JobStore, load_task_text


def new_job(home: Path, name: str) -> str:
    """A job record as the supervisor's intake makes it (claimed, task.received, job.queued)."""
    job_id = zen("dispatch", "do it", "--name", name).stdout.strip()
    h = Home(home)
    claimed = spool.claim(h, h.spool_new / f"{job_id}.yaml")
    assert claimed is not None
    assert JobStore(h).create(load_task_text(claimed.read_text(), str(claimed)))
    return job_id


def raw_line(job_id: str, seq: int, etype: str, **fields: object) -> bytes:
    ev = {"v": 1, "seq": seq, "ts": "2026-11-29T10:15:02.456Z", "job": job_id, "type": etype,
          "actor": "supervisor", **fields}
    return json.dumps(ev).encode() + b"\n"


def test_each_bad_line_is_reported_with_its_number_and_rebuild_skips_it(lane: Path, home: Path) -> None:
    job_id = new_job(home, "damaged")
    store = JobStore(Home(home))
    events = store.events_path(job_id)
    with events.open("ab") as f:
        f.write(raw_line(job_id, 3, "worktree.created", path=5, branch="b", base_commit="c"))  # line 3: int path
        f.write(b"\x00\xffnot json at all\n")                                                 # line 4
        f.write(raw_line(job_id, 4, "agent.spawned", session="s", target="%1"))              # line 5: fine
        f.write(raw_line(job_id, 5, "turn.waiting", reason=3))                                # line 6: int reason
        f.write(raw_line(job_id, 7, "turn.working"))                                          # line 7: seq gap
        f.write(raw_line("someone-else", 8, "turn.working"))                                  # line 8: other job
        f.write(raw_line(job_id, 9, "no.such.type"))                                          # line 9: unknown
        f.write(raw_line(job_id, "ten", "turn.working"))                                      # line 10: str seq

    r = zen("doctor", "--json")
    assert r.returncode == 1, r.stderr
    [report] = json.loads(r.stdout)["jobs"]
    assert report["job"] == job_id and report["ok"] is False and report["gap_free"] is False
    by_line: dict[int, list[str]] = {}
    for p in report["problems"]:
        by_line.setdefault(p["line"], []).append(p["problem"])
    assert by_line[3] == ["worktree.created: field 'path' is int, not str"]
    assert by_line[4] == ["not a JSON object (readers skip it)"]
    assert 5 not in by_line and 1 not in by_line and 2 not in by_line
    assert by_line[6] == ["turn.waiting: field 'reason' is int, not str"]
    assert by_line[7] == ["seq 7 where 6 was due (1 missing)"]
    assert any("belongs to job 'someone-else'" in p for p in by_line[8])
    assert by_line[9] == ["unknown event type 'no.such.type'"]
    assert by_line[10] == ["turn.working: field 'seq' is str, not int"]

    text = zen("doctor")
    assert text.returncode == 1 and "Traceback" not in text.stderr
    assert f"{job_id}" in text.stdout and "line 6: turn.waiting: field 'reason' is int, not str" in text.stdout

    # the rebuild never stops at a bad line: it folds the good ones and reports the rest
    r = zen("doctor", "--rebuild", "--json")
    assert r.returncode == 1, r.stderr
    [rebuilt] = json.loads(r.stdout)["jobs"]
    assert rebuilt["rebuilt"] is True and len(rebuilt["problems"]) == len(report["problems"])
    state = json.loads((home / "jobs" / job_id / "state.json").read_text())
    # the int-path worktree.created was skipped (never folded), agent.spawned and the later
    # turn.working were: the job reads as working, and nothing in state.json has a wrong type
    assert state["state"] == "working" and state["worktree"] is None and state["tmux_session"] == "s"
    for cmd in (("status", "--json"), ("show", job_id, "--json"), ("log", job_id, "--json")):
        out = zen(*cmd)
        assert out.returncode == 0 and "Traceback" not in out.stderr, (cmd, out.stderr)


def test_a_healthy_record_is_ok_and_a_torn_last_line_is_only_a_note(lane: Path, home: Path) -> None:
    job_id = new_job(home, "healthy")
    r = zen("doctor")
    assert r.returncode == 0 and f"{job_id}  2 events  ok  queued" in r.stdout, r.stdout
    with JobStore(Home(home)).events_path(job_id).open("ab") as f:
        f.write(b'{"v":1,"seq":3,"ts":"2026-11-29T10:00:00.000Z","type":"turn.wor')  # a crash mid-write
    r = zen("doctor", "--json")
    assert r.returncode == 0, r.stdout
    [report] = json.loads(r.stdout)["jobs"]
    assert report["ok"] is True
    assert [(p["line"], p["fault"]) for p in report["problems"]] == [(3, False)]
    assert "cut short" in report["problems"][0]["problem"]


def test_a_state_json_past_the_end_of_its_timeline_is_caught_and_not_believed(lane: Path, home: Path) -> None:
    job_id = new_job(home, "cut")
    store = JobStore(Home(home))
    store.append(job_id, "worktree.created", path="/w", branch="b", base_commit="c")
    store.append(job_id, "agent.spawned", session="s", target="%1")
    store.append(job_id, "turn.waiting", reason="question")
    assert store.snapshot(job_id).state.value == "waiting"
    events = store.events_path(job_id)
    # the timeline loses its tail (restored from an older copy, say): state.json read further
    lines = events.read_bytes().splitlines(keepends=True)
    events.write_bytes(b"".join(lines[:2]))

    r = zen("doctor", "--json")
    assert r.returncode == 1
    [report] = json.loads(r.stdout)["jobs"]
    texts = [p["problem"] for p in report["problems"]]
    assert any("state.json has read" in t and "bytes of a" in t for t in texts), texts
    assert any("has folded seq 5 but the timeline ends at 2" in t for t in texts), texts
    # readers do not believe it either: the job is what its two events say, at once, no rebuild
    assert report["state"] == "queued"
    assert json.loads(zen("show", job_id, "--json").stdout)["state"]["state"] == "queued"
    assert json.loads(zen("status", "--json").stdout)["jobs"][0]["state"] == "queued"
    r = zen("doctor", "--rebuild")
    assert r.returncode == 0 and "rebuilt (note)" in r.stdout, r.stdout
    assert zen("doctor").returncode == 0
    assert json.loads((home / "jobs" / job_id / "state.json").read_text())["state"] == "queued"


def test_a_job_whose_timeline_is_gone_is_reported_not_crashed_on(lane: Path, home: Path) -> None:
    job_id = new_job(home, "lost")
    (home / "jobs" / job_id / "events.jsonl").unlink()
    for args in (("doctor",), ("doctor", "--rebuild")):
        r = zen(*args)
        assert r.returncode == 1 and "Traceback" not in r.stderr
        assert "events.jsonl is missing" in r.stdout

"""zen.store.events: the job timeline (events.jsonl) is append-only, one compact JSON line per
event, seq gap-free across processes, and a crash mid-write costs at most the torn last line."""

from __future__ import annotations

import itertools
import json
import multiprocessing
from pathlib import Path

import pytest

from zen.store import events as store
from zen.store.layout import EVENTS, Home


@pytest.fixture
def job_dir(tmp_path: Path) -> Path:
    d = tmp_path / "jobs" / "j1"
    d.mkdir(parents=True)
    return d


def _lines(job_dir: Path) -> list[bytes]:
    return (job_dir / EVENTS).read_bytes().split(b"\n")


def _seqs(job_dir: Path) -> list[int]:
    return [ev["seq"] for ev in store.read_events(job_dir / EVENTS)]


# -- append ------------------------------------------------------------------------------------------

def test_append_numbers_events_from_one_and_returns_what_it_wrote(job_dir: Path) -> None:
    first = store.append(job_dir, "j1", "task.received", prompt="fix it")
    second = store.append(job_dir, "j1", "job.queued", actor="human")
    assert (first["seq"], second["seq"]) == (1, 2)
    assert first["type"] == "task.received" and first["prompt"] == "fix it"
    assert first["actor"] == "supervisor" and second["actor"] == "human"
    assert list(store.read_events(job_dir / EVENTS)) == [first, second]


def test_each_event_is_one_compact_line_with_the_envelope_first(job_dir: Path) -> None:
    store.append(job_dir, "j1", "agent.output", text="a\nb")
    raw = (job_dir / EVENTS).read_bytes()
    assert raw.count(b"\n") == 1 and raw.endswith(b"\n")   # a newline in a field is escaped
    assert b", " not in raw and b": " not in raw             # compact separators
    ev = json.loads(raw)
    assert list(ev)[:6] == ["v", "seq", "ts", "job", "type", "actor"]
    assert ev["job"] == "j1" and ev["text"] == "a\nb"


def test_a_field_json_cannot_encode_is_written_as_its_text(job_dir: Path) -> None:
    ev = store.append(job_dir, "j1", "worktree.created", path=Path("/w/j1"))
    assert ev["path"] == Path("/w/j1")
    (back,) = store.read_events(job_dir / EVENTS)
    assert back["path"] == "/w/j1"


def test_unicode_fields_round_trip(job_dir: Path) -> None:
    store.append(job_dir, "j1", "agent.output", text="héllo 世界 🚀")
    (back,) = store.read_events(job_dir / EVENTS)
    assert back["text"] == "héllo 世界 🚀"


def test_a_huge_event_is_one_whole_line_and_the_next_seq_follows_it(job_dir: Path) -> None:
    big = "x" * 200_000                      # longer than last_seq's 64 KiB tail window
    store.append(job_dir, "j1", "agent.output", text=big)
    assert store.last_seq(job_dir / EVENTS) == (1, False)
    nxt = store.append(job_dir, "j1", "agent.output", text="small")
    assert nxt["seq"] == 2
    assert [len(ev["text"]) for ev in store.read_events(job_dir / EVENTS)] == [200_000, 5]


def test_a_lone_huge_line_is_still_found_by_last_seq(job_dir: Path) -> None:
    (job_dir / EVENTS).write_text(json.dumps({"seq": 41, "pad": "y" * 100_000}) + "\n")
    assert store.last_seq(job_dir / EVENTS) == (41, False)
    assert store.append(job_dir, "j1", "x")["seq"] == 42


# -- append_unless -----------------------------------------------------------------------------------

def test_append_unless_writes_nothing_when_the_thing_is_recorded(job_dir: Path) -> None:
    def already(evs: list[dict]) -> bool:
        return any(e["type"] == "notify.sent" for e in evs)

    assert store.append_unless(job_dir, "j1", "notify.sent", already, reason="question") is not None
    before = (job_dir / EVENTS).read_bytes()
    assert store.append_unless(job_dir, "j1", "notify.sent", already, reason="question") is None
    assert (job_dir / EVENTS).read_bytes() == before


def test_append_unless_lets_the_rule_see_every_event_so_far(job_dir: Path) -> None:
    for i in range(3):
        store.append(job_dir, "j1", "agent.output", n=i)
    seen: list[list[int]] = []

    def rule(evs: list[dict]) -> bool:
        seen.append([e["seq"] for e in evs])
        return False

    ev = store.append_unless(job_dir, "j1", "agent.idle", rule)
    assert seen == [[1, 2, 3]]
    assert ev is not None and ev["seq"] == 4


def _notify_once(job_dir: str, n: int) -> int:
    """A child process: record notify.sent unless it is recorded, `n` times over."""
    wrote = 0
    for _ in range(n):
        ev = store.append_unless(Path(job_dir), "j1", "notify.sent",
                                 lambda evs: any(e["type"] == "notify.sent" for e in evs))
        wrote += ev is not None
    return wrote


def test_racing_processes_record_a_once_only_event_once(job_dir: Path) -> None:
    ctx = multiprocessing.get_context("spawn")
    with ctx.Pool(3) as pool:
        wrote = pool.starmap(_notify_once, [(str(job_dir), 5)] * 3)
    assert sum(wrote) == 1
    assert [e["type"] for e in store.read_events(job_dir / EVENTS)] == ["notify.sent"]


# -- append_many -------------------------------------------------------------------------------------

def test_append_many_writes_consecutive_seqs_in_order(job_dir: Path) -> None:
    store.append(job_dir, "j1", "task.received")
    evs = store.append_many(job_dir, "j1", [("guard.decision", "guard", {"verdict": "allow"}),
                                            ("guard.decision", "guard", {"verdict": "deny"}),
                                            ("agent.output", "hook", {})])
    assert [e["seq"] for e in evs] == [2, 3, 4]
    assert [e["actor"] for e in evs] == ["guard", "guard", "hook"]
    assert _seqs(job_dir) == [1, 2, 3, 4]
    assert [e.get("verdict") for e in store.read_events(job_dir / EVENTS)][1:3] == ["allow", "deny"]


def test_append_many_of_nothing_touches_nothing(job_dir: Path) -> None:
    assert store.append_many(job_dir, "j1", []) == []
    assert not (job_dir / EVENTS).exists()


def test_append_many_after_a_torn_line_closes_it_off(job_dir: Path) -> None:
    store.append(job_dir, "j1", "a")
    with (job_dir / EVENTS).open("ab") as f:
        f.write(b'{"v":1,"seq":2,"ty')
    evs = store.append_many(job_dir, "j1", [("b", "hook", {}), ("c", "hook", {})])
    assert [e["seq"] for e in evs] == [2, 3]
    assert _seqs(job_dir) == [1, 2, 3]
    assert _lines(job_dir)[1] == b'{"v":1,"seq":2,"ty'     # kept as it was, for zen doctor


# -- torn and damaged lines --------------------------------------------------------------------------

def test_a_torn_last_line_is_skipped_and_the_next_seq_reuses_its_number(job_dir: Path) -> None:
    store.append(job_dir, "j1", "a")
    store.append(job_dir, "j1", "b")
    with (job_dir / EVENTS).open("ab") as f:
        f.write(b'{"v":1,"seq":3,"type":"c"')               # the crash: no closing brace, no newline
    assert store.last_seq(job_dir / EVENTS) == (2, True)
    assert _seqs(job_dir) == [1, 2]
    ev = store.append(job_dir, "j1", "d")
    assert ev["seq"] == 3
    assert store.last_seq(job_dir / EVENTS) == (3, False)
    assert [e["type"] for e in store.read_events(job_dir / EVENTS)] == ["a", "b", "d"]


def test_a_torn_line_that_happens_to_be_valid_json_is_not_trusted(job_dir: Path) -> None:
    # `{"seq":3}` without its newline parses, but a crash may have cut the line after it
    store.append(job_dir, "j1", "a")
    with (job_dir / EVENTS).open("ab") as f:
        f.write(b'{"v":1,"seq":2}')
    assert store.last_seq(job_dir / EVENTS) == (1, True)
    assert _seqs(job_dir) == [1]


def test_garbage_in_the_middle_is_skipped_and_seq_continues(job_dir: Path) -> None:
    (job_dir / EVENTS).write_bytes(b'{"v":1,"seq":1,"type":"a"}\n'
                                   b'not json at all\n'
                                   b'[1,2,3]\n'
                                   b'{"v":1,"seq":"2","type":"string seq"}\n'
                                   b'{"v":1,"seq":true,"type":"bool seq"}\n'
                                   b'{"v":1,"seq":2,"type":"b"}\n'
                                   b'{"v":1,"seq":2.5,"type":"float seq"}\n')
    assert [e["type"] for e in store.read_events(job_dir / EVENTS)] == ["a", "b"]
    assert store.last_seq(job_dir / EVENTS) == (2, False)
    assert store.append(job_dir, "j1", "c")["seq"] == 3


def test_an_empty_or_missing_timeline_starts_at_one(job_dir: Path) -> None:
    assert store.last_seq(job_dir / EVENTS) == (0, False)
    assert list(store.read_events(job_dir / EVENTS)) == []
    (job_dir / EVENTS).write_bytes(b"")
    assert store.last_seq(job_dir / EVENTS) == (0, False)
    assert store.append(job_dir, "j1", "first")["seq"] == 1


def test_a_timeline_of_only_a_torn_line_starts_at_one_on_its_own_line(job_dir: Path) -> None:
    (job_dir / EVENTS).write_bytes(b'{"v":1,"se')
    assert store.last_seq(job_dir / EVENTS) == (0, True)
    store.append(job_dir, "j1", "first")
    assert _lines(job_dir)[0] == b'{"v":1,"se'
    assert _seqs(job_dir) == [1]


# -- readers -----------------------------------------------------------------------------------------

def test_read_events_from_an_offset(job_dir: Path) -> None:
    store.append(job_dir, "j1", "a")
    offset = (job_dir / EVENTS).stat().st_size
    store.append(job_dir, "j1", "b")
    assert [e["type"] for e in store.read_events(job_dir / EVENTS, offset)] == ["b"]


def test_read_from_follows_a_growing_timeline_without_rereading(job_dir: Path) -> None:
    path = job_dir / EVENTS
    assert store.read_from(path, 0) == ([], 0)                # no file yet
    store.append(job_dir, "j1", "a")
    store.append(job_dir, "j1", "b")
    evs, offset = store.read_from(path, 0)
    assert [e["type"] for e in evs] == ["a", "b"] and offset == path.stat().st_size
    assert store.read_from(path, offset) == ([], offset)       # nothing new
    store.append(job_dir, "j1", "c")
    evs, offset2 = store.read_from(path, offset)
    assert [e["type"] for e in evs] == ["c"] and offset2 == path.stat().st_size


def test_read_from_waits_for_a_half_written_line_to_end(job_dir: Path) -> None:
    path = job_dir / EVENTS
    store.append(job_dir, "j1", "a")
    _, offset = store.read_from(path, 0)
    with path.open("ab") as f:
        f.write(b'{"v":1,"seq":2,"type":"b"')
    assert store.read_from(path, offset) == ([], offset)       # not consumed while incomplete
    with path.open("ab") as f:
        f.write(b"}\n")
    evs, end = store.read_from(path, offset)
    assert [e["type"] for e in evs] == ["b"] and end == path.stat().st_size


def test_read_from_skips_garbage_but_moves_past_it(job_dir: Path) -> None:
    path = job_dir / EVENTS
    path.write_bytes(b"garbage\n" + b'{"seq":1,"type":"a"}\n')
    evs, end = store.read_from(path, 0)
    assert [e["type"] for e in evs] == ["a"] and end == path.stat().st_size


def test_scan_lines_shows_doctor_what_the_readers_skip(job_dir: Path) -> None:
    path = job_dir / EVENTS
    path.write_bytes(b'{"seq":1}\nnope\n[1]\n{"seq":2}')
    rows = list(store.scan_lines(path))
    assert rows == [(1, {"seq": 1}, True), (2, None, True), (3, None, True), (4, {"seq": 2}, False)]
    assert list(store.scan_lines(job_dir / "missing.jsonl")) == []


def test_read_events_any_needs_no_seq_and_stops_at_a_torn_line(tmp_path: Path) -> None:
    path = tmp_path / "audit.jsonl"
    path.write_bytes(b'{"type":"a"}\n"a string"\nbroken\n{"type":"b","seq":"x"}\n{"type":"torn"')
    assert [r["type"] for r in store.read_events_any(path)] == ["a", "b"]
    assert list(store.read_events_any(tmp_path / "none.jsonl")) == []


# -- other append-only logs ------------------------------------------------------------------------

def test_append_line_to_creates_folders_and_keeps_unicode_unescaped(tmp_path: Path) -> None:
    path = tmp_path / "evidence" / "deep" / "code.jsonl"
    store.append_line_to(path, {"who": "zoë", "n": 1})
    store.append_line_to(path, {"who": "李", "n": 2}, lock=tmp_path / ".lock")
    raw = path.read_bytes()
    assert "zoë".encode() in raw and "李".encode() in raw       # ensure_ascii=False
    assert [r["n"] for r in store.read_events_any(path)] == [1, 2]


def test_append_control_writes_a_home_event_to_the_control_log(tmp_path: Path) -> None:
    home = Home(tmp_path / "zh")
    rec = store.append_control(home, "kill.engaged", by="human", reason="stop")
    assert rec["type"] == "kill.engaged" and rec["by"] == "human" and "ts" in rec and "seq" not in rec
    assert list(store.read_events_any(home.control_log)) == [rec]


# -- concurrent writers ------------------------------------------------------------------------------

def _appender(job_dir: str, worker: int, n: int) -> None:
    """A child process appending `n` events, every third as a batch of two."""
    d = Path(job_dir)
    for i in range(n):
        if i % 3 == 2:
            store.append_many(d, "j1", [("batch", "hook", {"w": worker, "i": i}),
                                        ("batch", "hook", {"w": worker, "i": i, "second": True})])
        else:
            store.append(d, "j1", "single", actor="hook", w=worker, i=i)


def test_seq_stays_gap_free_and_unique_under_concurrent_processes(job_dir: Path) -> None:
    ctx = multiprocessing.get_context("spawn")
    procs = [ctx.Process(target=_appender, args=(str(job_dir), w, 30)) for w in range(4)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(60)
    assert [p.exitcode for p in procs] == [0, 0, 0, 0]
    evs = list(store.read_events(job_dir / EVENTS))
    assert [e["seq"] for e in evs] == list(range(1, 4 * 40 + 1))   # 30 appends: 20 single + 10 pairs
    raw_lines = (job_dir / EVENTS).read_bytes().split(b"\n")
    assert raw_lines[-1] == b"" and all(json.loads(line) for line in raw_lines[:-1])  # no torn line
    # each writer's own events stay in its order, and a batch stays together
    for w in range(4):
        mine = [e for e in evs if e["w"] == w]
        assert [e["i"] for e in mine if not e.get("second")] == list(range(30))
    for a, b in itertools.pairwise(evs):
        if b.get("second"):
            assert a["w"] == b["w"] and a["i"] == b["i"] and b["seq"] == a["seq"] + 1


def _audit_writer(path: str, worker: int, n: int) -> None:
    """A child process appending `n` large records to a log without any lock (the guard audit)."""
    for i in range(n):
        store.append_line_to(Path(path), {"w": worker, "i": i, "pad": "z" * 3000}, durable=False)


def test_lockless_appenders_never_interleave_their_lines(tmp_path: Path) -> None:
    # O_APPEND and one write per line keep whole lines apart, lock or no lock
    path = tmp_path / "logs" / "guard-audit.jsonl"
    ctx = multiprocessing.get_context("spawn")
    procs = [ctx.Process(target=_audit_writer, args=(str(path), w, 40)) for w in range(3)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(60)
    assert [p.exitcode for p in procs] == [0, 0, 0]
    lines = path.read_bytes().split(b"\n")
    assert lines[-1] == b"" and len(lines) == 3 * 40 + 1
    recs = [json.loads(line) for line in lines[:-1]]
    for w in range(3):
        assert [r["i"] for r in recs if r["w"] == w] == list(range(40))

"""The one timeline follower (zen.store.follow): whole lines only, a torn last line read again
once complete, a timeline that shrank or was replaced read from its start, and an offset a
caller can persist and carry on from. The readers that tail timelines (the server's hub, the
notifier, the webhook feeder, metrics) read through it."""

from __future__ import annotations

import json
import os
from pathlib import Path

from zen.store import events as ev_store
from zen.store.follow import Follower, Followers, json_record


def _line(seq: int, **kw: object) -> bytes:
    return json.dumps({"v": 1, "seq": seq, "type": "note", **kw}).encode() + b"\n"


def test_a_torn_last_line_waits_and_a_garbled_one_is_skipped(tmp_path: Path) -> None:
    path = tmp_path / "events.jsonl"
    path.write_bytes(_line(1) + b"not json\n" + _line(2)[:10])
    f = Follower(path)
    assert [e["seq"] for e in f.read()] == [1]
    assert f.read() == []
    with path.open("ab") as out:
        out.write(_line(2)[10:] + _line(3))
    assert [e["seq"] for e in f.read()] == [2, 3]
    assert f.offset == path.stat().st_size and not f.restarted


def test_a_persisted_offset_carries_on_where_it_stopped(tmp_path: Path) -> None:
    path = tmp_path / "events.jsonl"
    path.write_bytes(_line(1) + _line(2))
    first = Follower(path)
    first.read()
    saved = first.offset                     # what metrics.json / the outbox cursor keep
    with path.open("ab") as out:
        out.write(_line(3))
    assert [e["seq"] for e in Follower(path, saved).read()] == [3]


def test_a_shrunk_or_replaced_file_is_read_again_from_the_start(tmp_path: Path) -> None:
    path = tmp_path / "events.jsonl"
    path.write_bytes(_line(1) + _line(2) + _line(3))
    f = Follower(path)
    f.read()
    path.write_bytes(_line(1, text="rewritten"))          # truncated in place
    got = f.read()
    assert f.restarted and [e.get("text") for e in got] == ["rewritten"]
    # replaced by another file (a rotation): another inode, even when it is no shorter
    new = tmp_path / "new.jsonl"
    new.write_bytes(_line(7) + _line(8))
    os.replace(new, path)
    assert [e["seq"] for e in f.read()] == [7, 8] and f.restarted
    # and the plain reader of a timeline does the same with a stale offset (it read nothing)
    events, end = ev_store.read_from(path, 10_000)
    assert [e["seq"] for e in events] == [7, 8] and end == path.stat().st_size


def test_followers_keep_one_per_job_and_home_logs_need_no_seq(tmp_path: Path) -> None:
    for job in ("a", "b"):
        (tmp_path / job).mkdir()
        (tmp_path / job / "events.jsonl").write_bytes(_line(1, job=job))
    many = Followers(lambda job: tmp_path / job / "events.jsonl")
    assert "a" not in many
    assert [e["job"] for e in many.read("a")] == ["a"] and many.read("a") == []
    assert [e["job"] for e in many.read("b")] == ["b"]
    assert many.offsets() == {j: (tmp_path / j / "events.jsonl").stat().st_size for j in ("a", "b")}
    log = tmp_path / "control.jsonl"
    log.write_bytes(b'{"type": "killswitch.engaged"}\n[1]\n')
    assert Follower(log, parse=json_record).read() == [{"type": "killswitch.engaged"}]
    assert Follower(log).read() == []        # a timeline's reader wants a seq

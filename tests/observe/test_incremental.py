"""Reading from a byte offset: after new lines, only the new bytes are read (counted at the
os.pread the reader uses), in the session's own transcript and its subagents' alike; a crash
between the usage event and the ledger's save neither loses nor double-counts usage."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from zen.observe import record as rec
from zen.store import events
from zen.store import follow as tail
from zen.store.layout import JobPaths


def _line(n: int, side: bool = False, model: str = "claude-sonnet-4-5") -> bytes:
    return json.dumps({"type": "assistant", "isSidechain": side, "requestId": f"req_{n}",
                       "uuid": f"u{n}", "message": {"id": f"msg_{n}", "model": model, "role": "assistant",
                                                    "content": [{"type": "text", "text": "x" * 50}],
                                                    "usage": {"input_tokens": n, "output_tokens": 1}}}).encode() + b"\n"


@pytest.fixture
def reads(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Bytes returned by every os.pread of the transcript reader (zen.store.follow, which reads
    the job's timeline too: those reads are not the transcript's)."""
    got: list[int] = []
    real = os.pread

    def counting(fd: int, n: int, offset: int) -> bytes:
        data = real(fd, n, offset)
        if not os.readlink(f"/proc/self/fd/{fd}").endswith("events.jsonl"):
            got.append(len(data))
        return data

    monkeypatch.setattr(tail.os, "pread", counting)
    return got


def _job(tmp_path: Path) -> Path:
    job_dir = tmp_path / "jobs" / "j1"
    job_dir.mkdir(parents=True)
    events.append(job_dir, "j1", "task.received")
    return job_dir


def test_rereading_after_new_lines_reads_only_the_new_bytes(tmp_path: Path, reads: list[int]) -> None:
    job_dir = _job(tmp_path)
    transcript = tmp_path / "s.jsonl"
    sub = tmp_path / "s" / "subagents" / "agent-1.jsonl"
    sub.parent.mkdir(parents=True)
    transcript.write_bytes(b"".join(_line(n) for n in range(1, 201)))
    sub.write_bytes(b"".join(_line(n, side=True) for n in range(1001, 1051)))
    first = rec.record(job_dir, "j1", "claude", str(transcript), prices={})
    assert first is not None and first["api_calls"] == 250
    assert sum(reads) == transcript.stat().st_size + sub.stat().st_size

    reads.clear()
    assert rec.record(job_dir, "j1", "claude", str(transcript), prices={}) is None
    assert sum(reads) == 0                                  # nothing new: nothing read

    new_main, new_sub = _line(201) + _line(202), _line(1051, side=True)
    with transcript.open("ab") as f:
        f.write(new_main)
    with sub.open("ab") as f:
        f.write(new_sub)
    reads.clear()
    ev = rec.record(job_dir, "j1", "claude", str(transcript), prices={})
    assert ev is not None and ev["api_calls"] == 3 and ev["input_tokens"] == 201 + 202 + 1051
    assert sum(reads) == len(new_main) + len(new_sub)


def test_a_torn_tail_is_read_again_but_nothing_before_it(tmp_path: Path, reads: list[int]) -> None:
    path = tmp_path / "r.jsonl"
    whole, torn = _line(1), _line(2)
    path.write_bytes(whole + torn[:30])
    chunk = tail.read_new(path)
    assert len(chunk.lines) == 1 and chunk.cursor.offset == len(whole)
    with path.open("ab") as f:
        f.write(torn[30:])
    reads.clear()
    chunk = tail.read_new(path, chunk.cursor)
    assert [json.loads(x)["uuid"] for x in chunk.lines] == ["u2"] and sum(reads) == len(torn)


def test_a_replaced_file_is_read_again_from_the_start(tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    path.write_bytes(_line(1) + _line(2))
    first = tail.read_new(path)
    replacement = tmp_path / "new.jsonl"
    replacement.write_bytes(_line(3))
    replacement.replace(path)
    again = tail.read_new(path, first.cursor)
    assert again.restarted and [json.loads(x)["uuid"] for x in again.lines] == ["u3"]


def test_a_line_longer_than_the_read_limit_is_read_whole(tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    path.write_bytes(_line(1) + _line(2))
    chunk = tail.read_new(path, limit=10)
    assert len(chunk.lines) == 1 and chunk.more
    chunk = tail.read_new(path, chunk.cursor, limit=10)
    assert len(chunk.lines) == 1 and not chunk.more


def _usage(job_dir: Path) -> list[dict[str, Any]]:
    return [e for e in events.read_events(job_dir / "events.jsonl") if e["type"] == "usage"]


def test_a_lost_or_stale_ledger_file_is_caught_up_from_the_timeline(tmp_path: Path) -> None:
    job_dir = _job(tmp_path)
    transcript = tmp_path / "s.jsonl"
    transcript.write_bytes(_line(1) + _line(2))
    rec.record(job_dir, "j1", "claude", str(transcript), prices={})
    ledger = JobPaths(job_dir).observe / f"{rec.ledger_id('claude', transcript)}.json"
    stale = ledger.read_bytes()
    with transcript.open("ab") as f:
        f.write(_line(3))
    rec.record(job_dir, "j1", "claude", str(transcript), prices={})
    ledger.write_bytes(stale)      # as if the process died after the append, before the save
    with transcript.open("ab") as f:
        f.write(_line(4))
    rec.record(job_dir, "j1", "claude", str(transcript), prices={})
    ledger.unlink()                # lost altogether
    with transcript.open("ab") as f:
        f.write(_line(5))
    rec.record(job_dir, "j1", "claude", str(transcript), prices={})
    used = _usage(job_dir)
    assert sum(e["input_tokens"] for e in used) == 1 + 2 + 3 + 4 + 5
    assert sum(e["api_calls"] for e in used) == 5
    assert [e["n"] for e in used] == list(range(1, len(used) + 1))


def test_usage_recorded_before_ledgers_existed_is_not_counted_again(tmp_path: Path) -> None:
    job_dir = _job(tmp_path)
    transcript = tmp_path / "s.jsonl"
    transcript.write_bytes(_line(1) + _line(2))
    # what the previous zen wrote at a Stop: sums for the transcript, no ledger
    events.append(job_dir, "j1", "usage", actor="hook", transcript=str(transcript), input_tokens=3,
                  output_tokens=2, cache_creation_input_tokens=0, cache_read_input_tokens=0,
                  cost_usd=0.000039, model="claude-sonnet-4-5")
    with transcript.open("ab") as f:
        f.write(_line(3))
    ev = rec.record(job_dir, "j1", "claude", str(transcript), prices={})
    assert ev is not None and ev["input_tokens"] == 3


def test_the_hook_with_nothing_new_does_not_load_prices(tmp_path: Path) -> None:
    job_dir = _job(tmp_path)
    transcript = tmp_path / "s.jsonl"
    transcript.write_bytes(_line(1))
    asked: list[int] = []

    def prices() -> dict[str, Any]:
        asked.append(1)
        return {}

    assert rec.record(job_dir, "j1", "claude", str(transcript), prices=prices) is not None
    assert rec.record(job_dir, "j1", "claude", str(transcript), prices=prices) is None
    assert asked == [1]

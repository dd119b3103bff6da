"""zen.store.spool: the Maildir-style intake. Publishing never clobbers, claiming is link+unlink
so exactly one claimer wins, and whatever is dropped into spool/new that is no task file is
refused with a reason (never opened, never followed) and quarantined beside that reason."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest

from zen.store import spool
from zen.store.home import init_home
from zen.store.layout import Home
from zen.store.spool import Rejected


@pytest.fixture
def zh(tmp_path: Path) -> Home:
    home, _ = init_home(tmp_path / "zh")
    return home


def _names(d: Path) -> list[str]:
    return sorted(p.name for p in d.iterdir())


# -- publish ----------------------------------------------------------------------------------------

def test_publish_puts_the_whole_task_in_new_and_nothing_in_tmp(zh: Home) -> None:
    assert spool.publish_text(zh, "t-1", "prompt: fix it\n") is True
    assert (zh.spool_new / "t-1.yaml").read_text() == "prompt: fix it\n"
    assert _names(zh.spool_tmp) == []


def test_publishing_a_taken_id_is_refused_and_keeps_the_first_task(zh: Home) -> None:
    assert spool.publish_text(zh, "t-1", "first\n")
    assert spool.publish_text(zh, "t-1", "second\n") is False
    assert (zh.spool_new / "t-1.yaml").read_text() == "first\n"
    assert _names(zh.spool_tmp) == []


def test_racing_dispatchers_with_the_same_id_publish_exactly_one(zh: Home) -> None:
    results: list[bool] = []
    barrier = threading.Barrier(6)

    def go(i: int) -> None:
        barrier.wait()
        results.append(spool.publish_text(zh, "same", f"from {i}\n"))

    threads = [threading.Thread(target=go, args=(i,)) for i in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(results) == [False] * 5 + [True]
    assert _names(zh.spool_tmp) == []


def test_id_taken_looks_in_new_cur_and_the_jobs(zh: Home) -> None:
    assert not spool.id_taken(zh, "a")
    spool.publish_text(zh, "a", "x\n")
    assert spool.id_taken(zh, "a")
    (zh.spool_cur / "b.yaml").write_text("x\n")
    assert spool.id_taken(zh, "b")
    zh.job_dir("c").mkdir()
    assert spool.id_taken(zh, "c")
    assert not spool.id_taken(zh, "d")


# -- listing ----------------------------------------------------------------------------------------

def test_pending_lists_task_files_oldest_id_first_and_hides_dot_names(zh: Home) -> None:
    for job_id in ("20261201-b", "20261130-a", "20261201-a"):
        spool.publish_text(zh, job_id, "x\n")
    (zh.spool_new / ".half-written.yaml").write_text("x")
    (zh.spool_new / "notes.txt").write_text("x")
    assert [p.name for p in spool.pending(zh)] == ["20261130-a.yaml", "20261201-a.yaml", "20261201-b.yaml"]
    assert [p.name for p in spool.entries(zh)] == ["20261130-a.yaml", "20261201-a.yaml",
                                                   "20261201-b.yaml", "notes.txt"]


def test_listing_a_home_without_a_spool_is_empty_not_an_error(tmp_path: Path) -> None:
    bare = Home(tmp_path / "nothing")
    assert spool.pending(bare) == [] and spool.entries(bare) == []
    assert spool.claimed(bare) == [] and spool.quarantined(bare) == []


# -- claim ------------------------------------------------------------------------------------------

def test_claim_moves_the_task_from_new_to_cur(zh: Home) -> None:
    spool.publish_text(zh, "t", "prompt: x\n")
    dst = spool.claim(zh, zh.spool_new / "t.yaml")
    assert dst == zh.spool_cur / "t.yaml"
    assert dst.read_text() == "prompt: x\n"
    assert not (zh.spool_new / "t.yaml").exists()
    assert spool.claimed(zh) == [dst]


def test_a_claim_of_a_vanished_entry_is_none(zh: Home) -> None:
    assert spool.claim(zh, zh.spool_new / "gone.yaml") is None


def test_racing_claimers_claim_once(zh: Home) -> None:
    spool.publish_text(zh, "t", "x\n")
    got: list[Path | None] = []
    refused: list[spool.Rejected] = []
    barrier = threading.Barrier(5)

    def go() -> None:
        barrier.wait()
        try:
            got.append(spool.claim(zh, zh.spool_new / "t.yaml"))
        except spool.Rejected as exc:   # a loser that came after the winner's unlink: no duplicate
            refused.append(exc)

    threads = [threading.Thread(target=go) for _ in range(5)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert refused == [] and len(got) == 5
    assert [g for g in got if g is not None] == [zh.spool_cur / "t.yaml"]
    assert _names(zh.spool_new) == [] and _names(zh.spool_cur) == ["t.yaml"]


def test_a_claim_cut_short_by_a_crash_is_finished_by_the_next_claimer(zh: Home) -> None:
    # the crash came between link and unlink: the same file is in new/ and cur/
    spool.publish_text(zh, "t", "x\n")
    os.link(zh.spool_new / "t.yaml", zh.spool_cur / "t.yaml")
    assert spool.claim(zh, zh.spool_new / "t.yaml") is None     # whoever linked records the task
    assert _names(zh.spool_new) == [] and _names(zh.spool_cur) == ["t.yaml"]


def test_a_duplicate_id_already_in_cur_is_rejected_and_the_cur_task_kept(zh: Home) -> None:
    (zh.spool_cur / "t.yaml").write_text("the first task\n")
    (zh.spool_new / "t.yaml").write_text("another task, same id\n")
    with pytest.raises(Rejected) as exc:
        spool.claim(zh, zh.spool_new / "t.yaml")
    assert str(exc.value) == "t.yaml: a task of that id was taken in already (duplicate id)"
    assert (zh.spool_cur / "t.yaml").read_text() == "the first task\n"
    assert (zh.spool_new / "t.yaml").exists()                    # left where it is


@pytest.mark.parametrize("kind, make", [
    ("a symlink", lambda p, tmp: os.symlink(tmp / "secret", p)),
    ("a FIFO", lambda p, tmp: os.mkfifo(p)),
    ("a folder", lambda p, tmp: os.mkdir(p)),
])
def test_an_entry_that_is_no_regular_file_is_rejected_unopened(zh: Home, tmp_path: Path, kind: str, make) -> None:
    (tmp_path / "secret").write_text("never read\n")
    entry = zh.spool_new / "evil.yaml"
    make(entry, tmp_path)
    with pytest.raises(Rejected) as exc:
        spool.claim(zh, entry)
    assert str(exc.value) == f"evil.yaml is {kind}, not a task file"
    assert os.path.lexists(entry) and _names(zh.spool_cur) == []


def test_a_regular_file_not_named_yaml_is_rejected(zh: Home) -> None:
    entry = zh.spool_new / "task.json"
    entry.write_text("{}")
    with pytest.raises(Rejected, match=r"^task.json is not named <id>\.yaml$"):
        spool.claim(zh, entry)


# -- read_entry -------------------------------------------------------------------------------------

def test_read_entry_returns_utf8_text(tmp_path: Path) -> None:
    p = tmp_path / "t.yaml"
    p.write_text("prompt: ünïcode ✓\n")
    assert spool.read_entry(p, 1000) == "prompt: ünïcode ✓\n"


def test_read_entry_refuses_a_file_over_the_limit_naming_both_sizes(tmp_path: Path) -> None:
    p = tmp_path / "t.yaml"
    p.write_bytes(b"x" * 101)
    with pytest.raises(Rejected, match=r"^t.yaml is 101 bytes, over the limit of 100$"):
        spool.read_entry(p, 100)
    assert spool.read_entry(p, 101) == "x" * 101                 # the limit itself is allowed


def test_read_entry_refuses_bytes_that_are_not_utf8_naming_the_offset(tmp_path: Path) -> None:
    p = tmp_path / "t.yaml"
    p.write_bytes(b"prompt: ok\n\xff\xfe")
    with pytest.raises(Rejected, match=r"^t.yaml is not UTF-8 text \(byte 11\)$"):
        spool.read_entry(p, 1000)


def test_read_entry_never_follows_a_link(tmp_path: Path) -> None:
    (tmp_path / "secret").write_text("private\n")
    link = tmp_path / "t.yaml"
    link.symlink_to(tmp_path / "secret")
    with pytest.raises(Rejected, match=r"^t.yaml cannot be opened: "):
        spool.read_entry(link, 1000)


def test_read_entry_does_not_block_on_a_fifo(tmp_path: Path) -> None:
    fifo = tmp_path / "t.yaml"
    os.mkfifo(fifo)
    with pytest.raises(Rejected, match=r"^t.yaml is not a regular file$"):
        spool.read_entry(fifo, 1000)


def test_read_entry_of_an_empty_file_is_empty_text(tmp_path: Path) -> None:
    p = tmp_path / "t.yaml"
    p.write_bytes(b"")
    assert spool.read_entry(p, 10) == ""


# -- quarantine -------------------------------------------------------------------------------------

def test_quarantine_moves_the_entry_beside_its_reason(zh: Home) -> None:
    entry = zh.spool_new / "bad.yaml"
    entry.write_text("{{{")
    target = spool.quarantine(zh, entry, "bad.yaml is not valid YAML")
    assert target == zh.spool_quarantine / "bad.yaml"
    assert target.read_text() == "{{{" and not entry.exists()
    reason = (zh.spool_quarantine / "bad.yaml.reason").read_text()
    assert reason.endswith(" bad.yaml is not valid YAML\n") and reason[:4].isdigit()   # timestamped
    assert spool.quarantined(zh) == [("bad.yaml", "bad.yaml is not valid YAML")]


def test_a_second_entry_of_the_same_name_gets_a_free_name(zh: Home) -> None:
    for reason in ("first", "second", "third"):
        entry = zh.spool_new / "dup.yaml"
        entry.write_text(reason)
        spool.quarantine(zh, entry, reason)
    assert spool.quarantined(zh) == [("dup.yaml", "first"), ("dup.yaml.1", "second"), ("dup.yaml.2", "third")]
    assert (zh.spool_quarantine / "dup.yaml.2").read_text() == "third"


def test_a_symlink_is_quarantined_as_a_link_without_touching_its_target(zh: Home, tmp_path: Path) -> None:
    target_file = tmp_path / "precious"
    target_file.write_text("keep me")
    link = zh.spool_new / "link.yaml"
    link.symlink_to(target_file)
    moved = spool.quarantine(zh, link, "link.yaml is a symlink, not a task file")
    assert moved.is_symlink() and os.readlink(moved) == str(target_file)
    assert target_file.read_text() == "keep me"


def test_a_dot_name_is_quarantined_visibly(zh: Home) -> None:
    entry = zh.spool_new / ".hidden.yaml"
    entry.write_text("x")
    moved = spool.quarantine(zh, entry, "why")
    assert moved.name == "hidden.yaml"
    assert spool.quarantined(zh) == [("hidden.yaml", "why")]


def test_a_quarantined_entry_whose_reason_is_lost_still_lists(zh: Home) -> None:
    (zh.spool_quarantine / "orphan.yaml").write_text("x")
    assert spool.quarantined(zh) == [("orphan.yaml", "(no reason recorded)")]


def test_a_quarantined_name_clashing_only_with_a_reason_file_is_not_overwritten(zh: Home) -> None:
    (zh.spool_quarantine / "x.yaml.reason").write_text("2026 an older reason\n")
    entry = zh.spool_new / "x.yaml"
    entry.write_text("x")
    moved = spool.quarantine(zh, entry, "new reason")
    assert moved.name == "x.yaml.1"
    assert (zh.spool_quarantine / "x.yaml.reason").read_text() == "2026 an older reason\n"

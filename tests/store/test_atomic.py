"""zen.store.atomic: files are published whole (temp + fsync + rename), appends are whole lines,
and kernel locks keep writers apart. Real files in tmp_path; faults are injected only at the
system-call boundary (a disk that fills up), never in the function under test."""

from __future__ import annotations

import errno
import os
import stat
import threading
from pathlib import Path

import pytest

from zen.store import atomic
from zen.store.atomic import (
    append_whole,
    atomic_write,
    create_exclusive,
    flocked,
    is_locked,
    lock_within,
    named,
    write_temp,
)


@pytest.fixture
def d(tmp_path: Path) -> Path:
    """A folder of the test's own (the autouse fixture keeps its fake $HOME beside it)."""
    d = tmp_path / "w"
    d.mkdir()
    return d


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def _leftovers(directory: Path, keep: set[str]) -> list[str]:
    return sorted(p.name for p in directory.iterdir() if p.name not in keep)


class FsyncSpy:
    """Counts fsync calls on regular files and on directories."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.files = 0
        self.dirs = 0
        real = os.fsync

        def spy(fd: int) -> None:
            if stat.S_ISDIR(os.fstat(fd).st_mode):
                self.dirs += 1
            else:
                self.files += 1
            real(fd)

        monkeypatch.setattr(os, "fsync", spy)


# -- atomic_write -----------------------------------------------------------------------------------

def test_atomic_write_replaces_the_file_and_leaves_no_temp_file(d: Path) -> None:
    target = d / "state.json"
    target.write_text("old")
    atomic_write(target, '{"new": true}\n')
    assert target.read_text() == '{"new": true}\n'
    assert _leftovers(d, {"state.json"}) == []


def test_atomic_write_encodes_text_as_utf8(d: Path) -> None:
    target = d / "note.txt"
    atomic_write(target, "naïve — 日本語 ✓")
    assert target.read_bytes() == "naïve — 日本語 ✓".encode()


def test_atomic_write_takes_bytes_verbatim_including_nul_and_no_newline(d: Path) -> None:
    target = d / "blob"
    data = bytes(range(256)) * 3
    atomic_write(target, data)
    assert target.read_bytes() == data


def test_atomic_write_of_a_large_file_is_whole(d: Path) -> None:
    target = d / "big"
    data = os.urandom(3 * 1024 * 1024 + 7)  # larger than one os.write may take
    atomic_write(target, data)
    assert target.read_bytes() == data


def test_an_empty_write_publishes_an_empty_file(d: Path) -> None:
    target = d / "empty"
    target.write_text("something")
    atomic_write(target, b"")
    assert target.read_bytes() == b""


def test_a_published_file_is_private_to_the_user(d: Path) -> None:
    # zen's records are the user's alone (security finding L16), whatever the umask
    target = d / "zen.yaml"
    atomic_write(target, "zen: 1\n")
    assert _mode(target) == 0o600


def test_a_file_may_ask_for_another_mode(d: Path) -> None:
    target = d / "script.sh"
    atomic_write(target, "#!/bin/sh\n", mode=0o755)
    assert _mode(target) == 0o755


def test_mode_makes_a_secret_private(d: Path) -> None:
    target = d / "api-token"
    atomic_write(target, "s3cret\n", mode=0o600)
    assert _mode(target) == 0o600


def test_a_replaced_file_is_a_new_inode_so_an_open_reader_keeps_the_old_text(d: Path) -> None:
    target = d / "state.json"
    target.write_text("old text")
    with target.open() as reader:
        atomic_write(target, "new text")
        assert reader.read() == "old text"   # never a mix of the two
    assert target.read_text() == "new text"


def test_durable_write_fsyncs_the_file_and_the_directory(d: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    spy = FsyncSpy(monkeypatch)
    atomic_write(d / "f", "x")
    assert (spy.files, spy.dirs) == (1, 1)


def test_non_durable_write_fsyncs_the_file_but_not_the_directory(d: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    spy = FsyncSpy(monkeypatch)
    atomic_write(d / "f", "x", durable=False)
    assert (spy.files, spy.dirs) == (1, 0)


def test_a_cache_write_is_still_a_rename_but_never_fsynced(d: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    target = d / "state.json"
    target.write_text("old")
    spy = FsyncSpy(monkeypatch)
    atomic_write(target, "rebuilt", cache=True)
    assert (spy.files, spy.dirs) == (0, 0)
    assert target.read_text() == "rebuilt"
    assert _leftovers(d, {"state.json"}) == []


def test_a_failed_rename_keeps_the_old_target_and_removes_the_temp_file(d: Path) -> None:
    target = d / "taken"
    target.mkdir()                       # a directory cannot be replaced by a file
    (target / "inside").write_text("kept")
    with pytest.raises(IsADirectoryError):
        atomic_write(target, "data")
    assert (target / "inside").read_text() == "kept"
    assert _leftovers(d, {"taken"}) == []


def test_a_write_into_a_missing_folder_names_the_folder(d: Path) -> None:
    missing = d / "no" / "such"
    with pytest.raises(FileNotFoundError) as exc:
        atomic_write(missing / "f", "x")
    assert str(exc.value.filename).startswith(f"{missing}/")   # the one sentence says where


def test_a_full_disk_mid_write_leaves_the_old_file_and_no_temp(d: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    target = d / "task.yaml"
    target.write_text("the old task\n")
    real_write = os.write

    def full_disk(fd: int, data: bytes | memoryview) -> int:
        if len(data) > 10:
            real_write(fd, bytes(data[:10]))
            return 10
        raise OSError(errno.ENOSPC, "No space left on device")

    with pytest.MonkeyPatch.context() as mp, pytest.raises(OSError) as exc:
        mp.setattr(os, "write", full_disk)
        atomic_write(target, "a much longer new task that does not fit\n")
    assert exc.value.errno == errno.ENOSPC
    assert exc.value.filename is not None and exc.value.filename.startswith(str(d / ".task.yaml."))
    assert target.read_text() == "the old task\n"
    assert _leftovers(d, {"task.yaml"}) == []


def test_concurrent_writers_each_publish_a_whole_file(d: Path) -> None:
    target = d / "shared.json"
    payloads = [(f"writer {i} " * 5000).encode() for i in range(6)]
    seen: list[bytes] = []
    stop = threading.Event()

    def read_loop() -> None:
        while not stop.is_set():
            try:
                seen.append(target.read_bytes())
            except FileNotFoundError:
                pass

    def write_loop(data: bytes) -> None:
        for _ in range(15):
            atomic_write(target, data, durable=False)

    reader = threading.Thread(target=read_loop)
    reader.start()
    writers = [threading.Thread(target=write_loop, args=(p,)) for p in payloads]
    for w in writers:
        w.start()
    for w in writers:
        w.join()
    stop.set()
    reader.join()
    assert target.read_bytes() in payloads
    assert all(s in payloads for s in seen), "a reader saw a file no writer wrote whole"
    assert _leftovers(d, {"shared.json"}) == []


# -- write_temp and named ---------------------------------------------------------------------------

def test_write_temp_makes_a_hidden_file_with_the_prefix_in_the_folder(d: Path) -> None:
    path = write_temp(d, b"payload", prefix=".job-1.")
    assert path.parent == d
    assert path.name.startswith(".job-1.")
    assert path.read_bytes() == b"payload"
    assert _mode(path) == 0o600  # private unless asked (L16)


def test_write_temp_takes_another_mode_when_asked_for_it(d: Path) -> None:
    path = write_temp(d, b"shared", mode=0o644)
    assert _mode(path) == 0o644


def test_two_temp_files_never_share_a_name(d: Path) -> None:
    names = {write_temp(d, b"x", prefix=".same.", sync=False).name for _ in range(50)}
    assert len(names) == 50


def test_named_adds_the_path_to_an_error_that_names_no_file() -> None:
    bare = OSError(errno.ENOSPC, "No space left on device")
    out = named(bare, "/home/zen/jobs/x/events.jsonl")
    assert out.errno == errno.ENOSPC
    assert out.filename == "/home/zen/jobs/x/events.jsonl"
    assert "No space left on device" in str(out) and "events.jsonl" in str(out)


def test_named_keeps_an_error_that_already_names_its_file() -> None:
    exc = FileNotFoundError(errno.ENOENT, "No such file or directory", "/the/real/one")
    assert named(exc, "/another") is exc


# -- create_exclusive --------------------------------------------------------------------------------

def test_create_exclusive_publishes_once_and_never_overwrites(d: Path) -> None:
    target = d / "team-key"
    assert create_exclusive(target, "first\n") is True
    assert create_exclusive(target, "second\n") is False
    assert target.read_text() == "first\n"
    assert _leftovers(d, {"team-key"}) == []


def test_create_exclusive_refuses_to_replace_a_file_someone_else_wrote(d: Path) -> None:
    target = d / "zen.yaml"
    target.write_text("# the user's own\n")
    assert create_exclusive(target, "zen: 1\n") is False
    assert target.read_text() == "# the user's own\n"


def test_create_exclusive_honours_mode(d: Path) -> None:
    target = d / "otlp-secret"
    assert create_exclusive(target, "k", mode=0o600)
    assert _mode(target) == 0o600


def test_racing_creators_agree_on_exactly_one_winner(d: Path) -> None:
    target = d / "api-token"
    results: dict[int, bool] = {}
    barrier = threading.Barrier(8)

    def create(i: int) -> None:
        barrier.wait()
        results[i] = create_exclusive(target, f"token-{i}\n")

    threads = [threading.Thread(target=create, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    winners = [i for i, won in results.items() if won]
    assert len(winners) == 1
    assert target.read_text() == f"token-{winners[0]}\n"
    assert _leftovers(d, {"api-token"}) == []


# -- append_whole ----------------------------------------------------------------------------------

def test_append_whole_creates_the_file_and_appends_in_order(d: Path) -> None:
    log = d / "control.jsonl"
    append_whole(log, b"one\n")
    append_whole(log, b"two\nthree\n")
    assert log.read_bytes() == b"one\ntwo\nthree\n"
    assert _mode(log) == 0o600  # a log is the user's alone, whatever the umask (L16)


def test_append_whole_names_a_missing_folder(d: Path) -> None:
    path = d / "gone" / "events.jsonl"
    with pytest.raises(FileNotFoundError) as exc:
        append_whole(path, b"x\n")
    assert exc.value.filename == str(path)


def _failing_after(monkeypatch: pytest.MonkeyPatch, n: int) -> None:
    """os.write takes `n` bytes of the first call, then the disk is full."""
    real_write = os.write
    calls = {"n": 0}

    def write(fd: int, data: bytes | memoryview) -> int:
        calls["n"] += 1
        if calls["n"] == 1:
            return real_write(fd, bytes(data[:n]))
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "write", write)


def test_a_failed_append_with_undo_is_cut_back_so_no_torn_line_stays(d: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    log = d / "events.jsonl"
    log.write_bytes(b'{"seq":1}\n')
    with pytest.MonkeyPatch.context() as mp, pytest.raises(OSError) as exc:
        _failing_after(mp, 5)
        append_whole(log, b'{"seq":2,"long":"line"}\n')
    assert exc.value.errno == errno.ENOSPC and exc.value.filename == str(log)
    assert log.read_bytes() == b'{"seq":1}\n'


def test_a_failed_append_without_undo_leaves_what_was_written(d: Path,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    # without the file's lock a cut could take a concurrent appender's line: the torn part stays
    log = d / "audit.jsonl"
    log.write_bytes(b"a\n")
    with pytest.MonkeyPatch.context() as mp, pytest.raises(OSError):
        _failing_after(mp, 3)
        append_whole(log, b"bbbbbb\n", undo=False)
    assert log.read_bytes() == b"a\nbbb"


def test_a_non_durable_append_is_not_fsynced(d: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    spy = FsyncSpy(monkeypatch)
    append_whole(d / "f", b"x\n", durable=False)
    append_whole(d / "f", b"y\n")
    assert spy.files == 1


# -- locks -----------------------------------------------------------------------------------------

def test_flocked_creates_its_lock_file(d: Path) -> None:
    lock = d / ".lock"
    with flocked(lock) as fd:
        assert isinstance(fd, int)
        assert lock.exists()


def test_a_held_exclusive_lock_refuses_a_non_blocking_second_holder(d: Path) -> None:
    lock = d / ".lock"
    with flocked(lock), pytest.raises(BlockingIOError), flocked(lock, blocking=False):
        pass
    with flocked(lock, blocking=False):   # free again once the first block ends
        pass


def test_shared_locks_coexist_but_keep_an_exclusive_one_out(d: Path) -> None:
    lock = d / ".lock"
    with (flocked(lock, exclusive=False), flocked(lock, exclusive=False, blocking=False),
          pytest.raises(BlockingIOError), flocked(lock, blocking=False)):
        pass


def test_a_lock_is_released_when_its_block_raises(d: Path) -> None:
    lock = d / ".lock"
    with pytest.raises(RuntimeError), flocked(lock):
        raise RuntimeError("boom")
    assert not is_locked(lock)


def test_the_lock_serialises_read_modify_write_between_threads(d: Path) -> None:
    counter = d / "counter"
    counter.write_text("0")
    lock = d / ".lock"

    def bump() -> None:
        for _ in range(100):
            with flocked(lock):
                counter.write_text(str(int(counter.read_text()) + 1))

    threads = [threading.Thread(target=bump) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert counter.read_text() == "400"


def test_is_locked_sees_an_exclusive_holder_only(d: Path) -> None:
    lock = d / "supervisor.lock"
    assert is_locked(lock) is False             # no file: nobody holds it
    assert not lock.exists()                     # and asking creates nothing
    with flocked(lock):
        assert is_locked(lock) is True
    assert is_locked(lock) is False
    with flocked(lock, exclusive=False):
        assert is_locked(lock) is False          # a reader's shared lock is no holder


def test_lock_within_times_out_with_a_sentence_naming_the_lock(d: Path) -> None:
    lock = d / ".recover.lock"
    with flocked(lock), pytest.raises(TimeoutError) as exc:
        lock_within(lock, 0.05, poll_s=0.01)
    assert str(exc.value) == f"{lock} is held by another process"


def test_lock_within_gets_the_lock_once_the_holder_lets_go(d: Path) -> None:
    lock = d / ".lock"
    held = threading.Event()
    release = threading.Event()

    def holder() -> None:
        with flocked(lock):
            held.set()
            release.wait(5)

    t = threading.Thread(target=holder)
    t.start()
    held.wait(5)
    threading.Timer(0.05, release.set).start()
    fd = lock_within(lock, 5.0, poll_s=0.01)
    try:
        assert is_locked(lock)
    finally:
        os.close(fd)
    t.join()
    assert not is_locked(lock)


def test_fsync_dir_refuses_a_file(d: Path) -> None:
    f = d / "f"
    f.write_text("x")
    with pytest.raises(NotADirectoryError):
        atomic.fsync_dir(f)

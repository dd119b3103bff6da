"""A full, failing or read-only disk (issue 15): every command says so in one sentence and exits
1, read commands never write (they work on a read-only home), and nothing partial is left: no
temp file, no torn event line. On a real 2 MiB tmpfs (tests/reliability/conftest.py)."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from tests.helpers import git, one_line, wait_until, zen
from tests.reliability.conftest import SmallFs
from tests.supervisor.conftest import Supervisors
from tests.supervisor.util import gap_free, snap, types, wait_state
from zen.adapters.tmux import Tmux
from zen.store import spool
from zen.store.home import Home
from zen.store.jobs import JobStore, load_task_text


def queued_job(home: Path, name: str) -> str:
    """A job record as the supervisor's intake makes it."""
    job_id = zen("dispatch", f"work on {name}", "--name", name).stdout.strip()
    h = Home(home)
    claimed = spool.claim(h, h.spool_new / f"{job_id}.yaml")
    assert claimed is not None
    JobStore(h).create(load_task_text(claimed.read_text(), str(claimed)))
    return job_id


def tree(root: Path) -> dict[str, tuple[int, int]]:
    """Every file and folder under `root` with its size and mtime: what a write would change."""
    out = {}
    for p in sorted(root.rglob("*")):
        if p.name.startswith("filler"):
            continue
        st = p.lstat()
        out[str(p.relative_to(root))] = (st.st_size if p.is_file() else 0, st.st_mtime_ns)
    return out


def leftovers(root: Path) -> list[str]:
    """Temp files a write cut short would leave: `.name.xxxx` beside a file, or anything in spool/tmp."""
    found = [str(p) for p in root.rglob(".*.*") if p.is_file() and not p.name.endswith(".lock")
             and p.name not in (".guard-cache.json", ".gitignore", ".config-cache.json", ".index.json", ".cursor.json")]
    found += [str(p) for p in (root / "spool" / "tmp").iterdir()]
    return found


def read_commands(job_id: str) -> list[tuple[str, ...]]:
    return [("status",), ("status", "--json"), ("show", job_id), ("show", job_id, "--json"), ("log", job_id),
            ("log", job_id, "--json"), ("queue",), ("queue", "--json"), ("doctor",), ("doctor", "--json")]


def test_read_commands_write_nothing_and_work_on_a_read_only_home(fs_home: Path, small_fs: SmallFs) -> None:
    job_id = queued_job(fs_home, "reader")
    store = JobStore(Home(fs_home))
    # a state.json behind its timeline (as a hook's append leaves it): a reader must not refresh it
    store.append(job_id, "worktree.created", path="/w", branch="b", base_commit="c")
    store.append(job_id, "agent.spawned", session="s", target="%1")
    zen("dispatch", "still pending", "--name", "pending")
    before = tree(fs_home)
    for cmd in read_commands(job_id):
        r = zen(*cmd)
        assert r.returncode == 0 and "Traceback" not in r.stderr, (cmd, r.stderr)
    assert tree(fs_home) == before, "a read command wrote into the home"

    small_fs.remount("ro")
    try:
        for cmd in read_commands(job_id):
            r = zen(*cmd)
            assert r.returncode == 0 and r.stderr.strip() == "", (cmd, r.stderr)
        shown = json.loads(zen("show", job_id, "--json").stdout)
        assert shown["state"]["state"] == "working"     # folded from the timeline, in memory
        # a command that must write says why it cannot, in one sentence
        r = zen("dispatch", "a new task", "--name", "nope")
        assert r.returncode == 1 and one_line(r.stderr) and "read-only filesystem" in r.stderr, r.stderr
    finally:
        small_fs.remount("rw")
    assert tree(fs_home) == before


WRITERS = [
    ("dispatch", "more work", "--name", "more"),
    ("cancel", "{job}"),
    ("kill-switch", "--reason", "disk full drill"),
    ("kill-switch", "--release"),
    ("lane", "add", "other", "{repo}"),
    ("doctor", "--rebuild"),
    ("accept", "{job}"),
    ("init", "{fs}/another-home"),
]


def test_a_full_disk_gets_one_sentence_from_every_command_and_leaves_nothing_partial(
        fs_home: Path, small_fs: SmallFs, git_repo: Path) -> None:
    job_id = queued_job(fs_home, "victim")
    store = JobStore(Home(fs_home))
    events = store.events_path(job_id)
    # leave the timeline's last page nearly full: the next event can only be written in part
    while (4096 - events.stat().st_size % 4096) > 120:
        store.append(job_id, "turn.working", by="padding")
    timeline = events.read_bytes()
    small_fs.fill()
    before = tree(fs_home)
    for cmd in WRITERS:
        args = [a.format(job=job_id, repo=git_repo, fs=small_fs.root) for a in cmd]
        r = zen(*args)
        assert r.returncode == 1, (args, r.returncode, r.stdout, r.stderr)
        assert one_line(r.stderr) and "Traceback" not in r.stderr, (args, r.stderr)
        assert "crash" not in r.stderr, (args, r.stderr)
    assert events.read_bytes() == timeline, "a failed append left part of a line"
    assert leftovers(fs_home) == []
    # the kill switch engaged even so (an empty control/KILL: the guardian asks only that it
    # exists), and its release was refused, since it could not be recorded
    assert (fs_home / "control" / "KILL").exists()
    after = tree(fs_home)
    new_files = {k for k in set(after) - set(before) if after[k][0] > 0}
    assert new_files == set(), new_files       # at most empty files (a lock, a log a failed append made)

    small_fs.free()
    r = zen("doctor", "--json")
    assert r.returncode == 0 and all(rep["ok"] for rep in json.loads(r.stdout)["jobs"]), r.stdout
    r = zen("cancel", job_id)
    assert r.returncode == 0, r.stderr
    assert store.snapshot(job_id).state.value == "cancelled"
    assert zen("dispatch", "more work", "--name", "more").returncode == 0


def test_the_kill_switch_engages_on_a_full_disk(fs_home: Path, small_fs: SmallFs) -> None:
    queued_job(fs_home, "watched")
    small_fs.fill()
    r = zen("kill-switch", "--reason", "drill")
    assert r.returncode == 1 and one_line(r.stderr)
    assert "the kill switch is engaged" in r.stderr and "no space left" in r.stderr
    assert (fs_home / "control" / "KILL").exists()
    status = zen("status")
    assert status.returncode == 0 and "KILL SWITCH ENGAGED" in status.stdout + status.stderr
    small_fs.free()
    assert zen("kill-switch", "--release").returncode == 0


@pytest.mark.parametrize("where", ["home logs", "nowhere"])
def test_a_crash_log_that_cannot_be_written_goes_to_stderr(fs_home: Path, small_fs: SmallFs, where: str) -> None:
    """A bug on a full disk: the traceback is printed, not lost, and zen still exits 3."""
    # a bug on demand: zen.yaml's lanes as a list, which nothing in zen expects
    cfg = fs_home / "zen.yaml"
    cfg.write_text(cfg.read_text().replace("lanes:\n", "lanes: [1, 2]\nold_lanes:\n"))
    if where == "home logs":
        r = zen("dispatch", "x", "--name", "x")
        assert r.returncode == 3 and one_line(r.stderr) and "unexpected error; the details are in" in r.stderr
        log = Path(r.stderr.strip().rsplit(" ", 1)[-1])
        assert log.parent == fs_home / "logs" and "Traceback" in log.read_text()
        return
    small_fs.fill()
    # every place a crash log could go is on the full disk
    r = zen("dispatch", "x", "--name", "x", env={"XDG_STATE_HOME": str(small_fs.root / "state"),
                                                "TMPDIR": str(small_fs.root)})
    assert r.returncode == 3, r.stderr
    assert "Traceback" in r.stderr and "no crash log could be written: the details are above" in r.stderr
    assert leftovers(fs_home) == [] and not list((fs_home / "logs").glob("crash-*"))


def test_a_harvest_cut_short_by_a_full_disk_completes_once_space_returns(fs_home: Path, small_fs: SmallFs,
                                                                      git_repo: Path, tmp_path: Path) -> None:
    """The agent ends while the home's disk is full: its exit or its harvest cannot be recorded.
    The supervisor keeps running, tries again, and harvests the work once space is back."""
    gate = tmp_path / "gate"
    sups = Supervisors(fs_home, tmp_path)
    try:
        sups.start()
        script = f"echo made > made.txt; while [ ! -e {gate} ]; do sleep 0.05; done; exit 0"
        r = zen("dispatch", "make a file", "--name", "full-disk", "--cmd", f"sh -c '{script}'")
        assert r.returncode == 0, r.stderr
        job = r.stdout.strip()
        wait_state(fs_home, job, "working", "waiting")
        made = fs_home / "worktrees" / job / "made.txt"
        wait_until(lambda: made.exists() and made.read_text() == "made\n", timeout=10, message="the agent's file")
        small_fs.fill()
        gate.touch()
        tmux = Tmux.for_home(Home(fs_home))
        wait_until(lambda: (p := tmux.pane(f"zen-{job}")) is None or p.dead, timeout=10, message="the agent to end")
        # the supervisor tries to record the end and the harvest now, and cannot
        wait_until(lambda: "harvest.failed" in types(fs_home, job) or "agent.exited" not in types(fs_home, job),
                   timeout=10)
        time.sleep(1.5)  # a few of its tries, on a full disk
        assert snap(fs_home, job).state.value != "harvested"
        assert sups.procs[0].poll() is None, "the supervisor died of the full disk"
        small_fs.free()
        s = wait_state(fs_home, job, "harvested", timeout=60)
        assert s.exit_code == 0
        assert git(git_repo, "show", f"zen/review/{job}:made.txt") == "made"
        kinds = types(fs_home, job)
        assert kinds.count("agent.exited") == 1 and kinds.count("harvest.done") == 1, kinds
        assert gap_free(fs_home, job)
        assert leftovers(fs_home) == []
    finally:
        sups.close()


def _room_in_timeline(store: JobStore, job: str, room: int) -> None:
    """Pad the timeline (neutral padding events) until its last page has at least `room` bytes
    free (room > 0), or less than -room (room < 0): on a full tmpfs an append fits only there."""
    path = store.events_path(job)
    free = lambda: 4096 - path.stat().st_size % 4096  # noqa: E731
    while (free() < room) if room > 0 else (free() >= -room):
        store.append(job, "turn.working", by="padding")


def _cancel_on_a_full_disk(fs_home: Path, small_fs: SmallFs, sups: Supervisors, room: int) -> tuple[str, Path]:
    """A running cmd agent that made a file and waits for input; the disk filled with `room`
    bytes left in its timeline's last page; then `zen cancel`. Returns (job, the cancel's stderr)."""
    r = zen("dispatch", "make a file", "--name", "cancel-full", "--cmd", "sh -c 'echo made > made.txt; read x'")
    assert r.returncode == 0, r.stderr
    job = r.stdout.strip()
    wait_state(fs_home, job, "waiting", timeout=30)
    # and the coordinator has compared its files at the turn's end: nothing else appends now
    wait_until(lambda: any(e["type"] == "files.changed" and "made.txt" in e["paths"]
                           for e in JobStore(Home(fs_home)).events(job)), timeout=20)
    store = JobStore(Home(fs_home))
    _room_in_timeline(store, job, room)
    small_fs.fill()
    r = zen("cancel", job)
    assert one_line(r.stderr + r.stdout) and "Traceback" not in r.stderr, r.stderr
    assert sups.procs[-1].poll() is None, "the supervisor died of the full disk"
    return job, r


@pytest.mark.parametrize("supervisor", ["kept running", "restarted"])
def test_a_cancel_on_a_full_disk_is_harvested_once_space_returns(fs_home: Path, small_fs: SmallFs, git_repo: Path,
                                                                 tmp_path: Path, supervisor: str) -> None:
    """The cancel is recorded and the agent stopped, but its harvest cannot be written: once space
    is back it completes by itself (the running supervisor tries again; a restarted one finds the
    harvest still due), and a second `zen cancel`, as the first one's sentence advised, finishes it too."""
    sups = Supervisors(fs_home, tmp_path)
    try:
        first = sups.start()
        job, r = _cancel_on_a_full_disk(fs_home, small_fs, sups, room=2048)
        assert r.returncode == 1 and "no space left" in r.stderr, (r.returncode, r.stderr)
        kinds = types(fs_home, job)
        assert "job.cancelled" in kinds and "harvest.done" not in kinds, kinds
        tmux = Tmux.for_home(Home(fs_home))
        wait_until(lambda: (p := tmux.pane(f"zen-{job}")) is None or p.dead, timeout=10, message="the agent to stop")
        time.sleep(1.5)  # a few of the supervisor's tries, on a full disk
        assert "harvest.done" not in types(fs_home, job)
        if supervisor == "restarted":
            assert sups.stop(first) == 0
            small_fs.free()
            sups.start()
        else:
            small_fs.free()
        s = wait_state(fs_home, job, "cancelled", timeout=10)
        wait_until(lambda: "harvest.done" in types(fs_home, job), timeout=60, message="the harvest, space back")
        s = snap(fs_home, job)
        assert s.state.value == "cancelled" and s.review_branch == f"zen/review/{job}"
        assert git(git_repo, "show", f"zen/review/{job}:made.txt") == "made"
        kinds = types(fs_home, job)
        assert kinds.count("job.cancelled") == 1 and kinds.count("agent.exited") == 1, kinds
        assert kinds.count("harvest.done") == 1, kinds
        assert gap_free(fs_home, job)
        assert leftovers(fs_home) == []
        r = zen("cancel", job)
        assert r.returncode == 1 and one_line(r.stderr) and "already cancelled" in r.stderr
    finally:
        sups.close()


def test_a_cancel_cut_short_by_a_full_disk_is_finished_by_cancelling_again(fs_home: Path, small_fs: SmallFs,
                                                                          git_repo: Path, tmp_path: Path) -> None:
    """No supervisor to try again: the cancel stopped the agent but could not harvest; its
    sentence says to run it again once space is free, and that run harvests."""
    sups = Supervisors(fs_home, tmp_path)
    try:
        sups.start()
        job, r = _cancel_on_a_full_disk(fs_home, small_fs, sups, room=2048)
        assert r.returncode == 1 and "run it again" in r.stderr, r.stderr
        assert sups.stop(sups.procs[0]) == 0
        small_fs.free()
        r = zen("cancel", job)
        assert r.returncode == 0 and "cancelled" in r.stdout, r.stderr
        s = snap(fs_home, job)
        assert s.state.value == "cancelled" and s.review_branch == f"zen/review/{job}"
        assert git(git_repo, "show", f"zen/review/{job}:made.txt") == "made"
        kinds = types(fs_home, job)
        assert kinds.count("job.cancelled") == 1 and kinds.count("harvest.done") == 1, kinds
    finally:
        sups.close()


def test_a_cancel_that_cannot_be_recorded_changes_nothing(fs_home: Path, small_fs: SmallFs, git_repo: Path,
                                                         tmp_path: Path) -> None:
    """Not even job.cancelled fits: the cancel says so and leaves the agent running, as recorded;
    once space is back the same cancel stops and harvests it."""
    sups = Supervisors(fs_home, tmp_path)
    try:
        sups.start()
        job, r = _cancel_on_a_full_disk(fs_home, small_fs, sups, room=-120)
        assert r.returncode == 1 and "no space left" in r.stderr, r.stderr
        assert "job.cancelled" not in types(fs_home, job)
        p = Tmux.for_home(Home(fs_home)).pane(f"zen-{job}")
        assert p is not None and not p.dead, "the agent was stopped by a cancel that is not on record"
        small_fs.free()
        r = zen("cancel", job)
        assert r.returncode == 0, r.stderr
        wait_until(lambda: "harvest.done" in types(fs_home, job), timeout=30)
        assert snap(fs_home, job).state.value == "cancelled"
        assert git(git_repo, "show", f"zen/review/{job}:made.txt") == "made"
    finally:
        sups.close()

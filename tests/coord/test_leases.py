"""The lease store (zen.coord.leases) and the lease commands (zen lock, unlock, locks)."""

from __future__ import annotations

import json
import multiprocessing
from pathlib import Path

import pytest

from tests.coord.util import events, make_job, set_state
from tests.helpers import one_line, zen, zen_json
from zen.coord import leases
from zen.errors import Conflict


@pytest.mark.parametrize("a,b,expected", [
    ("src/a.py", "src/a.py", True), ("src/a.py", "src/b.py", False),
    ("src/**", "src/a.py", True), ("src/*.py", "src/deep/a.py", True), ("src/*.py", "src/a.md", False),
    ("src/**", "srcx/a.py", False), ("*.md", "README.md", True), ("docs/**", "src/*.py", False),
    ("src/*.py", "src/a*", True), ("src/*.py", "src/*.md", False), ("src/auth/**", "src/**", True),
    ("src/[ab].py", "src/a.py", True), ("src/[ab].py", "src/c.py", False),
])
def test_overlap_is_exact_for_files_and_symmetric_for_globs(a: str, b: str, expected: bool) -> None:
    assert leases.overlaps(a, b) is expected and leases.overlaps(b, a) is expected


def test_paths_are_normalised_and_must_stay_inside() -> None:
    assert leases.normalize("./src//a.py") == "src/a.py"
    assert leases.normalize("src/") == "src/**"
    for bad in ("", "/etc/passwd", "..", "../x", "src/../../x", "."):
        with pytest.raises(leases.LeaseError):
            leases.normalize(bad)


def test_exclusive_and_shared(home: Path) -> None:
    for j in ("ja", "jb", "jc"):
        make_job(home, j)
    a = leases.acquire(home, "app", "ja", "src/a.py")
    with pytest.raises(Conflict, match="job ja"):
        leases.acquire(home, "app", "jb", "src/a.py")
    with pytest.raises(Conflict, match="job ja"):
        leases.acquire(home, "app", "jb", "src/**", mode=leases.SHARED)
    again = leases.acquire(home, "app", "ja", "src/a.py")            # the holder renews
    assert again["id"] == a["id"] and again["revision"] == 2 and again["expires"] >= a["expires"]
    s1 = leases.acquire(home, "app", "jb", "docs/**", mode=leases.SHARED)
    s2 = leases.acquire(home, "app", "jc", "docs/**", mode=leases.SHARED)
    assert s1["id"] != s2["id"]
    with pytest.raises(Conflict):
        leases.acquire(home, "app", "ja", "docs/intro.md")
    conflicts, own, shared = leases.blocking(home, "app", "jb", ["src/a.py", "docs/x.md", "src/b.py"])
    assert [(t, x["job"]) for t, x in conflicts] == [("src/a.py", "ja")]
    assert own == {"docs/x.md"} and shared == {"docs/x.md"}
    assert [e["path"] for e in events(home, "ja", "lock.acquired")] == ["src/a.py", "src/a.py"]


def _race(home: str, job: str, q: multiprocessing.Queue) -> None:
    try:
        leases.acquire(home, "app", job, "src/hot.py")
        q.put(job)
    except Conflict:
        q.put(None)


def test_of_many_jobs_racing_for_one_file_exactly_one_gets_it(home: Path) -> None:
    jobs = [f"j{i}" for i in range(8)]
    for j in jobs:
        make_job(home, j)
    q: multiprocessing.Queue = multiprocessing.Queue()
    procs = [multiprocessing.get_context("fork").Process(target=_race, args=(str(home), j, q)) for j in jobs]
    for p in procs:
        p.start()
    for p in procs:
        p.join(20)
    winners = [w for w in (q.get(timeout=5) for _ in jobs) if w]
    assert len(winners) == 1
    [lease] = leases.all_leases(home)
    assert lease["job"] == winners[0]


def test_release_renew_and_reconcile(home: Path) -> None:
    for j in ("ja", "jb"):
        make_job(home, j)
    leases.acquire(home, "app", "ja", "src/a.py")
    leases.acquire(home, "app", "ja", "src/b.py", ttl_s=60, fixed=True)
    leases.acquire(home, "app", "jb", "src/c.py")
    before = {x["path"]: x for x in leases.all_leases(home)}
    assert leases.renew_job(home, "ja") == 1                      # the fixed one keeps its expiry
    after = {x["path"]: x for x in leases.all_leases(home)}
    assert after["src/a.py"]["revision"] == 2 and after["src/b.py"] == before["src/b.py"]
    set_state(home, "jb", "cancelled")
    gone = leases.reconcile(home)
    assert [x["path"] for x in gone] == ["src/c.py"]
    assert events(home, "jb", "lock.released")[-1]["why"] == "job ended"
    done = leases.release_job(home, "ja", "exited")
    assert sorted(x["path"] for x in done) == ["src/a.py", "src/b.py"] and leases.all_leases(home) == []


def test_zen_lock_unlock_locks(home: Path) -> None:
    for j in ("20261201T100000Z-alpha-0001", "20261201T100001Z-beta-0002"):
        make_job(home, j)
    a, b = "20261201T100000Z-alpha-0001", "20261201T100001Z-beta-0002"
    got = zen_json("lock", "alpha", "src/auth/", "--reason", "auth rewrite")
    assert got["job"] == a and got["path"] == "src/auth/**" and got["mode"] == "exclusive" and got["live"]
    lease_file = home / "coord" / "app" / "leases" / f"{got['id']}.json"
    assert json.loads(lease_file.read_text())["reason"] == "auth rewrite"
    r = zen("lock", "beta", "src/auth/login.py")
    assert r.returncode == 1 and one_line(r.stderr) and a in r.stderr and "until" in r.stderr
    abs_path = str(home / "worktrees" / b / "docs" / "guide.md")
    assert zen_json("lock", "beta", abs_path, "--shared", "--ttl", "10m")["path"] == "docs/guide.md"
    listed = zen_json("locks")
    assert [(x["path"], x["job"]) for x in listed] == [("docs/guide.md", b), ("src/auth/**", a)]
    assert zen_json("locks", "--lane", "other") == []
    text = zen("locks").stdout
    assert "src/auth/**" in text and "auth rewrite" in text
    for bad in (("lock", "alpha", "/etc/passwd"), ("lock", "alpha", "../x"), ("lock", "nobody", "x"),
                ("lock", "alpha", "x", "--ttl", "soon"), ("unlock", "--id", "nope"), ("unlock",)):
        r = zen(*bad)
        assert r.returncode in (1, 2) and one_line(r.stderr) and "Traceback" not in r.stderr, bad
    assert [x["path"] for x in zen_json("unlock", "alpha")] == ["src/auth/**"]
    assert events(home, a, "lock.released")[-1]["why"] == "released by a human"
    assert [x["path"] for x in zen_json("unlock", "--id", listed[0]["id"][:8])] == ["docs/guide.md"]
    assert zen_json("locks") == [] and "no leases" in zen("locks").stdout
    set_state(home, a, "harvested")
    r = zen("lock", "alpha", "src/x.py")
    assert r.returncode == 1 and "harvested" in r.stderr


def test_zen_changes_lists_lease_events_since(home: Path) -> None:
    make_job(home, "ja")
    leases.acquire(home, "app", "ja", "src/a.py")
    rows = zen_json("changes")
    assert [(r["id"], r["type"], r["path"]) for r in rows] == [("ja:1", "lock.acquired", "src/a.py")]
    assert zen_json("changes", "--since", "1h")[0]["id"] == "ja:1"
    assert zen_json("changes", "--since", "2999-01-01T00:00:00Z") == []
    r = zen("changes", "--since", "yesterday-ish")
    assert r.returncode == 2 and one_line(r.stderr)
    assert "lock.acquired" in zen("changes").stdout

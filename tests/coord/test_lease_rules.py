"""The lease store's rules, called in-process on a home of plain files: who may take what, what
a refusal says, expiry and ended holders, renewal, release (exact and by prefix), the lease
file's format, and the guardian's `blocking` question."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.coord.util import events, make_job, set_state
from zen.coord import leases
from zen.coord.leases import EXCLUSIVE, SHARED, LeaseConflict, LeaseError
from zen.errors import Conflict


@pytest.fixture
def h(tmp_path: Path) -> Path:
    """A home with just what leases read: job records (task.yaml, state.json)."""
    root = tmp_path / "zh"
    for job in ("ja", "jb", "jc"):
        make_job(root, job)
    return root


def lease_files(home: Path, lane: str = "app") -> list[str]:
    d = Path(leases.leases_dir(home, lane))
    return sorted(p.name for p in d.glob("*.json")) if d.is_dir() else []


# -- names and matching --------------------------------------------------------------------------

def test_a_lane_name_is_its_folder_and_a_repo_path_gets_a_stable_slug() -> None:
    assert leases.lane_slug("app") == "app"
    slug = leases.lane_slug("repo:/home/u/project")
    assert slug.startswith("repo-") and slug == leases.lane_slug("repo:/home/u/project")
    assert slug != leases.lane_slug("repo:/home/u/other")
    for odd in (".hidden", "outbox", "x" * 101, "", "a/b"):
        assert leases.lane_slug(odd).startswith("repo-"), odd


def test_exclusive_ids_are_per_path_and_shared_ids_per_holder() -> None:
    # one file name per path for exclusive leases: creating it exclusively is the mutual exclusion
    assert leases.lease_id("src/a.py", EXCLUSIVE, "ja") == leases.lease_id("src/a.py", EXCLUSIVE, "jb")
    assert leases.lease_id("src/a.py", SHARED, "ja") != leases.lease_id("src/a.py", SHARED, "jb")
    assert leases.lease_id("src/a.py", SHARED, "ja").startswith(leases.lease_id("src/a.py", EXCLUSIVE, "ja"))
    assert leases.lease_id("src/*.py", EXCLUSIVE, "ja").startswith("g")
    assert not leases.lease_id("src/a.py", EXCLUSIVE, "ja").startswith("g")


@pytest.mark.parametrize("a,b,expected", [
    ("src/**", "src/**/test_*.py", True),
    ("src/*.py", "lib/*.py", False),          # literal heads that cannot meet
    ("*.py", "src/*", True),                  # two globs: conservative, they may meet
    ("docs/*.md", "docs/*.rst", False),       # literal tails that cannot meet
    ("a/?/c.txt", "a/b/c.txt", True),
    ("a/?/c.txt", "a/bb/c.txt", False),
    ("src/a.py", "src/a.pyc", False),         # a file is not a prefix
    ("SRC/a.py", "src/a.py", False),          # case matters
])
def test_overlap_of_more_globs(a: str, b: str, expected: bool) -> None:
    assert leases.overlaps(a, b) is expected and leases.overlaps(b, a) is expected


@pytest.mark.parametrize("raw,norm", [("src/./a.py", "src/a.py"), ("src/x/../a.py", "src/a.py"),
                                      ("  docs/  ", "docs/**"), ("ünï/ç.py", "ünï/ç.py")])
def test_more_spellings_of_one_path(raw: str, norm: str) -> None:
    assert leases.normalize(raw) == norm


def test_a_bad_path_or_mode_is_a_sentence(h: Path) -> None:
    with pytest.raises(LeaseError, match="is absolute; a lease names a path inside the repository"):
        leases.acquire(h, "app", "ja", "/etc/passwd")
    with pytest.raises(LeaseError, match="is not a path inside the repository"):
        leases.acquire(h, "app", "ja", "src/../../x")
    with pytest.raises(LeaseError, match="a lease needs a path"):
        leases.acquire(h, "app", "ja", "   ")
    with pytest.raises(LeaseError, match="mode must be exclusive or shared, not 'rw'"):
        leases.acquire(h, "app", "ja", "src/a.py", mode="rw")
    assert lease_files(h) == []


# -- taking --------------------------------------------------------------------------------------

def test_the_lease_file_says_everything_about_the_lease(h: Path) -> None:
    lease = leases.acquire(h, "app", "ja", "src/", ttl_s=120, reason="refactor auth", by="guard")
    [name] = lease_files(h)
    text = (Path(leases.leases_dir(h, "app")) / name).read_text()
    assert text.endswith("}\n") and json.loads(text) == lease
    assert name == f"{lease['id']}.json"
    assert {k: lease[k] for k in ("v", "lane", "job", "path", "glob", "mode", "reason", "by", "ttl_s",
                                  "fixed", "revision")} == {
        "v": 1, "lane": "app", "job": "ja", "path": "src/**", "glob": True, "mode": "exclusive",
        "reason": "refactor auth", "by": "guard", "ttl_s": 120, "fixed": False, "revision": 1}
    assert lease["created"] < lease["expires"]
    [ev] = events(h, "ja", "lock.acquired")
    assert ev["path"] == "src/**" and ev["lease"] == lease["id"] and ev["by"] == "guard" and "renewed" not in ev


def test_renewing_keeps_the_creation_time_and_counts_revisions(h: Path) -> None:
    first = leases.acquire(h, "app", "ja", "src/a.py", ttl_s=10)
    second = leases.acquire(h, "app", "ja", "./src/a.py", ttl_s=1000)
    assert second["id"] == first["id"] and second["created"] == first["created"]
    assert second["revision"] == 2 and second["expires"] > first["expires"]
    assert events(h, "ja", "lock.acquired")[-1]["renewed"] is True
    assert len(lease_files(h)) == 1


@pytest.mark.parametrize("held,asked,path,message", [
    ("src/a.py", EXCLUSIVE, "src/a.py", "src/a.py is leased exclusive by job ja until "),
    ("src/**", EXCLUSIVE, "src/deep/b.py", "src/deep/b.py falls under src/**, which is leased exclusive by job ja"),
    ("src/a.py", EXCLUSIVE, "src/*.py", "src/*.py reaches src/a.py, which is leased exclusive by job ja"),
    ("src/**", SHARED, "src/*.py", "src/*.py falls under src/**, which is leased exclusive by job ja"),
])
def test_a_refusal_names_the_holder_its_path_and_expiry(h: Path, held: str, asked: str, path: str,
                                                         message: str) -> None:
    lease = leases.acquire(h, "app", "ja", held)
    with pytest.raises(LeaseConflict) as exc:
        leases.acquire(h, "app", "jb", path, mode=asked)
    text = str(exc.value)
    assert text.startswith(message) and text.endswith(lease["expires"]) and "\n" not in text
    assert exc.value.lease["id"] == lease["id"] and isinstance(exc.value, Conflict)
    assert events(h, "jb") == []                              # a refused job's timeline is untouched


def test_shared_leases_coexist_and_exclude_an_exclusive_one_both_ways(h: Path) -> None:
    leases.acquire(h, "app", "ja", "docs/**", mode=SHARED)
    leases.acquire(h, "app", "jb", "docs/intro.md", mode=SHARED)
    with pytest.raises(LeaseConflict, match="leased shared by job ja"):
        leases.acquire(h, "app", "jc", "docs/a.md")
    leases.acquire(h, "app", "jc", "src/x.py")
    with pytest.raises(LeaseConflict, match="leased exclusive by job jc"):
        leases.acquire(h, "app", "ja", "src/*", mode=SHARED)
    assert len(lease_files(h)) == 3


def test_a_job_may_nest_its_own_leases(h: Path) -> None:
    glob = leases.acquire(h, "app", "ja", "src/**")
    inner = leases.acquire(h, "app", "ja", "src/a.py")
    assert glob["id"] != inner["id"] and len(lease_files(h)) == 2


def test_changing_a_leases_mode_replaces_it_without_a_release_event(h: Path) -> None:
    excl = leases.acquire(h, "app", "ja", "src/a.py")
    shared = leases.acquire(h, "app", "ja", "src/a.py", mode=SHARED)
    assert shared["id"] != excl["id"] and lease_files(h) == [f"{shared['id']}.json"]
    assert shared["revision"] == 1 and events(h, "ja", "lock.released") == []
    # and now another job may share it
    leases.acquire(h, "app", "jb", "src/a.py", mode=SHARED)


def test_an_expired_lease_is_taken_over_and_its_end_recorded_for_its_holder(h: Path) -> None:
    old = leases.acquire(h, "app", "ja", "src/a.py", ttl_s=-1)
    new = leases.acquire(h, "app", "jb", "src/a.py")
    assert new["job"] == "jb" and new["id"] == old["id"] and new["revision"] == 1
    [ev] = events(h, "ja", "lock.released")
    assert ev["why"] == "expired" and ev["path"] == "src/a.py"


def test_an_ended_holders_lease_is_taken_over(h: Path) -> None:
    leases.acquire(h, "app", "ja", "src/**")
    for state in ("exited", "harvested", "failed", "cancelled"):
        set_state(h, "ja", state)
        assert not leases.holder_alive(h, "ja")
    leases.acquire(h, "app", "jb", "src/a.py")
    assert events(h, "ja", "lock.released")[-1]["why"] == "holder ended"
    assert [x["job"] for x in leases.all_leases(h)] == ["jb"]


def test_a_holder_is_alive_while_its_record_is(h: Path) -> None:
    assert leases.holder_alive(h, "ja")
    (h / "jobs" / "ja" / "state.json").unlink()
    assert leases.holder_alive(h, "ja")                        # task.yaml, no state yet: starting
    assert not leases.holder_alive(h, "nobody")
    set_state(h, "jb", "waiting")
    assert leases.holder_alive(h, "jb")


def test_a_stale_file_of_another_job_under_the_exclusive_name_is_a_conflict(h: Path) -> None:
    """The exclusive file is created exclusively: a file of another job under that name (one not
    matched while listing, as when another process wrote it meanwhile) is a conflict, not taken."""
    lease = leases.acquire(h, "app", "ja", "src/a.py")
    d = Path(leases.leases_dir(h, "app"))
    data = json.loads((d / f"{lease['id']}.json").read_text())
    data["path"] = "elsewhere.py"            # listed under another path: not a candidate by overlap
    (d / f"{lease['id']}.json").write_text(json.dumps(data))
    with pytest.raises(LeaseConflict, match="job ja"):
        leases.acquire(h, "app", "jb", "src/a.py")


def test_leases_in_a_repo_lane_live_under_its_slug(h: Path) -> None:
    lane = "repo:/srv/code/app"
    lease = leases.acquire(h, "app", "ja", "src/a.py")
    other = leases.acquire(h, lane, "jb", "src/a.py")         # another lane: no conflict
    assert other["lane"] == lane and lease["lane"] == "app"
    assert leases.lanes(h) == sorted(["app", leases.lane_slug(lane)])
    assert [x["job"] for x in leases.all_leases(h, lane)] == ["jb"]
    assert len(leases.all_leases(h)) == 2


# -- reading -------------------------------------------------------------------------------------

def test_garbled_and_hidden_files_are_not_leases(h: Path) -> None:
    leases.acquire(h, "app", "ja", "src/a.py")
    d = Path(leases.leases_dir(h, "app"))
    (d / "torn.json").write_text('{"path": "src/b.py", "job"')
    (d / "list.json").write_text("[1, 2]")
    (d / "nopath.json").write_text('{"job": "jb"}')
    (d / ".tmp-x.json").write_text(json.dumps({"path": "src/c.py", "job": "jb"}))
    (d / "notes.txt").write_text("hi")
    (h / "coord" / ".hidden").mkdir()
    (h / "coord" / "outbox").mkdir()
    (h / "coord" / "stray-file").write_text("")
    assert [x["path"] for x in leases.lane_leases(h, "app")] == ["src/a.py"]
    assert [x["path"] for x in leases.all_leases(h)] == ["src/a.py"]
    assert "outbox" not in leases.lanes(h) and ".hidden" not in leases.lanes(h)
    leases.acquire(h, "app", "jb", "src/b.py")                # a torn file blocks nothing


def test_a_home_without_leases(tmp_path: Path) -> None:
    assert leases.all_leases(tmp_path) == [] and leases.lanes(tmp_path) == []
    assert leases.blocking(tmp_path, "app", "ja", ["src/a.py"]) == ([], set(), set())
    assert leases.reconcile(tmp_path) == [] and leases.renew_job(tmp_path, "ja") == 0


# -- the guardian's question ---------------------------------------------------------------------

def test_blocking_ignores_expired_leases_and_ended_holders(h: Path) -> None:
    leases.acquire(h, "app", "ja", "src/a.py", ttl_s=-1)
    leases.acquire(h, "app", "jb", "src/b.py")
    set_state(h, "jb", "exited")
    leases.acquire(h, "app", "jc", "lib/**")
    conflicts, own, shared = leases.blocking(h, "app", "ja", ["src/a.py", "src/b.py", "lib/x/y.py"])
    assert [(t, x["job"]) for t, x in conflicts] == [("lib/x/y.py", "jc")]
    assert own == set() and shared == set()                   # its own lease expired: not held either


def test_blocking_of_a_glob_target_reads_every_lease(h: Path) -> None:
    leases.acquire(h, "app", "jb", "src/deep/a.py")
    leases.acquire(h, "app", "jc", "docs/**", mode=SHARED)
    leases.acquire(h, "app", "ja", "tests/**")
    conflicts, own, shared = leases.blocking(h, "app", "ja", ["src/*", "docs/*.md", "tests/test_x.py"])
    assert [(t, x["path"]) for t, x in conflicts] == [("src/*", "src/deep/a.py")]
    assert shared == {"docs/*.md"} and own == {"tests/test_x.py"}


def test_blocking_agrees_with_acquire(h: Path) -> None:
    leases.acquire(h, "app", "jb", "src/**")
    leases.acquire(h, "app", "jc", "docs/a.md", mode=SHARED)
    for target in ("src/x.py", "docs/a.md", "README.md", "docs/*"):
        conflicts, _, shared = leases.blocking(h, "app", "ja", [target])
        try:
            leases.acquire(h, "app", "ja", target, mode=SHARED)
            took = True
        except LeaseConflict:
            took = False
        assert took == (not conflicts), target
        if took:
            leases.release_job(h, "ja", "test", [target])
        assert (target in shared) == (target in ("docs/a.md", "docs/*"))


# -- ending --------------------------------------------------------------------------------------

def test_an_exact_release_leaves_a_lease_renewed_meanwhile(h: Path) -> None:
    seen = leases.acquire(h, "app", "ja", "src/a.py")
    leases.renew_job(h, "ja")
    assert not leases.release(h, seen, "stale view", exact=True)
    assert len(lease_files(h)) == 1
    assert leases.release(h, seen, "plain release")
    assert lease_files(h) == [] and not leases.release(h, seen, "again")
    assert [e["why"] for e in events(h, "ja", "lock.released")] == ["plain release"]


def test_releasing_a_lease_a_new_holder_took_over_does_nothing(h: Path) -> None:
    old = leases.acquire(h, "app", "ja", "src/a.py", ttl_s=-1)
    leases.acquire(h, "app", "jb", "src/a.py")
    assert not leases.release(h, old, "late")
    assert [x["job"] for x in leases.all_leases(h)] == ["jb"]


def test_release_by_id_prefix(h: Path) -> None:
    a = leases.acquire(h, "app", "ja", "src/a.py")
    leases.acquire(h, "app", "ja", "src/b.py")
    with pytest.raises(LeaseError, match="no lease 'zzz' \\(zen locks lists them\\)"):
        leases.release_id(h, "zzz")
    with pytest.raises(LeaseError, match="'' names 2 leases; give more of the id"):
        leases.release_id(h, "")
    got = leases.release_id(h, a["id"][:8])
    assert got["id"] == a["id"] and [x["path"] for x in leases.all_leases(h)] == ["src/b.py"]
    assert events(h, "ja", "lock.released")[-1]["why"] == "released by a human"


def test_release_job_by_paths_matches_their_normal_spelling(h: Path) -> None:
    leases.acquire(h, "app", "ja", "src/a.py")
    leases.acquire(h, "app", "ja", "docs/")
    leases.acquire(h, "app", "jb", "lib/x.py")
    done = leases.release_job(h, "ja", "finished", ["./src//a.py", "docs/"])
    assert sorted(x["path"] for x in done) == ["docs/**", "src/a.py"]
    assert [x["job"] for x in leases.all_leases(h)] == ["jb"]
    assert leases.release_job(h, "ja", "again") == []


def test_renewing_several_jobs_with_a_given_ttl(h: Path) -> None:
    a = leases.acquire(h, "app", "ja", "src/a.py", ttl_s=1)
    b = leases.acquire(h, "repo:/x", "jb", "src/a.py", ttl_s=1)
    leases.acquire(h, "app", "jc", "src/c.py", ttl_s=1)
    assert leases.renew_job(h, ["ja", "jb"], ttl_s=3600) == 2
    after = {x["job"]: x for x in leases.all_leases(h)}
    assert after["ja"]["expires"] > a["expires"] and after["jb"]["expires"] > b["expires"]
    assert after["jc"]["revision"] == 1 and after["ja"]["revision"] == 2
    assert after["ja"]["ttl_s"] == 1                         # the lease's own ttl is kept for next time


def test_renewal_brings_an_expired_lease_back_only_while_its_file_exists(h: Path) -> None:
    leases.acquire(h, "app", "ja", "src/a.py", ttl_s=-1)
    assert leases.renew_job(h, "ja", ttl_s=60) == 1
    assert leases.blocking(h, "app", "jb", ["src/a.py"])[0]   # live again
    leases.release_job(h, "ja", "done")
    assert leases.renew_job(h, "ja") == 0 and lease_files(h) == []


def test_reconcile_releases_the_expired_and_the_ended(h: Path) -> None:
    leases.acquire(h, "app", "ja", "src/a.py", ttl_s=-1)
    leases.acquire(h, "app", "jb", "src/b.py")
    leases.acquire(h, "app", "jc", "src/c.py")
    gone = leases.reconcile(h, alive=lambda job: job != "jb")
    assert sorted(x["path"] for x in gone) == ["src/a.py", "src/b.py"]
    assert events(h, "ja", "lock.released")[-1]["why"] == "expired"
    assert events(h, "jb", "lock.released")[-1]["why"] == "job ended"
    assert [x["job"] for x in leases.all_leases(h)] == ["jc"]
    assert leases.reconcile(h, alive=lambda job: True) == []   # idempotent


def test_events_of_a_job_without_a_record_are_not_written(h: Path) -> None:
    leases.acquire(h, "app", "ghost", "src/g.py")             # a human's lease for no job
    assert not (h / "jobs" / "ghost").exists()
    assert leases.release_job(h, "ghost", "done")[0]["path"] == "src/g.py"
    assert not os.path.exists(h / "jobs" / "ghost")

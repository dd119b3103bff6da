"""Leases enforced in the guardian's hook: the real `zen guard hook` against job records.

Two jobs of lane `app`; job `ja` writes first and so leases the file; job `jb`'s writes to it,
through every file tool and the shell write targets the guardian resolves, are denied (warned,
or recorded, per coordinator.conflict_resolution); its writes elsewhere and every read pass."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

from tests.coord.util import bash, call, edit, events, make_job, set_coordinator, set_state, write
from tests.guard.util import hook, job_env

HEAVY = ("typer", "pydantic", "ruamel", "rich", "git", "libtmux", "httpx")


@pytest.fixture
def jobs(home: Path) -> Path:
    for j in ("ja", "jb"):
        wt = make_job(home, j)
        for name in ("a.py", "b.py", "c.py"):
            (wt / "src" / name).write_text("a\n")
        (wt / "src" / "auth").mkdir()
        (wt / "src" / "auth" / "x.py").write_text("a\n")
    return home


def leases_of(home: Path) -> list[dict]:
    d = home / "coord" / "app" / "leases"
    return [json.loads(p.read_text()) for p in sorted(d.glob("*.json"))] if d.exists() else []


def test_a_first_write_leases_the_file_in_a_file_anyone_can_cat(jobs: Path) -> None:
    r = write(jobs, "ja", "src/a.py")
    assert r.returncode == 0 and r.stdout == "", r.stderr
    [lease] = leases_of(jobs)
    assert {k: lease[k] for k in ("v", "lane", "job", "path", "mode", "by", "glob")} == {
        "v": 1, "lane": "app", "job": "ja", "path": "src/a.py", "mode": "exclusive", "by": "guard", "glob": False}
    assert lease["created"] < lease["expires"] and lease["revision"] == 1
    [ev] = events(jobs, "ja", "lock.acquired")
    assert ev["lease"] == lease["id"] and ev["path"] == "src/a.py" and ev["actor"] == "guard"
    # a second write by the holder neither denies nor takes another lease
    assert edit(jobs, "ja", "src/a.py").returncode == 0
    assert len(leases_of(jobs)) == 1 and len(events(jobs, "ja", "lock.acquired")) == 1


SECOND_WRITES = [  # (how job jb reaches src/a.py, which job ja holds)
    ("Write", lambda h: write(h, "jb", "src/a.py")),
    ("Edit", lambda h: edit(h, "jb", "src/a.py")),
    ("MultiEdit", lambda h: call(h, "jb", "MultiEdit", {"file_path": str(h / "worktrees/jb/src/a.py"),
                                                        "edits": [{"old_string": "a", "new_string": "b"}]})),
    ("NotebookEdit", lambda h: call(h, "jb", "NotebookEdit", {"notebook_path": str(h / "worktrees/jb/src/a.py"),
                                                              "new_source": "x"})),
    ("redirect", lambda h: bash(h, "jb", "echo x > src/a.py")),
    ("append", lambda h: bash(h, "jb", "printf 'x\\n' >> ./src/a.py")),
    ("cd+redirect", lambda h: bash(h, "jb", "cd src && echo x > a.py")),
    ("sed -i", lambda h: bash(h, "jb", "sed -i 's/a/b/' src/a.py")),
    ("tee", lambda h: bash(h, "jb", "echo x | tee src/a.py")),
    ("cp onto", lambda h: bash(h, "jb", "cp src/b.py src/a.py")),
    ("rename onto", lambda h: bash(h, "jb", "mv src/b.py src/a.py")),
    ("rename away", lambda h: bash(h, "jb", "mv src/a.py src/moved.py")),
    ("delete", lambda h: bash(h, "jb", "rm -f src/a.py")),
    ("delete by glob", lambda h: bash(h, "jb", "rm src/*.py")),
    ("delete the directory", lambda h: bash(h, "jb", "rm -rf src")),
    ("codex apply_patch", lambda h: call(h, "jb", "apply_patch", {
        "command": "*** Begin Patch\n*** Update File: src/a.py\n@@\n-a\n+b\n*** End Patch\n"}, agent="codex")),
]
DISJOINT = [  # same directory, other files: never denied
    ("Write", lambda h: write(h, "jb", "src/b.py")),
    ("Edit", lambda h: edit(h, "jb", "src/c.py")),
    ("redirect", lambda h: bash(h, "jb", "echo x > src/new.py")),
    ("sed -i", lambda h: bash(h, "jb", "sed -i 's/a/b/' src/b.py")),
    ("rename", lambda h: bash(h, "jb", "mv src/b.py src/c2.py")),
    ("delete", lambda h: bash(h, "jb", "rm src/c.py")),
    ("delete by glob", lambda h: bash(h, "jb", "rm src/*.md")),
    ("a similar name", lambda h: write(h, "jb", "src/a.py.bak")),
    ("zen's private tmp", lambda h: bash(h, "jb", "echo x > .zen-tmp/a.py")),
]
READS = [
    ("Read", lambda h: call(h, "jb", "Read", {"file_path": str(h / "worktrees/jb/src/a.py")})),
    ("cat", lambda h: bash(h, "jb", "cat src/a.py")),
    ("grep", lambda h: bash(h, "jb", "grep -n a src/a.py src/*.py")),
    ("Grep", lambda h: call(h, "jb", "Grep", {"pattern": "a", "path": str(h / "worktrees/jb/src")})),
    ("diff", lambda h: bash(h, "jb", "diff src/a.py src/b.py; git diff src/a.py")),
]


@pytest.mark.parametrize("how,act", SECOND_WRITES, ids=[c[0] for c in SECOND_WRITES])
def test_a_second_jobs_write_to_a_leased_file_is_denied_naming_holder_and_expiry(jobs: Path, how, act) -> None:
    assert write(jobs, "ja", "src/a.py").returncode == 0
    [lease] = leases_of(jobs)
    r = act(jobs)
    assert r.returncode == 2, (how, r.stderr)
    assert "zen guardian: " in r.stderr and "job ja" in r.stderr and lease["expires"] in r.stderr
    assert "zen unlock ja" in r.stderr
    [conflict] = events(jobs, "jb", "lock.conflict")
    assert conflict["holder"] == "ja" and conflict["resolution"] == "deny" and conflict["lease"] == lease["id"]
    denied = events(jobs, "jb", "guard.denied")
    assert denied and denied[-1]["rule"] == "coord.lease"
    assert [x["job"] for x in leases_of(jobs)] == ["ja"]   # nothing leased for the denied job


@pytest.mark.parametrize("how,act", DISJOINT, ids=[c[0] for c in DISJOINT])
def test_writes_to_other_files_of_the_same_directory_pass(jobs: Path, how, act) -> None:
    assert write(jobs, "ja", "src/a.py").returncode == 0
    r = act(jobs)
    assert r.returncode == 0, (how, r.stderr)
    assert not events(jobs, "jb", "lock.conflict")


@pytest.mark.parametrize("how,act", READS, ids=[c[0] for c in READS])
def test_reads_of_a_leased_file_always_pass(jobs: Path, how, act) -> None:
    assert write(jobs, "ja", "src/a.py").returncode == 0
    set_coordinator(jobs, conflict_resolution="deny")
    r = act(jobs)
    assert (r.returncode, r.stdout) == (0, ""), (how, r.stderr)
    assert not events(jobs, "jb", "lock.conflict") and not events(jobs, "jb", "lock.acquired")


def test_a_glob_lease_covers_every_file_under_it_and_nothing_else(jobs: Path) -> None:
    r = hook_cli(jobs, "lock", "ja", "src/auth/", "--reason", "auth rewrite")
    assert r.returncode == 0, r.stderr
    assert write(jobs, "jb", "src/auth/x.py").returncode == 2
    assert bash(jobs, "jb", "mkdir -p src/auth/deep && echo x > src/auth/deep/y.py").returncode == 2
    assert write(jobs, "jb", "src/b.py").returncode == 0
    assert write(jobs, "jb", "src/authz.py").returncode == 0
    # and a file lease against a glob write: ja's first write leases src/c.py; jb's `rm src/*.py` reaches it
    assert write(jobs, "ja", "src/c.py").returncode == 0
    assert bash(jobs, "jb", "rm src/*.py").returncode == 2
    assert bash(jobs, "jb", "rm src/*.txt").returncode == 0


def hook_cli(home: Path, *args: str):
    from tests.helpers import zen

    return zen(*args, env={"ZEN_HOME": str(home)})


def test_warn_mode_allows_with_the_holder_in_the_agents_context(jobs: Path) -> None:
    set_coordinator(jobs, conflict_resolution="warn")
    assert write(jobs, "ja", "src/a.py").returncode == 0
    for act in (lambda: edit(jobs, "jb", "src/a.py"), lambda: bash(jobs, "jb", "echo x >> src/a.py")):
        r = act()
        assert r.returncode == 0, r.stderr
        ctx = json.loads(r.stdout)["hookSpecificOutput"]
        assert ctx["hookEventName"] == "PreToolUse" and "permissionDecision" not in ctx
        assert "src/a.py" in ctx["additionalContext"] and "job ja" in ctx["additionalContext"]
    conflicts = events(jobs, "jb", "lock.conflict")
    assert [c["resolution"] for c in conflicts] == ["warn", "warn"]
    assert events(jobs, "jb", "guard.allowed")[-1]["rule"] == "coord.lease-warn"
    # Codex takes no context from PreToolUse: its answer stays exactly {}
    r = call(jobs, "jb", "apply_patch", {"command": "*** Begin Patch\n*** Update File: src/a.py\n@@\n-a\n+b\n"
                                          "*** End Patch\n"}, agent="codex")
    assert (r.returncode, r.stdout) == (0, "{}")


def test_last_write_wins_allows_and_records(jobs: Path) -> None:
    set_coordinator(jobs, conflict_resolution="last-write-wins")
    assert write(jobs, "ja", "src/a.py").returncode == 0
    r = write(jobs, "jb", "src/a.py")
    assert (r.returncode, r.stdout) == (0, "")
    assert [c["resolution"] for c in events(jobs, "jb", "lock.conflict")] == ["last-write-wins"]


def test_an_unknown_resolution_word_keeps_deny(jobs: Path) -> None:
    set_coordinator(jobs, conflict_resolution="maybe")
    assert write(jobs, "ja", "src/a.py").returncode == 0
    assert write(jobs, "jb", "src/a.py").returncode == 2


def test_a_lease_of_an_ended_job_or_past_its_expiry_holds_nobody(jobs: Path) -> None:
    assert write(jobs, "ja", "src/a.py").returncode == 0
    set_state(jobs, "ja", "exited")
    assert write(jobs, "jb", "src/a.py").returncode == 0        # and jb takes the file over
    [lease] = leases_of(jobs)
    assert lease["job"] == "jb"
    assert events(jobs, "ja", "lock.released")[-1]["why"] == "holder ended"
    # an expired lease (its supervisor was down for longer than lock_timeout) holds nobody either
    set_state(jobs, "ja", "working")
    path = next((jobs / "coord" / "app" / "leases").glob("*.json"))
    data = json.loads(path.read_text())
    data["expires"] = "2000-01-01T00:00:00.000Z"
    path.write_text(json.dumps(data))
    assert write(jobs, "ja", "src/a.py").returncode == 0
    [lease] = leases_of(jobs)
    assert lease["job"] == "ja" and lease["expires"] > data["created"]


def test_another_lane_is_another_namespace(jobs: Path) -> None:
    make_job(jobs, "jc", lane="docs")
    assert write(jobs, "ja", "src/a.py").returncode == 0
    assert write(jobs, "jc", "src/a.py").returncode == 0


def test_leases_off_takes_and_enforces_nothing(jobs: Path) -> None:
    set_coordinator(jobs, leases="false")
    assert write(jobs, "ja", "src/a.py").returncode == 0
    assert write(jobs, "jb", "src/a.py").returncode == 0
    assert leases_of(jobs) == []


def test_no_job_context_means_no_lease_work(jobs: Path) -> None:
    assert write(jobs, "ja", "src/a.py").returncode == 0
    payload = {"session_id": "t", "hook_event_name": "PreToolUse", "tool_name": "Write",
               "tool_input": {"file_path": str(jobs / "worktrees/jb/src/a.py"), "content": "x"},
               "cwd": str(jobs / "worktrees/jb")}
    env = {**job_env(jobs, "jb")}
    env.pop("ZEN_JOB_ID")
    r = hook(payload, env={**env, "ZEN_JOB_ID": ""})
    assert r.returncode == 0


def test_a_broken_lease_store_blocks_instead_of_letting_writes_through(jobs: Path) -> None:
    assert write(jobs, "ja", "src/a.py").returncode == 0
    d = jobs / "coord" / "app"
    (d / ".lock").unlink()
    (d / ".lock").mkdir()                 # taking a lease now fails inside the hook
    r = write(jobs, "jb", "src/new.py")
    assert r.returncode == 2 and "blocked to be safe" in r.stderr


def test_the_lease_check_keeps_the_hook_lean(jobs: Path) -> None:
    assert write(jobs, "ja", "src/a.py").returncode == 0
    wt = jobs / "worktrees" / "jb"
    payload = {"session_id": "t", "hook_event_name": "PreToolUse", "tool_name": "Write",
               "tool_input": {"file_path": str(wt / "src" / "b.py"), "content": "x"}, "cwd": str(wt)}
    r = hook(payload, env=job_env(jobs, "jb"), argv=[sys.executable, "-X", "importtime", "-m", "zen"])
    assert r.returncode == 0, r.stderr
    imported = {line.split("|")[-1].strip() for line in r.stderr.splitlines() if line.startswith("import time:")}
    assert "zen.coord.guardcheck" in imported
    assert not sorted(m for m in imported if m.split(".")[0] in HEAVY or m == "hashlib")
    assert os.path.exists(jobs / "coord" / "app" / "leases")
    # a call that writes nothing never loads the coordinator at all
    payload = {**payload, "tool_name": "Bash", "tool_input": {"command": "pytest -q && git status"}}
    r = hook(payload, env=job_env(jobs, "jb"), argv=[sys.executable, "-X", "importtime", "-m", "zen"])
    imported = {line.split("|")[-1].strip() for line in r.stderr.splitlines() if line.startswith("import time:")}
    assert r.returncode == 0 and not [m for m in imported if m.startswith("zen.coord")]


def test_zen_guard_check_gives_the_hooks_answer_without_taking_leases(jobs: Path) -> None:
    from tests.helpers import zen

    assert write(jobs, "ja", "src/a.py").returncode == 0
    env = job_env(jobs, "jb")
    wt = jobs / "worktrees" / "jb"
    r = zen("guard", "check", "--cwd", str(wt), "--", "echo x > src/a.py", env=env)
    assert r.returncode == 4 and "job ja" in r.stdout + r.stderr
    r = zen("guard", "check", "--cwd", str(wt), "--", "echo x > src/b.py", env=env)
    assert r.returncode == 0, r.stdout + r.stderr
    assert [x["job"] for x in leases_of(jobs)] == ["ja"]          # a check from a shell takes nothing

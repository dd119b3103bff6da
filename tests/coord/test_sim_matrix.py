"""Two sim agents on one lane under a real supervisor: the second one's writes to what the first
holds are denied (deny) or warned (warn), through Write/Edit and the shell; its writes to other
files and all its reads pass. Each step's answer is read from the guardian's own record."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.coord.util import set_coordinator
from tests.helpers import git, wait_until, zen
from tests.supervisor.util import dispatch_sim, events, wait_event

LEASED = [  # job B's steps that reach what job A holds: src/app.py (its first write), docs/** (paths:)
    {"write": {"path": "src/app.py", "content": "B was here\n"}},
    {"edit": {"path": "src/app.py", "old": "print", "new": "B_print"}},
    {"bash": "echo B > src/app.py"},
    {"bash": "printf 'B\\n' >> src/app.py"},
    {"bash": "sed -i 's/print/B/' src/app.py"},
    {"bash": "sed -i 's/a/b/' src/*.py"},                  # a glob that reaches it
    {"bash": "cp src/other.py src/app.py"},
    {"bash": "mv src/other.py src/app.py"},                # rename onto it
    {"bash": "mv src/app.py src/renamed.py"},              # rename it away
    {"bash": "rm src/app.py"},                             # delete
    {"write": {"path": "docs/guide.md", "content": "B\n"}},        # a file under A's glob
    {"bash": "echo B > docs/new-page.md"},
]
DISJOINT = [  # same directories, other files
    {"write": {"path": "src/helper.py", "content": "def helper(): ...\n"}},
    {"edit": {"path": "src/util.py", "old": "util", "new": "utility"}},
    {"bash": "echo B > src/notes.txt"},
    {"bash": "mv src/util.py src/utilities.py"},
    {"bash": "rm src/scratch.py"},
    {"write": {"path": "README.md", "content": "# B\n"}},
]
READS = [
    {"bash": "cat src/app.py"},
    {"bash": "grep -n print src/app.py docs/guide.md"},
    {"bash": "head -1 src/*.py && wc -l docs/guide.md"},
    {"bash": "git diff --stat && git log --oneline -1 -- src/app.py"},
]
FILES = {"README.md": "# app\n", "src/app.py": "print('app')\n", "src/other.py": "print('other')\n",
         "src/util.py": "util = 1\n", "src/scratch.py": "x = 1\n", "docs/guide.md": "# guide\n"}


@pytest.fixture
def lane_files(lane: Path) -> Path:
    for name, text in FILES.items():
        f = lane / name
        f.parent.mkdir(parents=True, exist_ok=True)
        f.write_text(text)
    git(lane, "add", "-A")
    git(lane, "commit", "-q", "-m", "matrix files")
    return lane


def _what(step: dict[str, Any]) -> str:
    return step["bash"] if "bash" in step else (step.get("write") or step.get("edit"))["path"]


def _decisions(home: Path, job: str) -> list[dict[str, Any]]:
    """The guardian's decisions for the job, in order: one per tool call the sim made."""
    return [e for e in events(home, job) if e["type"] in ("guard.allowed", "guard.denied")]


def _run_pair(zh: Path, tmp_path: Path) -> tuple[str, str, dict[str, dict[str, Any]]]:
    """Job A writes src/app.py and holds `paths: [docs/]` from its task, then waits; job B runs
    the matrix. Returns both ids and B's decision per step."""
    f = tmp_path / "holder.yaml"
    f.write_text(json.dumps({"name": "holder", "prompt": "hold", "agent": "sim", "lane": "app",
                             "paths": ["docs/"], "script": [
                                 {"write": {"path": "src/app.py", "content": "print('A')\n"}}, {"wait": True}]}))
    r = zen("dispatch", "--file", str(f))
    assert r.returncode == 0, r.stderr
    a = r.stdout.strip()
    wait_event(zh, a, "lock.acquired", path="docs/**", timeout=60)
    wait_event(zh, a, "lock.acquired", path="src/app.py", timeout=60)
    steps = [*LEASED, *DISJOINT, *READS]
    b = dispatch_sim(zh, tmp_path, "second", [*steps, {"say": "B done"}, {"wait": True}], "--lane", "app")
    wait_until(lambda: len(_decisions(zh, b)) >= len(steps), timeout=120, message="job B's steps to be judged")
    decided = _decisions(zh, b)
    assert len(decided) == len(steps)
    wt = str(zh / "worktrees" / b) + "/"
    for step, d in zip(steps, decided, strict=True):    # each decision is the step's own
        assert (d.get("command") or str(d.get("file_path")).removeprefix(wt)) == _what(step)
    return a, b, {_what(st) + f"#{i}": d for i, (st, d) in enumerate(zip(steps, decided, strict=True))}


@pytest.mark.parametrize("mode", ["deny", "warn"])
def test_the_second_jobs_writes_to_held_files_are_denied_or_warned(zh: Path, lane_files: Path, sups,
                                                                   tmp_path: Path, mode: str) -> None:
    set_coordinator(zh, conflict_resolution=mode)
    sups.start()
    a, b, answers = _run_pair(zh, tmp_path)
    n = len(LEASED)
    held = list(answers.values())[:n]
    disjoint = list(answers.values())[n:n + len(DISJOINT)]
    reads = list(answers.values())[n + len(DISJOINT):]
    if mode == "deny":
        wrong = [d.get("command") or d.get("file_path") for d in held
                 if d["type"] != "guard.denied" or d["rule"] != "coord.lease"]
        assert not wrong, wrong                                       # 100% of them denied
        assert (zh / "worktrees" / b / "src" / "app.py").read_text() == "print('app')\n"
        assert not (zh / "worktrees" / b / "docs" / "new-page.md").exists()
        assert all(a in d["reason"] and "until" in d["reason"] for d in held)
    else:
        wrong = [d.get("command") or d.get("file_path") for d in held
                 if d["type"] != "guard.allowed" or d["rule"] != "coord.lease-warn"]
        assert not wrong, wrong                                       # 100% of them warned
        pane = (zh / "jobs" / b / "pane.log").read_text(errors="replace")
        assert pane.count("hook context: ") >= n and f"job {a}" in pane
    conflicts = [e for e in events(zh, b) if e["type"] == "lock.conflict"]
    assert {e["holder"] for e in conflicts} == {a} and {e["resolution"] for e in conflicts} == {mode}
    assert len(conflicts) >= n
    false = [d.get("command") or d.get("file_path") for d in disjoint
             if d["type"] != "guard.allowed" or d["rule"].startswith("coord.")]
    assert not false, false                                           # 0 false denies
    blocked = [d.get("command") for d in reads if d["type"] != "guard.allowed"]
    assert not blocked, blocked                                       # reads always pass
    assert {e["path"] for e in events(zh, b) if e["type"] == "lock.acquired"} >= {
        "src/helper.py", "src/notes.txt", "README.md"}
    assert zen("cancel", a).returncode == 0 and zen("cancel", b).returncode == 0

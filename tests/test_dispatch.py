"""zen dispatch: validation first, Maildir publish, concurrency, crash safety, lean imports."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.helpers import REPO_ROOT, one_line, zen


def spool_state(home: Path) -> dict[str, list[str]]:
    return {d: sorted(p.name for p in (home / "spool" / d).iterdir()) for d in ("tmp", "new", "cur")}


def read_task(path: Path) -> dict:
    from ruamel.yaml import YAML

    return YAML(typ="safe").load(path.read_text())


def test_dispatch_writes_a_complete_task_and_prints_its_id(lane: Path, home: Path) -> None:
    r = zen("dispatch", "Fix the login form", "--lane", "app", "--priority", "2", "--timeout", "10m",
            "--retries", "1", "--domain", "code")
    assert r.returncode == 0, r.stderr
    job_id = r.stdout.strip()
    assert job_id.endswith(job_id[-4:]) and "-fix-the-login-form-" in job_id
    path = home / "spool" / "new" / f"{job_id}.yaml"
    task = read_task(path)
    assert task["zen"] == 1 and task["id"] == job_id and task["name"] == "fix-the-login-form"
    assert task["lane"] == "app" and task["base"] == "main" and task["priority"] == 2
    assert task["timeout"] == "10m" and task["max_retries"] == 1 and task["created_by"] == "human"
    assert task["created_at"].endswith("Z")
    assert spool_state(home)["tmp"] == []


def test_dispatch_reads_stdin_splits_cmd_and_prints_json(lane: Path, home: Path) -> None:
    r = zen("dispatch", "-", "--name", "multi", input="line one\nline two\n")
    assert r.returncode == 0, r.stderr
    task = read_task(home / "spool" / "new" / f"{r.stdout.strip()}.yaml")
    assert task["prompt"] == "line one\nline two\n" and task["lane"] == "app"  # the only lane is the default
    r = zen("dispatch", "run it", "--agent", "cmd", "--cmd", "sh -c 'echo \"a b\"; exit 3'", "--json")
    assert r.returncode == 0, r.stderr
    task = json.loads(r.stdout)
    assert task["command"] == ["sh", "-c", 'echo "a b"; exit 3'] and task["agent"] == "cmd"


def test_dispatch_from_a_task_file(lane: Path, home: Path, tmp_path: Path) -> None:
    f = tmp_path / "t.yaml"
    f.write_text("name: from-file\nprompt: do things\nagent: sim\npriority: 1\n")
    r = zen("dispatch", "--file", str(f), "--json")
    assert r.returncode == 0, r.stderr
    task = json.loads(r.stdout)
    assert task["name"] == "from-file" and task["priority"] == 1 and task["lane"] == "app"


@pytest.mark.parametrize("given", ["2.5", "yes"])
def test_a_priority_in_a_task_file_that_is_no_whole_number_is_refused_not_rounded(
        lane: Path, home: Path, tmp_path: Path, given: str) -> None:
    f = tmp_path / "t.yaml"
    f.write_text(f"name: from-file\nprompt: do things\nagent: sim\npriority: {given}\n")
    before = spool_state(home)
    r = zen("dispatch", "--file", str(f))
    assert r.returncode == 1 and one_line(r.stderr) and "whole number" in r.stderr, r.stderr
    assert spool_state(home) == before


BAD = [
    (["dispatch", "x", "--lane", "nope"], "no lane named"),
    (["dispatch", "x", "--priority", "0"], "priority"),
    (["dispatch", "x", "--priority", "six"], "priority"),
    (["dispatch", "x", "--timeout", "soon"], "not a duration"),
    (["dispatch", "x", "--timeout", "0s"], "positive"),
    (["dispatch", "   "], "prompt is empty"),
    (["dispatch", "x", "--agent", "robot"], "unknown agent"),
    (["dispatch", "x", "--agent", "cmd"], "needs a command"),
    (["dispatch", "x", "--cmd", "sh -c 'unterminated"], "split"),
    (["dispatch", "x", "--depends-on", "ghost"], "dependency"),
    (["dispatch", "x", "--base", "no-such-ref"], "does not resolve"),
    (["dispatch", "x", "--lane", "app", "--repo", "/tmp"], "either"),
    (["dispatch", "x", "--repo", "/"], "not a git repository"),
    (["dispatch", "x", "--retries", "-1"], "retries"),
    (["dispatch", "x", "--name", "Bad Name!"], "name"),
    (["dispatch", "x", "--file", "/no/such/file.yaml"], "cannot read"),
]


@pytest.mark.parametrize(("args", "words"), BAD, ids=[b[1] + str(i) for i, b in enumerate(BAD)])
def test_bad_input_is_refused_in_one_sentence_and_writes_nothing(lane: Path, home: Path, args, words) -> None:
    before = spool_state(home)
    r = zen(*args)
    assert r.returncode == 1, (r.returncode, r.stdout, r.stderr)
    assert one_line(r.stderr), r.stderr
    assert words in r.stderr, r.stderr
    assert r.stdout == ""
    assert spool_state(home) == before


def test_dispatch_refuses_when_the_queue_is_full(lane: Path, home: Path) -> None:
    cfg = home / "zen.yaml"
    cfg.write_text(cfg.read_text().replace("max_queue_size: 100", "max_queue_size: 2"))
    assert zen("dispatch", "one").returncode == 0
    assert zen("dispatch", "two").returncode == 0
    before = spool_state(home)
    r = zen("dispatch", "three")
    assert r.returncode == 1 and "queue is full" in r.stderr and one_line(r.stderr)
    assert spool_state(home) == before


def test_dispatch_without_any_lane_says_how_to_add_one(home: Path) -> None:
    r = zen("dispatch", "x")
    assert r.returncode == 1 and "zen lane add" in r.stderr


_WORKER = """
import sys
from pathlib import Path
from zen.store.home import Home
from zen.orchestration.intake.dispatch import dispatch
home = Home(Path(sys.argv[1]))
for i in range(int(sys.argv[3])):
    dispatch(home, {"prompt": f"task {sys.argv[2]} {i}", "name": "same-name", "lane": "app"})
"""


def test_eight_concurrent_dispatchers_leave_400_distinct_valid_tasks(lane: Path, home: Path) -> None:
    cfg = home / "zen.yaml"
    cfg.write_text(cfg.read_text().replace("max_queue_size: 100", "max_queue_size: 100000"))
    procs = [subprocess.Popen([sys.executable, "-c", _WORKER, str(home), str(w), "50"], cwd=REPO_ROOT)
             for w in range(8)]
    assert all(p.wait(timeout=240) == 0 for p in procs)
    files = list((home / "spool" / "new").iterdir())
    assert len(files) == 400
    prompts = set()
    for f in files:
        task = read_task(f)
        assert f.name == f"{task['id']}.yaml"
        prompts.add(task["prompt"])
    assert len(prompts) == 400
    assert list((home / "spool" / "tmp").iterdir()) == []


def test_sigkill_at_any_point_leaves_a_whole_task_or_nothing(lane: Path, home: Path) -> None:
    """Kill dispatch processes at many points in their life; every published task must be whole.

    The kill points step from process start past a measured whole dispatch until a task got
    published, so the sweep crosses the publish point however loaded the machine is."""

    def start(i: int) -> subprocess.Popen[bytes]:
        return subprocess.Popen([sys.executable, "-m", "zen", "dispatch", f"crash test {i}", "--name", "crash"],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE)

    t0 = time.monotonic()
    assert start(-1).wait(timeout=60) == 0
    whole = time.monotonic() - t0
    outcomes = []
    # kill points step by 1/12 of a measured dispatch, up to 3.5x it: a loaded machine slows
    # dispatch down, so keep stepping until a task was published (and at least 16 kills)
    for i in range(42):
        before = set(os.listdir(home / "spool" / "new"))
        p = start(i)
        time.sleep(whole * i / 12)
        p.send_signal(signal.SIGKILL)
        p.wait()
        added = set(os.listdir(home / "spool" / "new")) - before
        assert len(added) <= 1
        for name in added:
            task = read_task(home / "spool" / "new" / name)
            assert task["prompt"] == f"crash test {i}" and name == f"{task['id']}.yaml"
        outcomes.append(bool(added))
        if i >= 16 and any(outcomes):
            break
    # the sweep must have hit both sides of the publish point to mean anything
    assert set(outcomes) == {True, False}, outcomes


def test_a_failure_between_write_and_publish_leaves_nothing(lane: Path, home: Path) -> None:
    code = f"""
import os, sys
from pathlib import Path
from zen.store.home import Home
from zen.orchestration.intake.dispatch import dispatch
def boom(*a, **k): raise OSError(28, "No space left on device")
os.link = boom
try:
    dispatch(Home(Path({str(home)!r})), {{"prompt": "p", "lane": "app"}})
except OSError:
    sys.exit(0)
sys.exit(1)
"""
    assert subprocess.run([sys.executable, "-c", code], cwd=REPO_ROOT).returncode == 0
    assert spool_state(home)["new"] == [] and spool_state(home)["tmp"] == []


def test_dispatch_does_not_import_tmux_git_or_watchdog(lane: Path, home: Path) -> None:
    code = """
import sys
from zen.cli.main import main
rc = main(["dispatch", "lean check"])
heavy = [m for m in ("libtmux", "git", "watchdog", "tree_sitter") if m in sys.modules]
print("HEAVY", heavy, rc)
"""
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO_ROOT)
    assert r.returncode == 0, r.stderr
    assert "HEAVY [] 0" in r.stdout, r.stdout

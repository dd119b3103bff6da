"""`zen status` and `zen show` read with the stdlib alone (issue 21): the index of finished jobs,
live jobs' state.json brought up to date in memory, the typer-free entry. What they print must be
exactly what the model-based readers (zen.orchestration.read.query) say of the same home, however the
records stand: fresh, behind their timeline, missing, garbled, finished, indexed or not."""

from __future__ import annotations

import contextlib
import io
import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers import zen
from zen.cli.main import main as typer_main
from zen.core.ids import iso, make_job_id
from zen.core.model import Task
from zen.orchestration.read import query
from zen.store import index
from zen.store.home import Home
from zen.store.jobs import JobStore

NAMES = ("fresh", "behind", "no-state", "garbled", "done", "done-then-more", "failed", "queued", "on-ray",
         "done-on-ray")
RAY = "http://127.0.0.1:8265"


def _make(store: JobStore, name: str, n: int) -> str:
    from datetime import UTC, datetime, timedelta

    at = datetime(2026, 1, 1, tzinfo=UTC) + timedelta(seconds=n)
    job = make_job_id(name, now=at, rand=f"{n:04x}")
    store.create(Task(id=job, name=name, prompt=f"do {name}\nsecond line", lane="app", agent="cmd",
                      command=["sh", "-c", "echo hi"], created_at=iso(at)))
    return job


@pytest.fixture
def mixed(lane: Path, home: Path) -> dict[str, str]:
    """One job of each kind of record."""
    store = JobStore(Home(home))
    jobs = {name: _make(store, name, i) for i, name in enumerate(NAMES)}
    for name in ("fresh", "behind", "no-state", "garbled", "done", "done-then-more", "failed"):
        j = jobs[name]
        store.append(j, "worktree.created", path=f"/w/{j}", branch=f"zen/{j}", base_commit="a" * 40)
        store.append(j, "agent.spawned", session=f"zen-{j}", target="%1")
        store.append(j, "usage", input_tokens=1200, output_tokens=300, cost_usd=0.0123, api_calls=2)
        store.snapshot(j)
    for name in ("done", "done-then-more"):
        store.append(jobs[name], "agent.exited", exit_code=0)
        store.append(jobs[name], "harvest.done", branch=f"zen/review/{jobs[name]}", commit="b" * 40)
        store.snapshot(jobs[name])
    store.append(jobs["failed"], "job.failed", reason="it broke")
    for name in ("on-ray", "done-on-ray"):   # turns on a Ray cluster (issue 20): where they run is shown
        j = jobs[name]
        store.append(j, "remote.submit", submission_id=f"{j}-1", turn=1, attempt=1, address=RAY)
        store.append(j, "remote.submitted", submission_id=f"{j}-1", address=RAY)
        store.snapshot(j)
    store.append(jobs["done-on-ray"], "remote.started", host="node-b")
    store.append(jobs["done-on-ray"], "agent.exited", exit_code=0)
    store.append(jobs["done-on-ray"], "harvest.done", branch=f"zen/review/{jobs['done-on-ray']}", commit="b" * 40)
    store.snapshot(jobs["done-on-ray"])
    store.snapshot(jobs["failed"])
    # appended by others (hooks, commands) after the last snapshot was written
    store.append(jobs["behind"], "turn.waiting", actor="hook", reason="question")
    store.append(jobs["behind"], "guard.denied", actor="hook", rule="x")
    store.append(jobs["done-then-more"], "job.landed", actor="human", commit="c" * 40)
    store.append(jobs["on-ray"], "remote.started", host="node-a")
    (home / "jobs" / jobs["no-state"] / "state.json").unlink()
    (home / "jobs" / jobs["garbled"] / "state.json").write_text('{"v": 1, "job": "someone else"')
    # two tasks no supervisor took in yet: one from zen dispatch's quick lane, one from the model's
    assert zen("dispatch", "waiting in the spool", "--agent", "sim").returncode == 0
    assert zen("dispatch", "--file", str(_task_file(home)), "--json").returncode == 0
    return jobs


def _task_file(home: Path) -> Path:
    f = home.parent / "t.yaml"
    f.write_text("prompt: |\n  from a file\nagent: sim\npriority: 2\n")
    return f


def _typer(*args: str) -> str:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert typer_main(list(args)) == 0
    return out.getvalue()


def _both_entries(*args: str) -> tuple[str, str]:
    """The output of the fast entry and of the typer CLI, read as a pair close in time.

    A live job's age is counted to the moment each reads the clock: on a loaded machine the two
    readings can fall either side of a second, so a pair is read anew (up to three times) until
    they agree; a real difference stays a difference on every reading."""
    for _ in range(3):
        fast = zen(*args)
        assert fast.returncode == 0, fast.stderr
        typer_text = _typer(*args)
        if fast.stdout == typer_text:
            break
    return fast.stdout, typer_text


def test_status_json_says_what_the_model_readers_say(mixed: dict[str, str], home: Path) -> None:
    r = zen("status", "--json")
    assert r.returncode == 0, r.stderr
    got = json.loads(r.stdout)
    want = query.status(Home(home)).to_json()
    assert got["jobs"] == want["jobs"] and got["pending"] == want["pending"] and len(got["pending"]) == 2
    assert got["usage"] == want["usage"] and got["usage"]["api_calls"] == 14
    assert {j["job"]: j["state"] for j in got["jobs"]}[mixed["behind"]] == "waiting"
    where = {j["job"]: (j["executor"], j["remote_host"]) for j in got["jobs"]}
    assert where[mixed["on-ray"]] == ("ray", "node-a") and where[mixed["fresh"]] == ("local", None)


def test_status_text_is_the_same_through_either_entry(mixed: dict[str, str], home: Path) -> None:
    fast, typer_text = _both_entries("status")
    assert fast == typer_text
    for name in NAMES:
        assert mixed[name] in fast
    assert "waiting (question)" in fast and "failed (it broke)" in fast
    assert "ray node-a" in fast and "ray node-b" in fast


def test_show_is_the_same_through_either_entry(mixed: dict[str, str], home: Path) -> None:
    for ref in (mixed["behind"], "done-then-more", "failed", mixed["no-state"][:-5]):
        fast, typer_text = _both_entries("show", ref, "--events", "3")
        assert fast == typer_text
    assert "prompt   do failed\n         second line" in zen("show", "failed").stdout
    bad = zen("show", "nothing-like-it")
    assert bad.returncode == 1 and bad.stderr.startswith("zen: ") and "Traceback" not in bad.stderr


def test_finished_jobs_are_read_from_the_index_while_their_timeline_holds(mixed: dict[str, str], home: Path) -> None:
    known = index.read(str(home / "jobs"))
    assert {mixed["done"], mixed["done-then-more"], mixed["failed"], mixed["done-on-ray"]} <= set(known)
    assert known[mixed["done-on-ray"]]["row"]["remote_host"] == "node-b"
    assert mixed["fresh"] not in known and mixed["queued"] not in known
    # a row the timeline has outgrown is not believed: done-then-more's job.landed is shown
    state = next(j for j in json.loads(zen("status", "--json").stdout)["jobs"] if j["job"] == mixed["done-then-more"])
    assert state["landed_commit"] == "c" * 40
    # the index is what a finished job is read from: a row that lines up is taken as it is
    d = known[mixed["done"]]
    d["row"]["name"] = "from-the-index"
    index.update(Home(home), {})  # no change: nothing written
    path = home / "jobs" / ".index.json"
    data = json.loads(path.read_text())
    data["jobs"][mixed["done"]] = d
    path.write_text(json.dumps(data))
    assert "from-the-index" in zen("status").stdout


def test_the_supervisor_indexes_a_home_from_before_the_index(mixed: dict[str, str], home: Path) -> None:
    (home / "jobs" / ".index.json").unlink()
    assert JobStore(Home(home)).reindex() == 4
    assert set(index.read(str(home / "jobs"))) == {mixed["done"], mixed["done-then-more"], mixed["failed"],
                                                    mixed["done-on-ray"]}
    fast, typer_text = _both_entries("status")
    assert fast == typer_text


def test_the_fast_entry_loads_neither_typer_nor_pydantic(mixed: dict[str, str], home: Path) -> None:
    for f in (home / "spool" / "new").iterdir():   # a task the quick lane wrote is read without the model
        f.unlink()
    assert zen("dispatch", "one more", "--agent", "sim").returncode == 0
    code = ("import sys, runpy; sys.argv = ['zen', 'status']\n"
            "try:\n    runpy.run_module('zen', run_name='__main__')\nexcept SystemExit:\n    pass\n"
            "bad = sorted(m for m in sys.modules if m.split('.')[0] in ('typer', 'pydantic', 'ruamel', 'rich'))\n"
            "print(bad, file=sys.stderr)")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert r.stderr.strip().splitlines()[-1] == "[]", r.stderr


def test_the_config_cache_follows_every_edit_of_zen_yaml(home: Path) -> None:
    cfg = home / "zen.yaml"
    for n in (5, 7, 3):   # same length each time: the cache is keyed by the text, not the size
        cfg.write_text(_with_slots(cfg.read_text(), n))
        out = subprocess.run([sys.executable, "-c", "from zen.store.config import Config; from zen.store.home import "
                              "find_home; print(Config.load(find_home()).get('supervisor', 'max_concurrent_tasks'))"],
                             capture_output=True, text=True)
        assert out.stdout.strip() == str(n), out.stderr
    assert (home / "logs" / ".config-cache.json").exists()


def _with_slots(text: str, n: int) -> str:
    head, _, rest = text.partition("max_concurrent_tasks: ")
    return f"{head}max_concurrent_tasks: {n}{rest[1:]}"

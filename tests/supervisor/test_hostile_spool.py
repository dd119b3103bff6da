"""A spool that cannot be poisoned (issue 15): every kind of hostile entry in spool/new is moved to
spool/quarantine/ with a reason file and a task.rejected event, the supervisor keeps running
(and restarts cleanly), a good task dispatched after each still runs, and nothing is written
outside the home."""

from __future__ import annotations

import json
import os
from pathlib import Path

from tests.helpers import wait_until, zen
from tests.supervisor.conftest import Supervisors
from tests.supervisor.util import dispatch_cmd, wait_state
from zen.core.ids import make_job_id
from zen.store.events import read_events_any


def task_yaml(job_id: str, **over: object) -> str:
    fields = {"zen": 1, "id": job_id, "name": "hostile", "prompt": "p", "lane": "app", "agent": "cmd",
              "command": ["sh", "-c", "echo hostile ran > /dev/null"], "created_at": "2026-11-29T10:15:00.000Z",
              **over}
    return "".join(f"{k}: {json.dumps(v)}\n" for k, v in fields.items())


def rejected(home: Path) -> dict[str, str]:
    return {e["file"]: e["reason"] for e in read_events_any(home / "logs" / "control.jsonl")
            if e.get("type") == "task.rejected"}


def test_every_kind_of_hostile_entry_is_quarantined_and_the_supervisor_runs_on(
        zh: Path, sups: Supervisors, tmp_path: Path) -> None:
    cfg = zh / "zen.yaml"
    cfg.write_text(cfg.read_text().replace("max_prompt_size: 1MiB", "max_prompt_size: 64KiB"))
    new = zh / "spool" / "new"
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "real.yaml").write_text(task_yaml(make_job_id("linked")))
    ids = {kind: make_job_id(kind) for kind in ("garbage", "version", "traversal", "fifo", "link", "big", "folder",
                                                "misnamed")}
    def put(p: Path, data: bytes | str) -> None:
        """Published whole (written beside, then renamed in), as zen dispatch does: what is
        tested is the entry's content, not a read racing the write."""
        tmp = zh / "spool" / "tmp" / f"{p.name}.part"
        tmp.write_bytes(data if isinstance(data, bytes) else data.encode())
        os.rename(tmp, p)

    hostile = {
        "garbage": lambda p: put(p, os.urandom(3000)),
        "version": lambda p: put(p, task_yaml(ids["version"], zen=2)),
        "traversal": lambda p: put(p, task_yaml("../../../outside/escaped")),
        "fifo": os.mkfifo,
        "link": lambda p: p.symlink_to(outside / "real.yaml"),
        "big": lambda p: put(p, task_yaml(ids["big"], prompt="x" * (400 * 1024))),
        "folder": lambda p: p.mkdir(),
        "misnamed": lambda p: put(p, task_yaml(make_job_id("other"))),
    }
    sup = sups.start()
    good: list[str] = []
    for kind, make in hostile.items():
        make(new / f"{ids[kind]}.yaml")
        wait_until(lambda k=kind: f"{ids[k]}.yaml" in rejected(zh), timeout=20, message=f"{kind} quarantined")
        assert sup.poll() is None, f"the supervisor died on the {kind} entry"
        job = dispatch_cmd("echo fine", f"good-{kind}")
        wait_state(zh, job, "harvested", timeout=60)
        good.append(job)
    reasons = rejected(zh)
    assert "not UTF-8" in reasons[f"{ids['garbage']}.yaml"] or "YAML" in reasons[f"{ids['garbage']}.yaml"]
    assert "format version 2" in reasons[f"{ids['version']}.yaml"]
    assert "is not a job id" in reasons[f"{ids['traversal']}.yaml"]
    assert "a FIFO" in reasons[f"{ids['fifo']}.yaml"]
    assert "a symlink" in reasons[f"{ids['link']}.yaml"]
    assert "over the limit" in reasons[f"{ids['big']}.yaml"]
    assert "a folder" in reasons[f"{ids['folder']}.yaml"]
    assert "a task file is named after its id" in reasons[f"{ids['misnamed']}.yaml"]
    q = zh / "spool" / "quarantine"
    for kind in hostile:
        name = f"{ids[kind]}.yaml"
        assert os.path.lexists(q / name) and (q / f"{name}.reason").read_text().strip(), kind
    assert (q / f"{ids['link']}.yaml").is_symlink()   # moved as a link, never followed
    assert sorted(p.name for p in outside.iterdir()) == ["real.yaml"], "something was written outside the home"
    assert not list(zh.parent.glob("escaped*")) and not (zh / "jobs" / ids["traversal"]).exists()

    # a duplicate id: a second file claiming a job that exists leaves the job and its spool copy alone
    first = good[0]
    cur_copy = (zh / "spool" / "cur" / f"{first}.yaml").read_bytes()
    (new / f"{first}.yaml").write_text(task_yaml(first, prompt="overwrite me"))
    wait_until(lambda: any(k.startswith(first) for k in rejected(zh)), timeout=20, message="duplicate quarantined")
    assert "duplicate id" in next(v for k, v in rejected(zh).items() if k.startswith(first))
    assert (zh / "spool" / "cur" / f"{first}.yaml").read_bytes() == cur_copy
    assert "overwrite me" not in (zh / "jobs" / first / "task.yaml").read_text()

    # shown to a person: zen status and zen queue list what was set aside, and why
    status = zen("status")
    assert status.returncode == 0 and "quarantined: 9 spool entries rejected" in status.stdout, status.stdout
    st = json.loads(zen("status", "--json").stdout)
    assert {e["file"] for e in st["quarantined"]} >= {f"{ids[k]}.yaml" for k in hostile}
    queue = zen("queue")
    assert queue.returncode == 0 and "quarantined: 9 spool entries" in queue.stdout
    assert len(json.loads(zen("queue", "--json").stdout)["quarantined"]) == 9

    # and it restarts cleanly with the quarantine in place
    assert sups.stop(sup) == 0
    sups.start()
    job = dispatch_cmd("echo again", "after-restart")
    wait_state(zh, job, "harvested", timeout=60)


def test_a_job_whose_timeline_is_gone_is_quarantined_not_run_again(zh: Path, sups: Supervisors) -> None:
    sup = sups.start()
    job = dispatch_cmd("echo once >> ran.txt", "once")
    wait_state(zh, job, "harvested", timeout=60)
    assert sups.stop(sup) == 0
    (zh / "jobs" / job / "events.jsonl").unlink()
    sups.start()
    wait_until(lambda: f"{job}.yaml" in rejected(zh), timeout=20, message="the orphaned task quarantined")
    assert "lost its timeline" in rejected(zh)[f"{job}.yaml"]
    late = dispatch_cmd("echo fine", "later")     # the loop goes on, and this one runs
    wait_state(zh, late, "harvested", timeout=60)
    assert not (zh / "jobs" / job / "events.jsonl").exists(), "the job was recorded (and run) again"
    r = zen("doctor", job)
    assert r.returncode == 1 and "events.jsonl is missing" in r.stdout

"""Notifications from a real supervisor: a sim job that asks, is answered, asks again and ends.

The `notify.command` hook and a `notify-send` on PATH (a recording stand-in: this machine has no
desktop to show one) each receive exactly one notice per wait, and a supervisor killed with -9 and
started again does not announce the same wait twice.
"""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

from tests.helpers import wait_until, zen
from tests.supervisor.util import dispatch_sim, events, wait_state
from tests.tui.conftest import Supervisors


def notices(path: Path) -> list[dict]:
    try:
        return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    except FileNotFoundError:
        return []


def configure(home: Path, command: str) -> None:
    cfg = home / "zen.yaml"
    text = cfg.read_text()
    assert 'command: ""' in text
    cfg.write_text(text.replace('command: ""', f"command: {json.dumps(command)}", 1))


def fake_notify_send(tmp: Path) -> tuple[Path, Path]:
    bin_dir = tmp / "bin"
    bin_dir.mkdir()
    record = tmp / "desktop.txt"
    script = bin_dir / "notify-send"
    script.write_text(f"#!/bin/sh\nprintf '%s|' \"$@\" >> {record}\necho >> {record}\n")
    script.chmod(script.stat().st_mode | stat.S_IEXEC)
    return bin_dir, record


def test_one_notice_per_wait_and_per_end_across_a_restart(zh: Path, sups: Supervisors, tmp_path: Path) -> None:
    out = tmp_path / "notices.jsonl"
    configure(zh, f"cat >> {out}; echo \"$ZEN_NOTIFY_KIND $ZEN_NOTIFY_REASON\" >> {out}.env")
    bin_dir, desktop = fake_notify_send(tmp_path)
    env = {"PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}"}
    first = sups.start(env=env)
    job = dispatch_sim(zh, tmp_path, "asker", [
        {"ask": "Which database should I use?"}, {"ask": "Shall I add a test?"}, {"say": "done"}, {"exit": 0}])

    got = wait_until(lambda: notices(out), timeout=30, message="the first notice")
    assert [(n["kind"], n["reason"], n["job"], n["name"]) for n in got] == [("waiting", "question", job, "asker")]
    assert got[0]["title"] == "zen: asker needs you"
    assert "Which database should I use?" in got[0]["text"]
    env_file = tmp_path / "notices.jsonl.env"  # the command's second line: it may still be running
    assert wait_until(lambda: env_file.exists() and env_file.read_text()) == "waiting question\n"
    lines = wait_until(lambda: desktop.exists() and desktop.read_text().splitlines(), message="notify-send")
    assert lines == ["--app-name=zen|--urgency=critical|zen: asker needs you|asks a question: Which database should I use?|"]

    sups.kill9(first)
    sups.start(env=env)
    assert zen("send", job, "postgres").returncode == 0
    wait_until(lambda: len(notices(out)) >= 2, timeout=30, message="the second question's notice")
    assert zen("send", job, "yes").returncode == 0
    wait_state(zh, job, "harvested", timeout=30)
    wait_until(lambda: len(notices(out)) >= 3, timeout=30, message="the end's notice")

    got = notices(out)
    assert [(n["kind"], n["reason"]) for n in got] == [
        ("waiting", "question"), ("waiting", "question"), ("ended", "harvested")]
    assert "Shall I add a test?" in got[1]["text"]
    assert len(desktop.read_text().splitlines()) == 3
    recorded = [(e["kind"], e["for_seq"]) for e in events(zh, job) if e["type"] == "notify.sent"]
    assert [n[0] for n in recorded] == ["waiting", "waiting", "ended"]
    assert len(set(recorded)) == 3
    assert not [e for e in events(zh, job) if e["type"] == "notify.failed"]


def test_a_failing_command_is_recorded_and_nothing_is_sent_without_a_channel(
        zh: Path, sups: Supervisors, tmp_path: Path) -> None:
    configure(zh, "echo nope >&2; exit 3")
    sups.start()
    job = dispatch_sim(zh, tmp_path, "asker", [{"ask": "Ready?"}, {"exit": 0}])
    failed = wait_until(lambda: [e for e in events(zh, job) if e["type"] == "notify.failed"], timeout=30,
                        message="notify.failed")
    assert failed[0]["channel"] == "command" and failed[0]["error"] == "exit 3: nope"

    # no command and no notify-send: nothing is claimed, so setting one up later still announces
    configure_back = (zh / "zen.yaml").read_text().replace('command: "echo nope >&2; exit 3"', 'command: ""')
    (zh / "zen.yaml").write_text(configure_back)
    other = dispatch_sim(zh, tmp_path, "quiet", [{"ask": "Still there?"}, {"exit": 0}])
    wait_state(zh, other, "waiting", timeout=30)
    assert zen("send", other, "yes").returncode == 0
    wait_state(zh, other, "harvested", timeout=30)
    assert not [e for e in events(zh, other) if e["type"].startswith("notify.")]


def test_an_agent_at_its_prompt_is_announced_once_it_settles_and_a_finish_is_not(
        zh: Path, sups: Supervisors, tmp_path: Path) -> None:
    out = tmp_path / "notices.jsonl"
    configure(zh, f"cat >> {out}")
    sups.start()
    job = dispatch_sim(zh, tmp_path, "idler", [{"say": "ready for more"}, {"wait": True}])
    got = wait_until(lambda: notices(out), timeout=30, message="the idle notice")
    assert [(n["kind"], n["reason"]) for n in got] == [("waiting", "idle")]
    assert got[0]["text"] == "finished its turn: ready for more"
    assert zen("finish", job).returncode == 0
    wait_state(zh, job, "harvested", timeout=30)
    assert [(n["kind"], n["reason"]) for n in notices(out)] == [("waiting", "idle")]

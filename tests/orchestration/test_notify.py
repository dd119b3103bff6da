"""Notices in-process (zen.orchestration.alerts.notify, DESIGN 12), beyond the pure `due` decision
(tests/tui/test_notify_due.py): which channels a home has, what the notice command receives, that
each wait is announced once (recorded first, under the job's lock), failures recorded, idle
notices settling, and the Notifier thread reacting to a timeline."""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import one_line, tune, wait_until
from zen.core.ids import iso, parse_iso, utcnow
from zen.core.model import Task
from zen.orchestration.alerts import notify
from zen.orchestration.alerts.notify import Notice
from zen.store.home import Home, init_home
from zen.store.jobs import JobStore

JOB = "20270101T000000Z-fix-login-3fa9"


def command_home(home: Path, command: str, **more: str) -> Home:
    tune(home, **{"  desktop: true ": "  desktop: false", '  command: ""': f"  command: {json.dumps(command)}",
                  **more})
    return Home(home)


def started_job(h: Home, job: str = JOB, name: str = "fix-login") -> JobStore:
    store = JobStore(h)
    store.create(Task.model_validate({"id": job, "name": name, "prompt": "Fix it", "lane": "app",
                                      "created_at": iso(utcnow())}))
    store.append(job, "worktree.created", path="/w", branch=f"zen/{job}", base_commit="0" * 40)
    store.append(job, "agent.spawned", session="s", pid=1)
    return store


def of_type(store: JobStore, etype: str, job: str = JOB) -> list[dict[str, Any]]:
    return [e for e in store.events(job) if e["type"] == etype]


def lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(ln) for ln in path.read_text().splitlines()] if path.exists() else []


# -- channels -----------------------------------------------------------------------------------

def test_a_home_with_no_channel_sends_and_records_nothing(home: Path) -> None:
    h = command_home(home, "")
    store = started_job(h)
    store.append(JOB, "turn.waiting", actor="hook", reason="question")
    assert notify.channels(notify.settings(h)) == []
    assert notify.check(h, JOB) == (None, 0.0)
    assert of_type(store, "notify.sent") == []


@pytest.mark.parametrize(("cfg", "want"), [({"desktop": False, "command": "  "}, []),
                                           ({"desktop": False, "command": "cat"}, ["command"]),
                                           ({"command": None}, [])])
def test_a_blank_command_is_no_channel(cfg: dict[str, Any], want: list[str], monkeypatch: pytest.MonkeyPatch,
                                       tmp_path: Path) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))   # no notify-send on this PATH
    assert notify.channels(cfg) == want


def test_desktop_is_a_channel_only_where_notify_send_is_installed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    monkeypatch.setenv("PATH", str(bin_dir))
    assert notify.channels({"desktop": True}) == []
    tool = bin_dir / "notify-send"
    tool.write_text("#!/bin/sh\nexit 0\n")
    tool.chmod(0o755)
    assert notify.channels({"desktop": True}) == ["desktop"]
    assert notify.channels({"desktop": False}) == []


def test_a_broken_zen_yaml_means_no_settings_not_a_crash(home: Path) -> None:
    (home / "zen.yaml").write_text("notify: [unclosed\n")
    assert notify.settings(Home(home)) == {}
    assert notify.check(Home(home), JOB) == (None, 0.0)


# -- the notice command -------------------------------------------------------------------------

def test_the_command_gets_the_notice_as_json_and_in_its_environment(home: Path) -> None:
    out = home / "notices.jsonl"
    env_out = home / "env.txt"
    h = command_home(home, f"cat >> {out}; env | grep ^ZEN_ | sort > {env_out}")
    store = started_job(h)
    (h.job_dir(JOB) / "pane.log").write_text("\x1b[1mShould I delete the old table?\x1b[0m\n  \n")
    ev = store.append(JOB, "turn.waiting", actor="hook", reason="question")
    notice, again = notify.check(h, JOB)
    assert notice is not None and again == 0.0
    [got] = lines(out)
    assert got == {"v": 1, "kind": "waiting", "job": JOB, "name": "fix-login", "reason": "question",
                   "for_seq": ev["seq"], "ts": ev["ts"], "title": "zen: fix-login needs you",
                   "text": "asks a question: Should I delete the old table?", "home": str(home)}
    env = dict(ln.split("=", 1) for ln in env_out.read_text().splitlines())
    assert env["ZEN_NOTIFY_KIND"] == "waiting" and env["ZEN_NOTIFY_JOB"] == JOB
    assert env["ZEN_NOTIFY_REASON"] == "question" and env["ZEN_NOTIFY_TITLE"] == "zen: fix-login needs you"
    assert env["ZEN_HOME"] == str(home)


def test_the_command_runs_in_the_home(home: Path) -> None:
    h = command_home(home, "pwd > where.txt")
    store = started_job(h)
    store.append(JOB, "turn.waiting", actor="hook", reason="approval")
    notify.check(h, JOB)
    assert (home / "where.txt").read_text().strip() == str(home)


def test_a_wait_is_announced_once_however_often_it_is_checked(home: Path) -> None:
    out = home / "notices.jsonl"
    h = command_home(home, f"cat >> {out}")
    store = started_job(h)
    store.append(JOB, "turn.waiting", actor="hook", reason="question")
    assert notify.check(h, JOB)[0] is not None
    for _ in range(3):
        assert notify.check(h, JOB) == (None, 0.0)
    assert len(lines(out)) == 1
    [sent] = of_type(store, "notify.sent")
    assert (sent["kind"], sent["reason"], sent["channels"]) == ("waiting", "question", ["command"])


def test_the_notice_is_recorded_before_the_command_runs(home: Path) -> None:
    """A crash mid-send loses one notice, never sends two: the command already sees notify.sent."""
    seen = home / "seen.txt"
    h = command_home(home, f"grep -c notify.sent jobs/{JOB}/events.jsonl > {seen}")
    store = started_job(h)
    store.append(JOB, "turn.waiting", actor="hook", reason="dialog")
    notify.check(h, JOB)
    assert seen.read_text().strip() == "1"


def test_two_checkers_at_once_send_one_notice(home: Path) -> None:
    out = home / "notices.jsonl"
    h = command_home(home, f"cat >> {out}")
    store = started_job(h)
    store.append(JOB, "turn.waiting", actor="hook", reason="limit")
    results: list[Notice | None] = []
    barrier = threading.Barrier(4)

    def go() -> None:
        barrier.wait()
        results.append(notify.check(h, JOB)[0])

    threads = [threading.Thread(target=go) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sum(1 for r in results if r is not None) == 1
    assert len(lines(out)) == 1 and len(of_type(store, "notify.sent")) == 1


def test_a_failing_command_is_recorded_with_its_first_error_line_and_not_retried(home: Path) -> None:
    h = command_home(home, "echo 'no route to phone' >&2; echo second >&2; exit 3")
    store = started_job(h)
    ev = store.append(JOB, "turn.waiting", actor="hook", reason="question")
    assert notify.check(h, JOB)[0] is not None
    [failed] = of_type(store, "notify.failed")
    assert failed["channel"] == "command" and failed["for_seq"] == ev["seq"]
    assert failed["error"] == "exit 3: no route to phone"
    assert notify.check(h, JOB) == (None, 0.0)
    assert len(of_type(store, "notify.failed")) == 1


def test_a_silent_failure_says_only_its_exit_code(home: Path) -> None:
    h = command_home(home, "exit 9")
    store = started_job(h)
    store.append(JOB, "turn.waiting", actor="hook", reason="question")
    notify.check(h, JOB)
    assert of_type(store, "notify.failed")[0]["error"] == "exit 9"


def test_a_missing_notify_send_is_a_one_line_failure(home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", str(tmp_path / "nothing-here"))
    n = Notice(JOB, "fix-login", "waiting", 5, "question", iso(utcnow()))
    failed = notify.deliver(Home(home), n, {}, ["desktop"], "")
    assert set(failed) == {"desktop"} and one_line(failed["desktop"])


def test_a_new_wait_after_an_answer_is_announced_again(home: Path) -> None:
    out = home / "notices.jsonl"
    h = command_home(home, f"cat >> {out}")
    store = started_job(h)
    first = store.append(JOB, "turn.waiting", actor="hook", reason="question")
    notify.check(h, JOB)
    store.append(JOB, "input.sent", actor="human", text="yes")
    store.append(JOB, "turn.working")
    second = store.append(JOB, "turn.waiting", actor="hook", reason="approval")
    assert notify.check(h, JOB)[0] is not None
    assert [(n["reason"], n["for_seq"]) for n in lines(out)] == [("question", first["seq"]),
                                                                  ("approval", second["seq"])]


def test_the_homes_reasons_decide_which_waits_notify(home: Path) -> None:
    out = home / "notices.jsonl"
    h = command_home(home, f"cat >> {out}", **{"reasons: [question, approval, dialog, limit, idle]": "reasons: [approval]"})
    store = started_job(h)
    store.append(JOB, "turn.waiting", actor="hook", reason="question")
    assert notify.check(h, JOB) == (None, 0.0)
    assert lines(out) == [] and of_type(store, "notify.sent") == []


def test_an_end_is_announced_unless_the_home_says_ended_false(home: Path) -> None:
    out = home / "notices.jsonl"
    h = command_home(home, f"cat >> {out}")
    store = started_job(h)
    store.append(JOB, "agent.exited", exit_code=1)
    store.append(JOB, "harvest.done", branch=f"zen/review/{JOB}", commits=0)
    notice, _ = notify.check(h, JOB)
    assert notice is not None and notice.kind == "ended"
    [got] = lines(out)
    assert got["title"] == f"zen: fix-login {notice.reason}" and got["text"].startswith(f"job {JOB}")

    quiet = Home(home.parent / "quiet")
    init_home(quiet.root)
    command_home(quiet.root, f"cat >> {out}", **{"  ended: true ": "  ended: false"})
    qstore = started_job(quiet)
    qstore.append(JOB, "agent.exited", exit_code=1)
    qstore.append(JOB, "harvest.done", branch=f"zen/review/{JOB}", commits=0)
    assert notify.check(quiet, JOB) == (None, 0.0)
    assert len(lines(out)) == 1


# -- idle notices settle ------------------------------------------------------------------------

def test_an_idle_notice_waits_to_settle_and_is_then_sent(home: Path) -> None:
    out = home / "notices.jsonl"
    h = command_home(home, f"cat >> {out}")
    store = started_job(h)
    ev = store.append(JOB, "turn.waiting", actor="hook", reason="idle")
    at = parse_iso(ev["ts"]).timestamp()
    notice, again = notify.check(h, JOB, now_s=at + 0.5)
    assert notice is None and again == pytest.approx(notify.IDLE_SETTLE_S - 0.5)
    assert of_type(store, "notify.sent") == [] and lines(out) == []
    notice, again = notify.check(h, JOB, now_s=at + notify.IDLE_SETTLE_S)
    assert notice is not None and notice.reason == "idle" and again == 0.0
    assert lines(out)[0]["text"] == "finished its turn"


def test_an_agent_that_ends_its_turn_and_exits_is_announced_once_as_ended(home: Path) -> None:
    out = home / "notices.jsonl"
    h = command_home(home, f"cat >> {out}")
    store = started_job(h)
    ev = store.append(JOB, "turn.waiting", actor="hook", reason="idle")
    at = parse_iso(ev["ts"]).timestamp()
    assert notify.check(h, JOB, now_s=at)[0] is None
    store.append(JOB, "agent.exited", exit_code=0)
    store.append(JOB, "harvest.done", branch=f"zen/review/{JOB}", commits=1)
    notice, _ = notify.check(h, JOB, now_s=at + 5)
    assert notice is not None and notice.kind == "ended"
    assert [n["kind"] for n in lines(out)] == ["ended"]


@pytest.mark.parametrize(("kind", "reason", "ts", "left"), [
    ("waiting", "question", "2027-01-01T00:00:00.000Z", 0.0),
    ("ended", "idle", "2027-01-01T00:00:00.000Z", 0.0),
    ("waiting", "idle", "not a time", 0.0),
    ("waiting", "idle", "2027-01-01T00:00:00.000Z", 1.0),
])
def test_only_an_idle_wait_with_a_readable_time_settles(kind: str, reason: str, ts: str, left: float) -> None:
    n = Notice(JOB, "x", kind, 5, reason, ts)
    now = parse_iso("2027-01-01T00:00:00.500Z").timestamp()
    assert notify.settle_left(n, now) == pytest.approx(left)


def test_a_settled_idle_notice_has_nothing_left() -> None:
    n = Notice(JOB, "x", "waiting", 5, "idle", "2027-01-01T00:00:00.000Z")
    assert notify.settle_left(n, parse_iso("2027-01-01T00:01:00.000Z").timestamp()) == 0.0


# -- the words ----------------------------------------------------------------------------------

@pytest.mark.parametrize(("kind", "reason", "line", "body"), [
    ("waiting", "question", "Proceed?", "asks a question: Proceed?"),
    ("waiting", "approval", "", "waits for an approval"),
    ("waiting", "dialog", "Trust this folder?", "shows a dialog: Trust this folder?"),
    ("waiting", "limit", "usage limit", "reached a limit: usage limit"),
    ("waiting", "something-new", "x", "something-new: x"),
    ("ended", "failed", "Traceback (most recent call last)", f"job {JOB}: Traceback (most recent call last)"),
    ("ended", "harvested", "", f"job {JOB}"),
])
def test_the_body_says_what_the_job_needs_with_its_last_line(kind: str, reason: str, line: str, body: str) -> None:
    assert Notice(JOB, "fix-login", kind, 1, reason, "").body(line) == body


def test_the_title_names_the_job_and_what_happened() -> None:
    assert Notice(JOB, "fix-login", "waiting", 1, "question", "").title == "zen: fix-login needs you"
    assert Notice(JOB, "fix-login", "ended", 1, "harvest failed", "").title == "zen: fix-login harvest failed"


# -- the thread ---------------------------------------------------------------------------------

def test_the_notifier_announces_a_wait_appended_while_it_runs_and_one_present_at_start(home: Path) -> None:
    out = home / "notices.jsonl"
    h = command_home(home, f"cat >> {out}")
    early = "20270101T000000Z-early-0001"
    started_job(h, early, "early").append(early, "turn.waiting", actor="hook", reason="question")
    store = started_job(h)
    notifier = notify.Notifier(h)
    notifier.start()
    try:
        wait_until(lambda: [n["job"] for n in lines(out)] == [early], timeout=10, message="the waiting job at start")
        store.append(JOB, "turn.waiting", actor="hook", reason="approval")
        wait_until(lambda: len(lines(out)) == 2, timeout=10, message="the new wait announced")
    finally:
        notifier.stop()
    assert [(n["job"], n["reason"]) for n in lines(out)] == [(early, "question"), (JOB, "approval")]
    assert len(of_type(store, "notify.sent")) == 1

"""The team tools' bookkeeping in-process (zen.orchestration.teams.ops, DESIGN 13): reports and
the parent's message, who may see, control and message whom, compare-and-set control on a
revision, queued messages delivered once, agent_wait, and the brief."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import one_line
from zen.core.ids import iso, utcnow
from zen.core.model import Task
from zen.errors import NotFound, UsageError, ZenError
from zen.orchestration.teams import ops as team_ops
from zen.orchestration.teams.workers import Caller, Refused, RevisionMismatch
from zen.store.home import Home
from zen.store.jobs import JobStore

P = "20270101T000000Z-parent-0001"
W = "20270101T000001Z-worker-0002"
S = "20270101T000002Z-sibling-0003"
X = "20270101T000003Z-stranger-0004"


def job(h: Home, job_id: str, name: str, parent: str | None = None, live: bool = True, **task: Any) -> None:
    store = JobStore(h)
    fields: dict[str, Any] = {"id": job_id, "name": name, "prompt": f"Goal of {name}", "lane": "app",
                              "created_at": iso(utcnow()), **task}
    if parent:
        fields.update(parent=parent, created_by=f"job:{parent}")
    store.create(Task.model_validate(fields))
    if live:
        store.append(job_id, "worktree.created", path=f"/w/{name}", branch=f"zen/{job_id}", base_commit="0" * 40)
        store.append(job_id, "agent.spawned", session=f"zen-none-{name}", pid=1)
        store.append(job_id, "turn.working", actor="hook")


@pytest.fixture
def team(home: Path) -> Home:
    h = Home(home)
    job(h, P, "parent")
    job(h, W, "worker", parent=P)
    job(h, S, "sibling", parent=P)
    job(h, X, "stranger")
    return h


def events(h: Home, job_id: str, etype: str | None = None) -> list[dict[str, Any]]:
    evs = JobStore(h).events(job_id)
    return [e for e in evs if etype is None or e["type"] == etype]


def revision(h: Home, job_id: str) -> int:
    return len(JobStore(h).events(job_id))


# -- reports ------------------------------------------------------------------------------------

def test_a_done_report_is_recorded_and_queued_for_the_working_parent(team: Home) -> None:
    out = team_ops.report(team, Caller(W), "done", summary="login fixed")
    assert out["status"] == "done" and out["parent"] == P
    assert out["parent_message"]["queued"] is True and out["parent_message"]["delivered"] is False
    [rep] = events(team, W, "team.report")
    assert (rep["status"], rep["summary"], rep["parent"], rep["actor"]) == ("done", "login fixed", P, "agent")
    [msg] = events(team, P, "team.message")
    assert msg["text"] == f"Worker {W} (worker) reports done: login fixed"
    assert (msg["sender"], msg["kind"], msg["queued"]) == (f"job:{W}", "report", True)
    assert team_ops.pending_messages(JobStore(team).events(P))[0]["id"] == msg["id"]


def test_a_blocked_report_names_its_blocker_to_the_parent(team: Home) -> None:
    team_ops.report(team, Caller(W), "blocked", blocker="no database")
    [msg] = events(team, P, "team.message")
    assert msg["text"] == f"Worker {W} (worker) reports blocked Blocker: no database"


def test_progress_is_recorded_but_not_sent_to_the_parent(team: Home) -> None:
    out = team_ops.report(team, Caller(W), "progress", summary="half way")
    assert out["parent_message"] is None
    assert events(team, P, "team.message") == [] and len(events(team, W, "team.report")) == 1


def test_a_goal_workers_blocker_waits_for_its_goal_to_stop(home: Path) -> None:
    h = Home(home)
    job(h, P, "parent")
    job(h, W, "worker", parent=P, goal="until-done")
    assert team_ops.report(h, Caller(W), "blocked", blocker="flaky test")["parent_message"] is None
    assert events(h, P, "team.message") == []


def test_a_report_to_a_parent_that_has_ended_is_still_recorded(home: Path) -> None:
    h = Home(home)
    job(h, P, "parent")
    job(h, W, "worker", parent=P)
    JobStore(h).append(P, "job.cancelled", actor="human", reason="x")
    out = team_ops.report(h, Caller(W), "done", summary="too late")
    assert out["parent_message"] is None and len(events(h, W, "team.report")) == 1


@pytest.mark.parametrize(("caller", "status", "blocker", "error", "words"), [
    (None, "done", "", Refused, "there is no job here"),
    (W, "finished", "", UsageError, "status must be one of done, blocked, progress (not 'finished')"),
    (W, "blocked", "   ", UsageError, "a blocked report says what blocks it"),
])
def test_bad_reports_are_refused_in_one_line_and_record_nothing(team: Home, caller: str | None, status: str,
                                                                 blocker: str, error: type, words: str) -> None:
    with pytest.raises(error) as exc:
        team_ops.report(team, Caller(caller), status, blocker=blocker)
    assert one_line(str(exc.value)) and words in str(exc.value)
    assert events(team, W, "team.report") == []


def test_a_huge_summary_is_cut_to_the_limit(team: Home) -> None:
    team_ops.report(team, Caller(W), "progress", summary="é" * (team_ops.MAX_TEXT + 500))
    assert len(events(team, W, "team.report")[0]["summary"]) == team_ops.MAX_TEXT


# -- seeing workers -----------------------------------------------------------------------------

def test_a_job_sees_its_own_workers_and_no_one_else(team: Home) -> None:
    views = team_ops.status(team, Caller(P))
    assert [v["id"] for v in views] == sorted([W, S])
    assert all(v["parent"] == P and v["state"] == "working" and v["settled"] is False for v in views)
    for other in (X, P):
        with pytest.raises(Refused) as exc:
            team_ops.status(team, Caller(W), [other])
        assert f"is not a worker of job {W}" in str(exc.value)


def test_a_human_names_the_jobs_to_look_at(team: Home) -> None:
    with pytest.raises(UsageError):
        team_ops.status(team, Caller(None))
    assert [v["id"] for v in team_ops.status(team, Caller(None), ["stranger"])] == [X]


def test_a_worker_not_started_yet_is_pending(team: Home) -> None:
    view = team_ops.worker_view(team, "20270101T000009Z-later-0009")
    assert view == {"id": "20270101T000009Z-later-0009", "state": "pending", "revision": 0, "settled": False,
                    "report": None}


def test_a_worker_is_settled_by_done_or_blocked_or_its_end(team: Home) -> None:
    team_ops.report(team, Caller(W), "blocked", blocker="stuck")
    view = team_ops.worker_view(team, W)
    assert view["settled"] is True and view["report"]["status"] == "blocked" and view["report"]["blocker"] == "stuck"
    JobStore(team).append(S, "job.cancelled", actor="human", reason="x")
    assert team_ops.worker_view(team, S)["settled"] is True


def test_a_goal_worker_is_not_settled_by_a_blocker_along_the_way(home: Path) -> None:
    h = Home(home)
    job(h, P, "parent")
    job(h, W, "worker", parent=P, goal="until-done")
    team_ops.report(h, Caller(W), "blocked", blocker="for now")
    view = team_ops.worker_view(h, W)
    assert view["until_done"] is True and view["settled"] is False


def test_wait_returns_at_once_when_all_are_settled_and_marks_their_reports_seen(team: Home) -> None:
    team_ops.report(team, Caller(W), "done", summary="ok")
    team_ops.report(team, Caller(S), "done", summary="ok too")
    assert len(team_ops.pending_messages(JobStore(team).events(P))) == 2
    out = team_ops.wait(team, Caller(P), timeout_s=30)
    assert out["done"] is True and out["waited_s"] < 5
    assert team_ops.pending_messages(JobStore(team).events(P)) == []
    assert {e["via"] for e in events(team, P, "team.delivered")} == {"wait"}


def test_wait_gives_up_at_its_timeout_and_leaves_unsettled_reports_queued(team: Home) -> None:
    team_ops.report(team, Caller(W), "done", summary="ok")
    out = team_ops.wait(team, Caller(P), timeout_s=0)
    assert out["done"] is False
    assert {v["id"]: v["settled"] for v in out["workers"]} == {W: True, S: False}
    assert team_ops.pending_messages(JobStore(team).events(P)) == []   # W's report was returned: seen


# -- control ------------------------------------------------------------------------------------

def test_control_needs_a_known_action_and_an_agent_must_say_the_revision_it_saw(team: Home) -> None:
    with pytest.raises(UsageError) as exc:
        team_ops.control(team, Caller(P), W, "explode", 1)
    assert "action must be one of pause, resume, cancel, finish, continue" in str(exc.value)
    with pytest.raises(UsageError) as exc:
        team_ops.control(team, Caller(P), W, "continue", None)
    assert "expected_revision is required" in str(exc.value)


def test_control_at_a_stale_revision_is_refused_with_the_current_one(team: Home) -> None:
    now = revision(team, W)
    with pytest.raises(RevisionMismatch) as exc:
        team_ops.control(team, Caller(P), W, "continue", now - 1)
    assert (exc.value.expected, exc.value.current) == (now - 1, now)
    assert f"job {W} is at revision {now}, not {now - 1}" in str(exc.value)
    assert events(team, W, "team.control") == []


def test_continue_at_the_current_revision_records_the_control_and_queues_the_nudge(team: Home) -> None:
    now = revision(team, W)
    out = team_ops.control(team, Caller(P), W, "continue", now)
    assert out["id"] == W and out["action"] == "continue" and out["revision"] == now + 2
    [ctl] = events(team, W, "team.control")
    assert (ctl["target"], ctl["action"], ctl["expected_revision"], ctl["by"]) == (W, "continue", now, f"job:{P}")
    [msg] = events(team, W, "team.message")
    assert msg["text"] == team_ops.CONTINUE_TEXT and msg["kind"] == "continue" and msg["queued"] is True


def test_of_two_controllers_at_one_revision_exactly_one_wins(team: Home) -> None:
    now = revision(team, W)
    won: list[str] = []
    lost: list[int] = []
    barrier = threading.Barrier(2)

    def go() -> None:
        barrier.wait()
        try:
            team_ops.control(team, Caller(P), W, "continue", now)
            won.append("x")
        except RevisionMismatch as exc:
            lost.append(exc.current)

    threads = [threading.Thread(target=go) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(won) == 1 and len(lost) == 1 and lost[0] > now
    assert len(events(team, W, "team.control")) == 1


def test_a_job_cannot_control_a_sibling_or_its_parent(team: Home) -> None:
    for target in (S, P):
        with pytest.raises(Refused):
            team_ops.control(team, Caller(W), target, "cancel", revision(team, target))
    assert events(team, S, "team.control") == [] and events(team, P, "team.control") == []


def test_a_parent_cancels_its_worker_with_its_name_on_the_record(home: Path) -> None:
    h = Home(home)
    job(h, P, "parent")
    job(h, W, "worker", parent=P, live=False)        # queued: nothing to stop
    out = team_ops.control(h, Caller(P), W, "cancel", revision(h, W))
    assert out["state"] == "cancelled" and out["detail"]["state"] == "cancelled"
    [cancelled] = events(h, W, "job.cancelled")
    assert cancelled["reason"] == f"cancelled by job:{P}" and cancelled["actor"] == "agent"


# -- messages -----------------------------------------------------------------------------------

def test_a_parent_messages_its_working_worker_by_queueing(team: Home) -> None:
    out = team_ops.message(team, Caller(P), W, "use the staging config")
    assert out["queued"] is True and out["delivered"] is False
    [msg] = events(team, W, "team.message")
    assert (msg["text"], msg["sender"], msg["target"], msg["kind"]) == ("use the staging config", f"job:{P}", W, "message")


def test_a_worker_may_message_its_parent_but_not_a_sibling_or_a_stranger(team: Home) -> None:
    team_ops.message(team, Caller(W), P, "which config?")
    assert len(events(team, P, "team.message")) == 1
    for target in (S, X):
        with pytest.raises(Refused):
            team_ops.message(team, Caller(W), target, "hi")
    assert events(team, S, "team.message") == [] and events(team, X, "team.message") == []


def test_an_empty_message_is_refused(team: Home) -> None:
    with pytest.raises(UsageError) as exc:
        team_ops.message(team, Caller(P), W, "  \n ")
    assert str(exc.value) == "the message is empty"


def test_a_message_to_an_ended_job_says_there_is_no_agent(team: Home) -> None:
    JobStore(team).append(W, "job.cancelled", actor="human", reason="x")
    with pytest.raises(ZenError) as exc:
        team_ops.message(team, Caller(P), W, "still there?")
    assert str(exc.value) == f"job {W} is cancelled: there is no agent to give the message to"


def test_a_message_to_a_task_still_in_the_spool_says_to_wait(team: Home) -> None:
    with pytest.raises(NotFound):
        team_ops.message(team, Caller(None), "no-such-job", "hello")


def test_a_delivery_is_claimed_once_and_then_the_message_is_no_longer_pending(team: Home) -> None:
    msg_id = team_ops.message(team, Caller(P), W, "one")["id"]
    team_ops.message(team, Caller(P), W, "two")
    assert [m["text"] for m in team_ops.pending_messages(JobStore(team).events(W))] == ["one", "two"]
    assert team_ops.claim_delivery(team, W, msg_id, "hook") is True
    assert team_ops.claim_delivery(team, W, msg_id, "typed") is False
    assert [m["text"] for m in team_ops.pending_messages(JobStore(team).events(W))] == ["two"]
    assert [e["via"] for e in events(team, W, "team.delivered")] == ["hook"]


def test_queued_messages_stay_queued_when_the_agent_has_no_pane(team: Home) -> None:
    team_ops.message(team, Caller(P), W, "later")
    assert team_ops.deliver_queued(team, W) == 0
    assert len(team_ops.pending_messages(JobStore(team).events(W))) == 1
    assert events(team, W, "input.sent") == []


def test_a_message_is_cut_to_the_limit(team: Home) -> None:
    team_ops.message(team, Caller(P), W, "x" * (team_ops.MAX_TEXT + 1))
    assert len(events(team, W, "team.message")[0]["text"]) == team_ops.MAX_TEXT


# -- the brief ----------------------------------------------------------------------------------

def test_the_brief_describes_the_callers_own_job(team: Home) -> None:
    JobStore(team).paths(P).handoff.write_text("# Handoff: parent\n")
    b = team_ops.brief(team, Caller(P))
    assert (b["id"], b["name"], b["goal"], b["parent"]) == (P, "parent", "Goal of parent", None)
    assert b["workers"] == sorted([W, S]) and b["handoff"] == "# Handoff: parent\n"
    assert b["until_done"] is False and b["lane"] == "app" and b["revision"] == revision(team, P)
    wb = team_ops.brief(team, Caller(W))
    assert wb["parent"] == P and wb["workers"] == [] and wb["handoff"] == ""


@pytest.mark.parametrize("fn", [team_ops.brief, lambda h, c: team_ops.lock(h, c, "a.py"), team_ops.unlock])
def test_a_human_has_no_job_to_brief_or_lease_for(team: Home, fn: Any) -> None:
    with pytest.raises(Refused) as exc:
        fn(team, Caller(None))
    assert "there is no job here" in str(exc.value)

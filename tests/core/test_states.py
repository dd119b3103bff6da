"""The job state machine: the transition table, what each event records, and what it may not do."""

from __future__ import annotations

from typing import Any

import pytest

from zen.core.model import JobSnapshot, JobStatus
from zen.core.states import apply, can_move, replay

S = JobStatus
JOB = "20261129T101500Z-fix-login-3fa9"


def ev(etype: str, **fields: Any) -> dict[str, Any]:
    return {"type": etype, **fields}


def timeline(*events: dict[str, Any]) -> list[dict[str, Any]]:
    """Events with gap-free seq numbers and increasing timestamps, as the store writes them."""
    out = []
    for n, e in enumerate(events, start=1):
        out.append({"v": 1, "seq": n, "ts": f"2026-11-29T10:15:{n:02d}.000Z", "job": JOB, **e})
    return out


HAPPY = timeline(
    ev("task.received", task={"name": "fix-login", "agent": "claude", "lane": "app", "domain": "code",
                              "priority": 2, "created_at": "2026-11-29T10:15:00.123Z"}),
    ev("job.queued"),
    ev("preflight.passed"),
    ev("worktree.created", path="/h/worktrees/x", branch="zen/x", base_commit="abc123"),
    ev("agent.spawned", session="zen-x", target="zen-x:0.0"),
    ev("turn.waiting", reason="question"),
    ev("input.sent", text="yes"),
    ev("turn.working"),
    ev("agent.exited", exit_code=0, signal=None),
    ev("harvest.done", branch="zen/review/x", commit="def456"),
)


def test_a_whole_run_replays_to_a_harvested_snapshot() -> None:
    snap = replay(JOB, HAPPY)
    assert snap.state is S.harvested
    assert (snap.name, snap.agent, snap.lane, snap.domain, snap.priority) == ("fix-login", "claude", "app", "code", 2)
    assert snap.created_at == "2026-11-29T10:15:00.123Z"
    assert (snap.worktree, snap.branch, snap.base_commit) == ("/h/worktrees/x", "zen/x", "abc123")
    assert (snap.tmux_session, snap.tmux_target) == ("zen-x", "zen-x:0.0")
    assert (snap.review_branch, snap.harvest_commit) == ("zen/review/x", "def456")
    assert snap.exit_code == 0 and snap.attempts == 1 and snap.turns == 1
    assert snap.started_at == "2026-11-29T10:15:05.000Z"
    assert snap.ended_at == "2026-11-29T10:15:09.000Z"
    assert snap.seq == len(HAPPY) and snap.revision == len(HAPPY)
    assert snap.updated_at == HAPPY[-1]["ts"]


def test_each_prefix_of_the_run_is_in_the_state_its_last_event_names() -> None:
    expected = [S.queued, S.queued, S.queued, S.starting, S.working, S.waiting, S.waiting, S.working,
                S.exited, S.harvested]
    got = [replay(JOB, HAPPY[: n + 1]).state for n in range(len(HAPPY))]
    assert got == expected


def test_replay_is_incremental_apply() -> None:
    snap = JobSnapshot(job=JOB)
    for e in HAPPY:
        apply(snap, e)
    assert snap.model_dump() == replay(JOB, HAPPY).model_dump()


# the table of DESIGN section 2: queued -> starting -> working <-> waiting -> exited -> harvested,
# plus failed and cancelled
@pytest.mark.parametrize(("current", "target", "allowed"), [
    (S.queued, S.starting, True),
    (S.queued, S.working, True),
    (S.queued, S.failed, True),
    (S.queued, S.cancelled, True),
    (S.queued, S.exited, False),
    (S.queued, S.harvested, False),
    (S.queued, S.waiting, False),
    (S.starting, S.working, True),
    (S.starting, S.queued, True),      # a failed start goes back to the queue for a retry
    (S.starting, S.harvested, False),
    (S.working, S.waiting, True),
    (S.waiting, S.working, True),
    (S.working, S.exited, True),
    (S.working, S.queued, False),
    (S.working, S.harvested, False),  # a harvest of a live agent is a snapshot: it stays working
    (S.waiting, S.harvested, False),
    (S.exited, S.harvested, True),
    (S.exited, S.queued, True),        # retry after an exit
    (S.exited, S.working, False),
    (S.harvested, S.harvested, True),  # re-harvest
    (S.harvested, S.failed, False),
    (S.harvested, S.queued, False),
    (S.failed, S.failed, True),
    (S.failed, S.queued, False),
    (S.failed, S.harvested, False),
])
def test_transition_table(current: JobStatus, target: JobStatus, allowed: bool) -> None:
    assert can_move(current, target) is allowed


def test_cancelled_is_terminal_for_every_state() -> None:
    assert not any(can_move(S.cancelled, target) for target in S)
    # and every state that is not final can be cancelled
    assert all(can_move(s, S.cancelled) for s in S if not s.final)


def test_a_cancelled_job_stays_cancelled_but_its_harvest_is_recorded() -> None:
    snap = replay(JOB, timeline(
        ev("task.received", task={"name": "x", "lane": "app"}),
        ev("worktree.created", path="/w", branch="zen/x"),
        ev("agent.spawned", session="s"),
        ev("job.cancelled", actor="human"),
        ev("agent.exited", exit_code=143, signal=15),
        ev("harvest.done", branch="zen/review/x", commit="c0ffee"),
        ev("turn.working"),
    ))
    assert snap.state is S.cancelled and snap.cancelled
    assert snap.review_branch == "zen/review/x" and snap.harvest_commit == "c0ffee"
    assert snap.exit_code == 143 and snap.exit_signal == 15
    # the agent's exit, recorded after the cancel, is when the job ended
    assert snap.ended_at == "2026-11-29T10:15:05.000Z"


def test_events_that_the_table_refuses_are_recorded_but_leave_the_state() -> None:
    snap = replay(JOB, timeline(ev("task.received", task={"name": "x"}), ev("agent.exited", exit_code=1)))
    assert snap.state is S.queued and snap.exit_code == 1
    done = replay(JOB, [*HAPPY, {"seq": 11, "type": "turn.working"},
                        {"seq": 12, "type": "job.failed", "reason": "late"}])
    assert done.state is S.harvested and done.reason is None


def test_unknown_event_types_change_nothing_but_seq_and_revision() -> None:
    before = replay(JOB, HAPPY[:5])
    after = replay(JOB, [*HAPPY[:5], {"seq": 6, "ts": "t6", "type": "coord.lease.granted", "lease": "x"}])
    assert after.state is before.state
    assert after.revision == before.revision + 1 and after.seq == 6
    assert after.updated_at == "t6"
    dump_a, dump_b = after.model_dump(), before.model_dump()
    for key in ("seq", "revision", "updated_at"):
        dump_a.pop(key), dump_b.pop(key)
    assert dump_a == dump_b


def test_a_missing_seq_counts_on_from_the_last() -> None:
    snap = replay(JOB, [{"seq": 4, "type": "job.queued"}, {"type": "turn.working"}])
    assert snap.seq == 5


def test_waiting_reasons_follow_the_latest_wait_and_clear_on_work() -> None:
    base = HAPPY[:5]
    snap = replay(JOB, [*base, {"seq": 6, "type": "turn.waiting", "reason": "idle"},
                        {"seq": 7, "type": "turn.waiting", "reason": "approval"}])
    assert snap.state is S.waiting and snap.reason == "approval"
    assert snap.turns == 1  # a second wait without work in between is the same turn
    snap = replay(JOB, [*base, {"seq": 6, "type": "turn.waiting", "reason": "idle"},
                        {"seq": 7, "type": "turn.working"}, {"seq": 8, "type": "turn.waiting", "reason": "idle"}])
    assert snap.turns == 2
    apply(snap, {"seq": 9, "type": "turn.working"})
    assert snap.reason is None


def test_failure_and_retry_carry_their_reason_and_time() -> None:
    failed = replay(JOB, [*HAPPY[:4], {"seq": 5, "ts": "t5", "type": "job.failed", "reason": "tmux gone"}])
    assert failed.state is S.failed and failed.reason == "tmux gone" and failed.ended_at == "t5"
    retry = replay(JOB, [*HAPPY[:9], {"seq": 10, "type": "retry.scheduled", "at": "2026-11-29T11:00:00.000Z",
                                      "reason": "exit 1, retry 1 of 2"}])
    assert retry.state is S.queued and retry.retry_at == "2026-11-29T11:00:00.000Z"
    assert retry.reason == "exit 1, retry 1 of 2"
    again = apply(retry, {"seq": 11, "type": "worktree.created", "path": "/w2"})
    assert again.state is S.starting and again.attempts == 2 and again.reason is None


def test_timeout_is_flagged_and_the_exit_still_moves_the_state() -> None:
    snap = replay(JOB, [*HAPPY[:5], {"seq": 6, "type": "job.timeout"}, {"seq": 7, "type": "agent.exited",
                                                                     "exit_code": None, "signal": 9}])
    assert snap.timed_out and snap.state is S.exited and snap.exit_signal == 9


def test_usage_and_guard_decisions_accumulate() -> None:
    snap = replay(JOB, [*HAPPY[:5],
                        {"seq": 6, "type": "usage", "input_tokens": 100, "output_tokens": 20, "cost_usd": 0.5},
                        {"seq": 7, "type": "usage", "input_tokens": 50, "cache_read_input_tokens": 7,
                         "cost_usd": 0.25},
                        {"seq": 8, "type": "guard.allowed"}, {"seq": 9, "type": "guard.denied"},
                        {"seq": 10, "type": "guard.allowed"}, {"seq": 11, "ts": "t11", "type": "output"}])
    assert snap.usage == {"input_tokens": 150, "output_tokens": 20, "cache_read_input_tokens": 7,
                          "cost_usd": 0.75}
    assert snap.guard == {"allowed": 2, "denied": 1}
    assert snap.last_output_at == "t11" and snap.state is S.working


def test_the_first_spawn_time_is_kept_across_respawns() -> None:
    snap = replay(JOB, [*HAPPY[:5], {"seq": 6, "ts": "later", "type": "agent.spawned", "session": "zen-x2"}])
    assert snap.started_at == "2026-11-29T10:15:05.000Z" and snap.tmux_session == "zen-x2"



def test_an_anomaly_flagged_is_counted_and_its_message_kept_for_the_dashboard_and_the_watch() -> None:
    events = timeline(
        ev("task.received", task={"name": "loop"}), ev("job.queued"), ev("preflight.passed"),
        ev("worktree.created", path="/h/worktrees/x", branch="zen/x", base_commit="abc123"),
        ev("agent.spawned", session="zen-x", target="zen-x:0.0"),
        ev("anomaly.flagged", what="tool-loop", key="k1", message="the same call 9 times in a row"),
        ev("anomaly.flagged", what="deny-burst", key="k2", message="12 denials in 5 minutes"))
    assert replay(JOB, events[:5]).anomalies == 0
    snap = replay(JOB, events)
    assert (snap.anomalies, snap.anomaly) == (2, "12 denials in 5 minutes")
    assert snap.state is replay(JOB, events[:5]).state          # a finding moves no state

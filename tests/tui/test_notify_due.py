"""What a timeline calls for: the pure decision behind notifications, on recorded histories."""

from __future__ import annotations

from typing import Any

from zen.orchestration.alerts.notify import due

NOW = 1_800_000_000.0  # 2027-01-15


def timeline(*steps: tuple[str, dict[str, Any]], ts: str = "2027-01-15T08:00:00.000Z") -> list[dict[str, Any]]:
    base = [("task.received", {"task": {"name": "fix-it", "agent": "sim", "lane": "app"}}), ("job.queued", {}),
            ("worktree.created", {"path": "/w"}), ("agent.spawned", {"session": "s"})]
    return [{"v": 1, "seq": i, "ts": ts, "job": "J1", "type": t, "actor": "supervisor", **f}
            for i, (t, f) in enumerate([*base, *steps], start=1)]


def hook(reason: str) -> tuple[str, dict[str, Any]]:
    return "turn.waiting", {"reason": reason, "actor": "hook"}


def sent(kind: str, seq: int) -> tuple[str, dict[str, Any]]:
    return "notify.sent", {"kind": kind, "for_seq": seq}


def test_a_question_from_a_hook_is_due_once() -> None:
    evs = timeline(hook("question"))
    n = due(evs, now_s=NOW)
    assert n is not None and (n.kind, n.for_seq, n.reason, n.name) == ("waiting", 5, "question", "fix-it")
    assert n.title == "zen: fix-it needs you"
    assert due(timeline(hook("question"), sent("waiting", 5)), now_s=NOW) is None


def test_more_events_in_the_same_wait_do_not_make_another_notice() -> None:
    evs = timeline(hook("question"), sent("waiting", 5), ("usage", {"input_tokens": 5}), hook("question"))
    assert due(evs, now_s=NOW) is None


def test_silence_alone_is_not_worth_a_notice_but_the_agent_saying_idle_is() -> None:
    assert due(timeline(("turn.waiting", {"reason": "idle", "by": "activity"})), now_s=NOW) is None
    n = due(timeline(hook("idle")), now_s=NOW)
    assert n is not None and n.reason == "idle"
    assert due(timeline(hook("idle")), reasons=("question",), now_s=NOW) is None


def test_a_silent_wait_refined_to_a_question_is_announced_as_that_wait() -> None:
    evs = timeline(("turn.waiting", {"reason": "idle"}), ("turn.waiting", {"reason": "question"}))
    n = due(evs, now_s=NOW)
    assert n is not None and (n.for_seq, n.reason) == (5, "question")


def test_an_answer_ends_the_wait_and_the_next_question_is_a_new_one() -> None:
    evs = timeline(hook("question"), sent("waiting", 5), ("input.sent", {"actor": "human", "text": "yes"}))
    assert due(evs, now_s=NOW) is None
    evs += timeline(("turn.working", {}), hook("approval"))[-2:]
    for i, ev in enumerate(evs, start=1):
        ev["seq"] = i
    n = due(evs, now_s=NOW)
    assert n is not None and (n.reason, n.for_seq) == ("approval", 9)


def test_a_job_that_ends_on_its_own_is_announced_once() -> None:
    evs = timeline(hook("question"), sent("waiting", 5), ("agent.exited", {"exit_code": 0}),
                   ("harvest.done", {"branch": "zen/review/J1"}))
    n = due(evs, now_s=NOW)
    assert n is not None and (n.kind, n.reason, n.for_seq) == ("ended", "harvested", 8)
    assert n.title == "zen: fix-it harvested"
    assert due([*evs, *timeline(sent("ended", 8))[-1:]], now_s=NOW) is None
    assert due(evs, ended=False, now_s=NOW) is None


def test_ends_a_human_caused_or_long_ago_are_not_announced() -> None:
    cancelled = timeline(("job.cancelled", {"actor": "human"}), ("agent.exited", {"actor": "human"}))
    assert due(cancelled, now_s=NOW) is None
    finished = timeline(("agent.exited", {"actor": "human", "why": "finish"}), ("harvest.done", {}))
    assert due(finished, now_s=NOW) is None
    # zen finish asked, the supervisor saw the agent go first
    raced = timeline(("finish.requested", {"actor": "human"}), ("agent.exited", {}), ("harvest.done", {}))
    assert due(raced, now_s=NOW) is None
    failed = timeline(("agent.exited", {"exit_code": 1}), ("job.failed", {"reason": "boom"}))
    assert due(failed, now_s=NOW) is not None
    assert due(failed, now_s=NOW + 7200) is None


def test_a_retry_starts_over() -> None:
    evs = timeline(("agent.exited", {"exit_code": 1}), ("retry.scheduled", {"at": "x"}),
                   ("worktree.created", {}), ("agent.spawned", {}), hook("dialog"))
    n = due(evs, now_s=NOW)
    assert n is not None and (n.kind, n.reason) == ("waiting", "dialog")

"""Webhooks from the durable outbox against a real HTTP receiver on 127.0.0.1: at-least-once
through failures and a kill -9 of the supervisor, signed, filtered, dead-lettered with a reason."""

from __future__ import annotations

import json
import socket
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.coord.receiver import Receiver
from tests.coord.util import set_coordinator
from tests.helpers import wait_until, zen
from tests.supervisor.util import dispatch_sim, events, wait_state
from zen.coord.webhook import signature, verify
from zen.store.events import read_events_any

SECRET = "s3cret-for-tests"
DENIED_STEPS = [{"bash": "rm -rf ~", "description": "clean up"}, {"bash": "cat ~/.ssh/id_rsa"}]


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    r = Receiver()
    yield r
    r.close()


def _configure(zh: Path, url: str, **extra: str) -> None:
    set_coordinator(zh, notification_webhook=url, notification_secret=SECRET, webhook_backoff="0.05s",
                    webhook_backoff_cap="0.2s", **extra)


def _control(zh: Path, etype: str) -> list[dict]:
    return [e for e in read_events_any(zh / "logs" / "control.jsonl") if e.get("type") == etype]


def test_a_receiver_failing_the_first_tries_gets_every_event_once_retries_succeed(zh: Path, sups, tmp_path: Path,
                                                                                 receiver: Receiver) -> None:
    receiver.fail_first = 2
    _configure(zh, receiver.url)
    sups.start()
    job = dispatch_sim(zh, tmp_path, "noisy", [*DENIED_STEPS, {"ask": "Which port should I use?"},
                                              {"say": "ok"}, {"exit": 0}], "--lane", "app")
    wait_state(zh, job, "waiting", timeout=60)
    denied = [e for e in events(zh, job) if e["type"] == "guard.denied"]
    assert len(denied) == 2
    assert zen("send", job, "8080").returncode == 0
    wait_state(zh, job, "harvested", timeout=60)
    want = {f"{job}:{denied[0]['seq']}", f"{job}:{denied[1]['seq']}"}
    got = wait_until(lambda: d if len(d := receiver.delivered()) >= 4 else None, timeout=30,
                     message="four notifications delivered")
    kinds = sorted(p["event"] for p in got.values())
    assert kinds == ["denied", "denied", "finished", "waiting"], kinds
    assert want <= set(got)
    for item_id, payload in got.items():
        assert receiver.attempts(item_id) == 3                       # two 503s, then taken
        assert payload["id"] == item_id and payload["job"] == job and payload["text"].startswith("zen: ")
    waiting = next(p for p in got.values() if p["event"] == "waiting")
    assert waiting["reason"] == "question" and "needs you" in waiting["text"]
    finished = next(p for p in got.values() if p["event"] == "finished")
    assert finished["review_branch"] == f"zen/review/{job}" and finished["exit_code"] == 0
    for r in receiver.requests:                                    # every attempt is signed
        assert verify(SECRET, r["headers"], r["body"]), r["headers"]
        assert not verify("another secret", r["headers"], r["body"])
        assert r["headers"]["Idempotency-Key"] == r["headers"]["webhook-id"]
    # recorded once the answer is read (just after the receiver sent it)
    sent = wait_until(lambda: s if len(s := _control(zh, "webhook.sent")) >= 4 else None, timeout=10,
                      message="webhook.sent lines")
    assert sorted(e["id"] for e in sent) == sorted(got) and {e["attempts"] for e in sent} == {3}
    # the idle wait between the last turn and the exit is announced as finished, not as waiting
    outbox = zh / "coord" / "outbox"
    wait_until(lambda: not [p for p in outbox.glob("*.json") if not p.name.startswith(".")], timeout=20,
               message="nothing left pending")
    superseded = [json.loads(p.read_text()) for p in (outbox / "sent").glob("*.json")]
    superseded = [x for x in superseded if x.get("superseded")]
    assert [x["payload"]["reason"] for x in superseded] == ["idle"]
    assert len(receiver.delivered()) == 4


def test_kill_9_of_the_supervisor_mid_delivery_loses_no_event(zh: Path, sups, tmp_path: Path,
                                                              receiver: Receiver) -> None:
    receiver.delay_s = 0.6                                         # a slow receiver: kill while it answers
    _configure(zh, receiver.url, notification_events="[denied]")
    proc = sups.start()
    steps = [{"bash": f"rm -rf ~/dir{i}"} for i in range(6)]
    job = dispatch_sim(zh, tmp_path, "deny-six", [*steps, {"wait": True}], "--lane", "app")
    wait_until(lambda: len([e for e in events(zh, job) if e["type"] == "guard.denied"]) == 6, timeout=60,
               message="six denials")
    assert receiver.started.wait(30)
    sups.kill9(proc)                                               # mid-delivery: one request in flight
    in_flight = len(receiver.requests)
    assert in_flight < 6
    sups.start()
    want = {f"{job}:{e['seq']}" for e in events(zh, job) if e["type"] == "guard.denied"}
    wait_until(lambda: set(receiver.delivered()) >= want, timeout=60, message="all six delivered")
    assert set(receiver.delivered()) == want                     # nothing else, nothing lost
    assert zen("cancel", job).returncode == 0


def _closed_port() -> int:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def test_a_dead_receivers_events_land_in_the_dead_letter_folder_with_the_reason(zh: Path, sups, tmp_path: Path,
                                                                                receiver: Receiver) -> None:
    _configure(zh, f"http://127.0.0.1:{_closed_port()}/hook", webhook_retries="3", notification_events="[denied]")
    sups.start()
    job = dispatch_sim(zh, tmp_path, "unheard", [DENIED_STEPS[0], {"wait": True}], "--lane", "app")
    dead_dir = zh / "coord" / "outbox" / "dead"
    [item] = wait_until(lambda: [json.loads(p.read_text()) for p in dead_dir.glob("*.json")], timeout=30,
                        message="a dead letter")
    assert item["event"] == "denied" and item["attempts"] == 3 and item["payload"]["job"] == job
    assert "gave up after 3 attempts" in item["reason"] and "Connect" in item["reason"]
    # the dead letter is filed first, then the control line: wait for it too (it raced under load)
    [line] = wait_until(lambda: _control(zh, "webhook.dead"), timeout=10, message="the webhook.dead line")
    assert line["id"] == item["id"] and line["reason"] == item["reason"]
    # a receiver that refuses (404) is dead at once: retrying cannot help
    receiver.status = 404
    set_coordinator(zh, notification_webhook=receiver.url)
    second = dispatch_sim(zh, tmp_path, "refused", [DENIED_STEPS[0], {"wait": True}], "--lane", "app")
    wait_until(lambda: len(list(dead_dir.glob("*.json"))) == 2, timeout=30, message="the second dead letter")
    refused = [json.loads(p.read_text()) for p in dead_dir.glob("*.json")]
    mine = next(x for x in refused if x["payload"]["job"] == second)
    assert mine["attempts"] == 1 and mine["reason"].startswith("HTTP 404")
    for j in (job, second):
        zen("cancel", j)


def test_filters_and_the_kill_switch(zh: Path, sups, tmp_path: Path, receiver: Receiver) -> None:
    _configure(zh, receiver.url, notification_events="[kill-switch, conflict]")
    sups.start()
    job = dispatch_sim(zh, tmp_path, "filtered", [DENIED_STEPS[0], {"wait": True}], "--lane", "app")
    wait_until(lambda: any(e["type"] == "guard.denied" for e in events(zh, job)), timeout=60, message="a denial")
    assert zen("kill-switch", "--reason", "testing the webhook").returncode == 0
    got = wait_until(receiver.delivered, timeout=30, message="the kill switch notification")
    [payload] = got.values()
    assert payload["event"] == "kill-switch" and payload["engaged"] is True
    assert "testing the webhook" in payload["text"]
    assert zen("kill-switch", "--release").returncode == 0
    wait_until(lambda: len(receiver.delivered()) == 2, timeout=30, message="the release")
    assert {p["event"] for p in receiver.delivered().values()} == {"kill-switch"}   # the denial filtered out
    zen("cancel", job)


def test_signatures_follow_standard_webhooks() -> None:
    body = b'{"a":1}'
    sig = signature("whsec_" + "c2VjcmV0", "msg_1", 1700000000, body)   # base64 of "secret"
    assert sig == signature("secret", "msg_1", 1700000000, body)
    assert sig.startswith("v1,") and sig != signature("secret", "msg_2", 1700000000, body)


    now = int(time.time())
    headers = {"webhook-id": "msg_1", "webhook-timestamp": str(now),
               "webhook-signature": signature("secret", "msg_1", now, body)}
    assert verify("secret", headers, body) and not verify("secret", headers, body + b" ")
    old = {**headers, "webhook-timestamp": str(now - 3600),
           "webhook-signature": signature("secret", "msg_1", now - 3600, body)}
    assert not verify("secret", old, body)                         # a replay an hour later

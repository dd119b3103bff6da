"""Webhook delivery in-process against the loopback receiver (tests/coord/receiver.py): what one
attempt sends, how each answer is recorded (sent, retried with backoff, dead-lettered with the
reason), and the outbox's own guarantees (dedupe by id, order, crash leftovers, pruning)."""

from __future__ import annotations

import json
import os
import socket
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.coord.receiver import Receiver
from tests.helpers import wait_until
from zen.coord.outbox import Outbox
from zen.coord.settings import Settings
from zen.coord.webhook import Deliverer, request_for, signature, signing_key, verify
from zen.core.events import timestamp
from zen.core.ids import parse_iso
from zen.store.events import read_events_any
from zen.store.home import Home

SECRET = "whsec_" + "dGVzdC1rZXk="          # base64 of "test-key"


@pytest.fixture(scope="module")
def server() -> Iterator[Receiver]:
    r = Receiver()          # one for the module: closing one costs half a second
    yield r
    r.close()


@pytest.fixture
def receiver(server: Receiver) -> Receiver:
    with server.lock:
        server.requests.clear()
    server.status, server.fail_first, server.delay_s = 200, 0, 0.0
    return server


@pytest.fixture
def home(tmp_path: Path) -> Home:
    return Home(tmp_path / "zh")


@pytest.fixture
def client() -> Iterator[httpx.Client]:
    with httpx.Client(follow_redirects=False) as c:
        yield c


def settings(url: str, **extra: object) -> Settings:
    return Settings({"notification_webhook": url, "notification_secret": SECRET, "webhook_backoff": "10s",
                     "webhook_backoff_cap": "1m", "webhook_retries": 3, "webhook_timeout": "5s", **extra})


def control(home: Home, etype: str) -> list[dict]:
    path = home.control_log
    return [e for e in read_events_any(path) if e.get("type") == etype] if path.exists() else []


def enqueue(home: Home, item_id: str, event: str = "waiting", **payload: object) -> tuple[Path, dict]:
    box = Outbox(home)
    assert box.enqueue(item_id, event, {"id": item_id, "event": event, "text": f"zen: {item_id}", **payload})
    [(path, item)] = [(p, x) for p, x in box.pending() if x["id"] == item_id]
    return path, item


def closed_port() -> int:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


# -- one attempt ---------------------------------------------------------------------------------

def test_a_delivered_notification_is_signed_recorded_and_moved_to_sent(home: Home, receiver: Receiver,
                                                                       client: httpx.Client) -> None:
    path, item = enqueue(home, "j1:7", "denied", job="j1", text="zen: j1 was denied “rm -rf ~” ✋")
    Deliverer(home).deliver(client, settings(receiver.url), path, item)
    [req] = receiver.requests
    h = req["headers"]
    assert h["webhook-id"] == h["Idempotency-Key"] == "j1:7" and h["X-Zen-Event"] == "denied"
    assert h["Content-Type"] == "application/json" and h["User-Agent"].startswith("zen/")
    assert verify(SECRET, h, req["body"]) and not verify("whsec_b3RoZXI=", h, req["body"])
    body = req["body"].decode()
    assert "✋" in body and ", " not in body                 # UTF-8 as is, compact
    assert json.loads(body) == item["payload"]
    assert not path.exists() and Outbox(home).pending() == []
    [sent] = Outbox(home).sent_items()
    assert sent["id"] == "j1:7" and sent["status"] == 200 and sent["attempts"] == 1 and sent["sent_at"]
    [ev] = control(home, "webhook.sent")
    assert ev["id"] == "j1:7" and ev["event"] == "denied" and ev["status"] == 200 and ev["attempts"] == 1


def test_without_a_secret_nothing_is_signed(home: Home, receiver: Receiver, client: httpx.Client) -> None:
    path, item = enqueue(home, "j1:1")
    Deliverer(home).deliver(client, settings(receiver.url, notification_secret=""), path, item)
    [req] = receiver.requests
    assert "webhook-signature" not in req["headers"] and req["headers"]["webhook-id"] == "j1:1"


def test_a_5xx_is_retried_later_with_backoff_then_dead_lettered(home: Home, receiver: Receiver,
                                                                client: httpx.Client) -> None:
    receiver.status = 503
    s = settings(receiver.url)
    d = Deliverer(home)
    path, item = enqueue(home, "j1:2")
    before = time.time()
    d.deliver(client, s, path, item)
    [(path, item)] = Outbox(home).pending()
    assert item["attempts"] == 1 and item["last_error"] == "HTTP 503: try again later"
    wait = parse_iso(item["next_at"]).timestamp() - before
    assert 9.0 - 0.1 <= wait <= 11.0 + 0.5                    # 10 s, jittered by 10%
    assert Outbox(home).due() == []                           # not before its time
    d.deliver(client, s, path, item)
    [(path, item)] = Outbox(home).pending()
    assert item["attempts"] == 2
    assert 18.0 - 0.1 <= parse_iso(item["next_at"]).timestamp() - before <= 22.0 + 0.5   # doubled
    d.deliver(client, s, path, item)
    assert Outbox(home).pending() == []
    [dead] = Outbox(home).dead_items()
    assert dead["reason"] == "gave up after 3 attempts; the last: HTTP 503: try again later"
    assert dead["attempts"] == 3 and receiver.attempts("j1:2") == 3
    [ev] = control(home, "webhook.dead")
    assert ev["id"] == "j1:2" and ev["attempts"] == 3 and ev["reason"] == dead["reason"]
    assert control(home, "webhook.sent") == []


@pytest.mark.parametrize("status,permanent", [(400, True), (404, True), (410, True), (408, False),
                                              (425, False), (429, False), (500, False)])
def test_which_answers_are_worth_retrying(home: Home, receiver: Receiver, client: httpx.Client,
                                          status: int, permanent: bool) -> None:
    receiver.status = status
    path, item = enqueue(home, "j1:3")
    Deliverer(home).deliver(client, settings(receiver.url), path, item)
    dead = Outbox(home).dead_items()
    if permanent:
        assert [x["reason"] for x in dead] == [f"HTTP {status}: try again later"]
        assert Outbox(home).pending() == []
    else:
        assert dead == [] and Outbox(home).pending()[0][1]["attempts"] == 1


def test_a_receiver_that_is_not_there_is_retried_with_the_error_named(home: Home, client: httpx.Client) -> None:
    path, item = enqueue(home, "j1:4")
    Deliverer(home).deliver(client, settings(f"http://127.0.0.1:{closed_port()}/hook"), path, item)
    [(_, item)] = Outbox(home).pending()
    assert item["attempts"] == 1 and item["last_error"].startswith("ConnectError")


def test_a_notification_no_longer_due_is_superseded_not_sent(home: Home, receiver: Receiver,
                                                             client: httpx.Client) -> None:
    enqueue(home, "j1:5")
    enqueue(home, "j2:1")
    d = Deliverer(home)
    d.still_due = lambda item: item["id"] != "j1:5"
    assert d.deliver_due(client, settings(receiver.url)) == 1
    assert [r["headers"]["webhook-id"] for r in receiver.requests] == ["j2:1"]
    by_id = {x["id"]: x for x in Outbox(home).sent_items()}
    assert by_id["j1:5"]["superseded"] == "no longer due when its time came" and "status" not in by_id["j1:5"]
    assert by_id["j2:1"]["status"] == 200


def test_due_notifications_go_oldest_first(home: Home, receiver: Receiver, client: httpx.Client) -> None:
    box = Outbox(home)
    ids = [f"job-{i}:1" for i in range(6)]
    for i in ids:
        box.enqueue(i, "finished", {"id": i})
        time.sleep(0.002)       # created stamps are per millisecond; keep them apart
    assert Deliverer(home).deliver_due(client, settings(receiver.url)) == 6
    assert [r["headers"]["webhook-id"] for r in receiver.requests] == ids


def test_the_delivery_thread_sends_what_is_enqueued_and_stops(home: Home, receiver: Receiver) -> None:
    home.root.mkdir(parents=True, exist_ok=True)
    (home.root / "zen.yaml").write_text(f"zen: 1\ncoordinator:\n  notification_webhook: {receiver.url}\n"
                                        f"  notification_secret: {SECRET}\n")
    d = Deliverer(home)
    d.start()
    try:
        enqueue(home, "j9:1", "finished")
        d.poke()
        got = wait_until(receiver.delivered, timeout=10, message="the notification delivered")
        assert list(got) == ["j9:1"] and verify(SECRET, receiver.requests[0]["headers"], receiver.requests[0]["body"])
    finally:
        d.stop(timeout_s=10)
    assert not d.alive


# -- signing -------------------------------------------------------------------------------------

def test_the_signing_key_of_a_whsec_secret_is_its_decoded_bytes() -> None:
    assert signing_key("whsec_dGVzdC1rZXk=") == b"test-key"
    assert signing_key("plain secret ✓") == "plain secret ✓".encode()
    assert signing_key("whsec_not*base64!") == b"whsec_not*base64!"        # not base64: the text itself


def test_verify_takes_any_of_several_signatures_and_any_header_case() -> None:
    body = b'{"x":1}'
    now = int(time.time())
    good = signature("new", "m1", now, body)
    headers = {"Webhook-Id": "m1", "WEBHOOK-TIMESTAMP": str(now),
               "Webhook-Signature": f"{signature('old', 'm1', now, body)} {good}"}
    assert verify("new", headers, body) and verify("old", headers, body)
    assert not verify("other", headers, body)
    assert not verify("new", {**headers, "Webhook-Id": "m2"}, body)          # the id is signed
    assert not verify("new", {**headers, "WEBHOOK-TIMESTAMP": "soon"}, body)
    assert not verify("new", {"webhook-id": "m1", "webhook-signature": good}, body)   # no timestamp
    future = now + 3600
    ahead = {"webhook-id": "m1", "webhook-timestamp": str(future),
             "webhook-signature": signature("new", "m1", future, body)}
    assert not verify("new", ahead, body) and verify("new", ahead, body, tolerance_s=7200)


def test_request_for_signs_the_exact_bytes_it_sends() -> None:
    item = {"id": "j:1", "event": "failed", "payload": {"text": "zen: ünï", "n": [1, 2]}}
    body, headers = request_for(item, "s", now_s=1_700_000_000.9)
    assert body == '{"text":"zen: ünï","n":[1,2]}'.encode()
    assert headers["webhook-timestamp"] == "1700000000"
    assert headers["webhook-signature"] == signature("s", "j:1", 1_700_000_000, body)


# -- the outbox ----------------------------------------------------------------------------------

def test_an_id_is_enqueued_once_whether_pending_sent_or_dead(home: Home) -> None:
    box = Outbox(home)
    assert box.enqueue("a", "waiting", {"n": 1}) and not box.enqueue("a", "waiting", {"n": 2})
    [(path, item)] = box.pending()
    assert item["payload"] == {"n": 1}
    box.delivered(path, item, 204)
    assert not box.enqueue("a", "waiting", {"n": 3})
    box.enqueue("b", "failed", {})
    [(path, item)] = box.pending()
    box.failed(path, item, "HTTP 410", backoff_s=1, cap_s=1, retries=5, permanent=True)
    assert not box.enqueue("b", "failed", {}) and box.known("b") and not box.known("c")


def test_the_file_format_of_a_pending_notification(home: Home) -> None:
    box = Outbox(home)
    box.enqueue("j1:9", "conflict", {"text": "zen: conflict"}, not_before_s=60)
    [(path, item)] = box.pending()
    assert path.parent == home.outbox and path.name.endswith(".json") and "j1" not in path.name
    assert json.loads(path.read_text()) == item
    assert set(item) == {"v", "id", "event", "created", "attempts", "next_at", "last_error", "payload"}
    assert item["attempts"] == 0 and item["last_error"] is None and item["next_at"] > item["created"]
    assert box.due() == [] and 55 <= (box.next_due_in() or 0) <= 60
    assert box.due(now=timestamp(time.time() + 61)) == [(path, item)]


def test_a_crash_between_recording_sent_and_removing_pending_is_cleared(home: Home) -> None:
    box = Outbox(home)
    box.enqueue("a", "waiting", {})
    [(path, item)] = box.pending()
    copy = path.read_bytes()
    box.delivered(path, item, 200)
    path.write_bytes(copy)                                   # the pending copy survived the crash
    assert box.pending() == [] and not path.exists()
    assert [x["id"] for x in box.sent_items()] == ["a"]


def test_garbled_pending_files_are_skipped_not_fatal(home: Home) -> None:
    box = Outbox(home)
    box.enqueue("good", "waiting", {})
    (home.outbox / "torn.json").write_text('{"id": "x", ')
    (home.outbox / "noid.json").write_text('{"event": "waiting"}')
    (home.outbox / ".tmp.json").write_text(json.dumps({"id": "hidden"}))
    assert [x["id"] for _, x in box.pending()] == ["good"]


def test_next_due_in_says_when_to_wake(home: Home) -> None:
    box = Outbox(home)
    assert box.next_due_in() is None
    box.enqueue("later", "waiting", {}, not_before_s=30)
    assert 25 < (box.next_due_in() or 0) <= 30
    box.enqueue("now", "waiting", {})
    assert box.next_due_in() == 0.0


def test_backoff_doubles_up_to_the_cap_and_retry_after_is_honoured_within_it(home: Home) -> None:
    box = Outbox(home)
    box.enqueue("a", "waiting", {})
    delays = []
    for _ in range(6):
        [(path, item)] = box.pending()
        t0 = time.time()
        item = box.failed(path, item, "HTTP 503", backoff_s=1, cap_s=8, retries=100)
        delays.append(parse_iso(item["next_at"]).timestamp() - t0)
    for got, want in zip(delays, [1, 2, 4, 8, 8, 8], strict=True):
        assert want * 0.9 - 0.01 <= got <= want * 1.1 + 0.05, delays
    [(path, item)] = box.pending()
    t0 = time.time()
    item = box.failed(path, item, "HTTP 429", backoff_s=1, cap_s=8, retries=100, retry_after_s=5)
    # the 7th attempt's own delay is the cap; Retry-After under it does not shorten the wait
    assert 7.2 - 0.01 <= parse_iso(item["next_at"]).timestamp() - t0 <= 8.8 + 0.05
    box2 = Outbox(Home(home.root.parent / "other"))
    box2.enqueue("b", "waiting", {})
    [(path, item)] = box2.pending()
    t0 = time.time()
    item = box2.failed(path, item, "HTTP 429", backoff_s=1, cap_s=8, retries=100, retry_after_s=6)
    assert 6 - 0.01 <= parse_iso(item["next_at"]).timestamp() - t0 <= 6 + 0.05       # longer than backoff
    [(path, item)] = box2.pending()
    t0 = time.time()
    item = box2.failed(path, item, "HTTP 429", backoff_s=1, cap_s=8, retries=100, retry_after_s=3600)
    assert parse_iso(item["next_at"]).timestamp() - t0 <= 8 + 0.05                  # never past the cap


def test_prune_drops_old_sent_records_and_keeps_the_dead(home: Home) -> None:
    box = Outbox(home)
    for i in ("old", "new", "dead"):
        box.enqueue(i, "waiting", {})
    for path, item in box.pending():
        if item["id"] == "dead":
            box.failed(path, item, "HTTP 400", backoff_s=1, cap_s=1, retries=1, permanent=True)
        else:
            box.delivered(path, item, 200)
    old = next(p for p in box.sent.glob("*.json") if json.loads(p.read_text())["id"] == "old")
    week_ago = time.time() - 8 * 86400
    os.utime(old, (week_ago, week_ago))
    for p in box.dead.glob("*.json"):
        os.utime(p, (week_ago, week_ago))
    assert box.prune() == 1
    assert [x["id"] for x in box.sent_items()] == ["new"] and [x["id"] for x in box.dead_items()] == ["dead"]
    assert Outbox(Home(home.root.parent / "empty")).prune() == 0

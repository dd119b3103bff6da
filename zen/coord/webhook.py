"""Delivering the outbox: one POST per notification, signed, retried, dead-lettered.

    POST <coordinator.notification_webhook>
    Content-Type: application/json
    webhook-id: <idempotency id>          (also Idempotency-Key; the same on every retry)
    webhook-timestamp: <unix seconds of this attempt>
    webhook-signature: v1,<base64 HMAC-SHA256 of "<id>.<timestamp>.<body>">   (with a secret)
    X-Zen-Event: waiting | finished | failed | denied | conflict | kill-switch

The signature follows the Standard Webhooks scheme: the timestamp is signed with the body, so
a receiver can refuse replays (check it is recent) and forgeries (recompute it). The key is
`coordinator.notification_secret` as UTF-8, or for a `whsec_<base64>` secret the decoded bytes.
The body carries a Slack-compatible `text`.

2xx: sent. 408, 425, 429 and 5xx, timeouts and connection errors: retried with exponential
backoff (`webhook_backoff` doubling up to `webhook_backoff_cap`, Retry-After honoured) until
`webhook_retries` attempts, then dead-lettered with the reason; other 4xx are dead-lettered at
once (the receiver refuses it: retrying cannot help). Every outcome is a line in
logs/control.jsonl (`webhook.sent`, `webhook.dead`).
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import logging
import time
from collections.abc import Callable
from typing import Any

import httpx

from zen import __version__
from zen.adapters.worker import Worker
from zen.coord.outbox import Item, Outbox
from zen.coord.settings import Settings
from zen.core.events import EventType as E
from zen.errors import ZenError
from zen.store import events as ev_store
from zen.store.home import Home

log = logging.getLogger(__name__)

RETRYABLE = frozenset({408, 425, 429})
PRUNE_EVERY_S = 3600.0


def signing_key(secret: str) -> bytes:
    if secret.startswith("whsec_"):
        try:
            return base64.b64decode(secret[len("whsec_"):], validate=True)
        except ValueError:
            pass
    return secret.encode()


def signature(secret: str, item_id: str, ts: int, body: bytes) -> str:
    mac = hmac.new(signing_key(secret), f"{item_id}.{ts}.".encode() + body, hashlib.sha256).digest()
    return "v1," + base64.b64encode(mac).decode()


def verify(secret: str, headers: dict[str, str], body: bytes, tolerance_s: float = 300.0) -> bool:
    """What a receiver does (and the tests): the signature matches and the timestamp is recent."""
    h = {k.lower(): v for k, v in headers.items()}
    try:
        ts = int(h["webhook-timestamp"])
    except (KeyError, ValueError):
        return False
    if abs(time.time() - ts) > tolerance_s:
        return False
    expected = signature(secret, h.get("webhook-id", ""), ts, body)
    return any(hmac.compare_digest(expected, s.strip()) for s in h.get("webhook-signature", "").split(" "))


def request_for(item: Item, secret: str, now_s: float | None = None) -> tuple[bytes, dict[str, str]]:
    body = json.dumps(item["payload"], separators=(",", ":"), ensure_ascii=False).encode()
    ts = int(time.time() if now_s is None else now_s)
    headers = {"Content-Type": "application/json", "User-Agent": f"zen/{__version__}",
               "webhook-id": item["id"], "Idempotency-Key": item["id"], "webhook-timestamp": str(ts),
               "X-Zen-Event": str(item.get("event"))}
    if secret:
        headers["webhook-signature"] = signature(secret, item["id"], ts, body)
    return body, headers


def _retry_after(r: httpx.Response) -> float | None:
    try:
        return max(0.0, float(r.headers.get("retry-after", "")))
    except ValueError:
        return None


class Deliverer:
    """The delivery thread: sends what is due, oldest first, one at a time."""

    def __init__(self, home: Home) -> None:
        self.home = home
        self.outbox = Outbox(home)
        self._worker = Worker("zen-webhook", self._pass, log)
        self._client: httpx.Client | None = None
        self._pruned = 0.0
        # a last look before sending (e.g. an idle wait the job has left since): False drops it
        self.still_due: Callable[[Item], bool] | None = None

    def start(self) -> None:
        self._client = httpx.Client(follow_redirects=False)
        self._worker.start()

    def poke(self) -> None:
        self._worker.poke()

    def stop(self, timeout_s: float = 15.0) -> None:
        self._worker.stop(timeout_s)
        if self._client is not None and not self._worker.alive:
            self._client.close()

    @property
    def alive(self) -> bool:
        return self._worker.alive

    def _settings(self) -> Settings:
        try:
            return Settings.load(self.home)
        except ZenError:
            return Settings({})

    def _pass(self) -> float:
        """Send what is due; the wait until the next pass (the soonest retry, at most 5 s)."""
        assert self._client is not None
        settings = self._settings()
        wait = 5.0
        if settings.webhook:
            self.deliver_due(self._client, settings)
            soon = self.outbox.next_due_in()
            wait = 5.0 if soon is None else min(5.0, max(0.05, soon))
        if time.monotonic() - self._pruned > PRUNE_EVERY_S:
            self.outbox.prune()
            self._pruned = time.monotonic()
        return wait

    def deliver_due(self, client: httpx.Client, settings: Settings) -> int:
        n = 0
        for path, item in self.outbox.due():
            if self._worker.stopping:
                break
            if self.still_due is not None and not self.still_due(item):
                self.outbox.superseded(path, item, "no longer due when its time came")
                continue
            self.deliver(client, settings, path, item)
            n += 1
        return n

    def deliver(self, client: httpx.Client, settings: Settings, path: Any, item: Item) -> None:
        body, headers = request_for(item, settings.secret)
        try:
            r = client.post(settings.webhook, content=body, headers=headers, timeout=settings.webhook_timeout_s)
        except httpx.HTTPError as exc:
            self._failed(path, item, settings, f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__)
            return
        if 200 <= r.status_code < 300:
            self.outbox.delivered(path, item, r.status_code)
            ev_store.append_control(self.home, E.WEBHOOK_SENT, id=item["id"], event=str(item.get("event")),
                                    status=r.status_code, attempts=int(item.get("attempts", 0)) + 1)
            return
        permanent = 400 <= r.status_code < 500 and r.status_code not in RETRYABLE
        text = r.text.strip().splitlines()[0][:200] if r.text.strip() else ""
        self._failed(path, item, settings, f"HTTP {r.status_code}" + (f": {text}" if text else ""),
                     permanent=permanent, retry_after=_retry_after(r))

    def _failed(self, path: Any, item: Item, settings: Settings, error: str, *, permanent: bool = False,
                retry_after: float | None = None) -> None:
        rec = self.outbox.failed(path, item, error, backoff_s=settings.webhook_backoff_s,
                                 cap_s=settings.webhook_backoff_cap_s, retries=settings.webhook_retries,
                                 permanent=permanent, retry_after_s=retry_after)
        if "reason" in rec:
            log.warning("webhook %s dead-lettered: %s", item["id"], rec["reason"])
            ev_store.append_control(self.home, E.WEBHOOK_DEAD, id=item["id"], event=str(item.get("event")),
                                    reason=str(rec["reason"]), attempts=int(rec["attempts"]))
        else:
            log.info("webhook %s failed (%s); retry at %s", item["id"], error, rec["next_at"])

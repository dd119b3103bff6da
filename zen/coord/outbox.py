"""The durable outbox of webhook notifications (DESIGN section 10): `coord/outbox/`.

    coord/outbox/<hash of id>.json        waiting to be delivered (or retried at `next_at`)
    coord/outbox/sent/<hash of id>.json   the receiver took it (kept a week: dedupe and audit)
    coord/outbox/dead/<hash of id>.json   given up on, with `reason`: zen never drops one silently

Each file: {"v": 1, "id", "event", "created", "attempts", "next_at", "last_error", "payload"}.
`id` is the idempotency id (the same for every attempt, and for the same occurrence enqueued
twice after a crash): a file is named by its hash, so an id already pending, sent or dead is
never enqueued again. Files are published by rename, so a `kill -9` at any point leaves each
notification pending (sent again: at-least-once, the receiver dedupes on `webhook-id`), sent or
dead, never lost and never half-written.
"""

from __future__ import annotations

import contextlib
import json
import os
import random
import time
from pathlib import Path
from typing import Any

from zen.core.events import timestamp
from zen.core.ids import parse_iso
from zen.store import layout
from zen.store.atomic import atomic_write, create_exclusive
from zen.store.home import Home

try:
    from _blake2 import blake2b
except ImportError:  # a Python built without it
    from hashlib import blake2b

VERSION = 1
SENT_KEEP_S = 7 * 86400.0

Item = dict[str, Any]


def _name(item_id: str) -> str:
    return blake2b(item_id.encode(), digest_size=12).hexdigest() + ".json"


class Outbox:
    def __init__(self, home: Home) -> None:
        self.dir = home.outbox
        self.sent = self.dir / layout.OUTBOX_SENT
        self.dead = self.dir / layout.OUTBOX_DEAD

    def _dirs(self) -> None:
        for d in (self.dir, self.sent, self.dead):
            d.mkdir(parents=True, exist_ok=True)

    def known(self, item_id: str) -> bool:
        n = _name(item_id)
        return any((d / n).exists() for d in (self.dir, self.sent, self.dead))

    def enqueue(self, item_id: str, event: str, payload: dict[str, Any], not_before_s: float = 0.0) -> bool:
        """Add a notification unless its id is already pending, sent or dead. True when added."""
        self._dirs()
        if self.known(item_id):
            return False
        now = time.time()
        item: Item = {"v": VERSION, "id": item_id, "event": event, "created": timestamp(now), "attempts": 0,
                      "next_at": timestamp(now + max(0.0, not_before_s)), "last_error": None,
                      "payload": payload}
        return create_exclusive(self.dir / _name(item_id), json.dumps(item, indent=2) + "\n")

    def pending(self) -> list[tuple[Path, Item]]:
        """Waiting items, oldest first (a delivered one whose pending copy survived a crash is
        cleared here)."""
        try:
            names = [n for n in os.listdir(self.dir) if n.endswith(".json") and not n.startswith(".")]
        except FileNotFoundError:
            return []
        out = []
        for n in names:
            path = self.dir / n
            if (self.sent / n).exists() or (self.dead / n).exists():
                with contextlib.suppress(FileNotFoundError):
                    path.unlink()
                continue
            try:
                item = json.loads(path.read_text())
            except (OSError, ValueError):
                continue
            if isinstance(item, dict) and isinstance(item.get("id"), str):
                out.append((path, item))
        return sorted(out, key=lambda p: (str(p[1].get("created")), p[1]["id"]))

    def due(self, now: str | None = None) -> list[tuple[Path, Item]]:
        now = now or timestamp()
        return [(p, x) for p, x in self.pending() if str(x.get("next_at") or "") <= now]

    def next_due_in(self) -> float | None:
        """Seconds until the earliest pending item is due (0: now), or None when none waits."""
        items = self.pending()
        if not items:
            return None
        soonest = min(str(x.get("next_at") or "") for _, x in items)
        try:
            return max(0.0, parse_iso(soonest).timestamp() - time.time())
        except ValueError:
            return 0.0

    def delivered(self, path: Path, item: Item, status: int) -> None:
        item = {**item, "attempts": int(item.get("attempts", 0)) + 1, "status": status, "sent_at": timestamp()}
        atomic_write(self.sent / path.name, json.dumps(item, indent=2) + "\n")
        with contextlib.suppress(FileNotFoundError):
            path.unlink()

    def superseded(self, path: Path, item: Item, why: str) -> None:
        """Not sent, on purpose (recorded in sent/ with `superseded`): e.g. an idle wait that the
        job left before it had lasted long enough to announce."""
        item = {**item, "superseded": why, "sent_at": timestamp()}
        atomic_write(self.sent / path.name, json.dumps(item, indent=2) + "\n")
        with contextlib.suppress(FileNotFoundError):
            path.unlink()

    def failed(self, path: Path, item: Item, error: str, *, backoff_s: float, cap_s: float,
               retries: int, permanent: bool = False, retry_after_s: float | None = None) -> Item:
        """Record a failed attempt: retry later with exponential backoff, or move it to dead/ with
        the reason when it is permanent or out of attempts. Returns the item as recorded."""
        attempts = int(item.get("attempts", 0)) + 1
        item = {**item, "attempts": attempts, "last_error": error}
        if permanent or attempts >= retries:
            why = error if permanent else f"gave up after {attempts} attempts; the last: {error}"
            item = {**item, "reason": why, "dead_at": timestamp()}
            atomic_write(self.dead / path.name, json.dumps(item, indent=2) + "\n")
            with contextlib.suppress(FileNotFoundError):
                path.unlink()
            return item
        delay = min(cap_s, backoff_s * (2 ** (attempts - 1))) * random.uniform(0.9, 1.1)
        if retry_after_s is not None:
            delay = min(max(delay, retry_after_s), max(cap_s, backoff_s))
        item["next_at"] = timestamp(time.time() + delay)
        atomic_write(path, json.dumps(item, indent=2) + "\n")
        return item

    def dead_items(self) -> list[Item]:
        return _read_all(self.dead)

    def sent_items(self) -> list[Item]:
        return _read_all(self.sent)

    def prune(self, keep_s: float = SENT_KEEP_S) -> int:
        """Remove sent records older than `keep_s` (dead ones stay until a human removes them)."""
        n = 0
        cutoff = time.time() - keep_s
        try:
            entries = list(os.scandir(self.sent))
        except FileNotFoundError:
            return 0
        for e in entries:
            if e.name.endswith(".json") and e.stat().st_mtime < cutoff:
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(e.path)
                    n += 1
        return n


def _read_all(d: Path) -> list[Item]:
    out = []
    for p in sorted(d.glob("*.json")) if d.is_dir() else []:
        try:
            out.append(json.loads(p.read_text()))
        except (OSError, ValueError):
            continue
    return sorted(out, key=lambda x: str(x.get("created")))

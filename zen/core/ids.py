"""Job ids: sortable by creation time, carrying a slug of the task name (DESIGN section 2)."""

from __future__ import annotations

import re
import secrets
from datetime import UTC, datetime

from zen.core.events import stamp

_SLUG_BAD = re.compile(r"[^a-z0-9]+")
ID_RE = re.compile(r"^\d{8}T\d{6}Z-[a-z0-9-]+-[0-9a-f]{4}$")
NAME_RE = re.compile(r"^[a-z0-9][a-z0-9-]{0,47}$")


def valid_id(text: object) -> bool:
    """A job id of zen's grammar (time stamp, slug, four hex digits): nothing else may name a
    path under the home (no separator, no dot, no traversal)."""
    return isinstance(text, str) and ID_RE.fullmatch(text) is not None


def slugify(text: str, max_len: int = 32) -> str:
    slug = _SLUG_BAD.sub("-", text.lower()).strip("-")
    if len(slug) > max_len:
        slug = slug[:max_len].rstrip("-")
    return slug or "task"


def name_from_prompt(prompt: str, words: int = 4) -> str:
    """A short name from the first words of a prompt: 'Fix the login bug now' -> 'fix-the-login-bug'."""
    return slugify(" ".join(prompt.split()[:words]))


def make_job_id(name: str, now: datetime | None = None, rand: str | None = None) -> str:
    now = now or datetime.now(UTC)
    stamp = now.astimezone(UTC).strftime("%Y%m%dT%H%M%SZ")
    return f"{stamp}-{slugify(name)}-{rand or secrets.token_hex(2)}"


def utcnow() -> datetime:
    return datetime.now(UTC)


def iso(ts: datetime) -> str:
    """ISO 8601 UTC with milliseconds and a Z, as every file of zen writes time (events.stamp)."""
    utc = ts.astimezone(UTC)
    return stamp(utc.timetuple(), utc.microsecond // 1000)


def parse_iso(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


def epoch_of(ts: str | None) -> float | None:
    """A timestamp of zen's (or an agent's ISO time) as seconds since the epoch; None when absent
    or unreadable."""
    if not ts:
        return None
    try:
        return parse_iso(ts).timestamp()
    except ValueError:
        return None

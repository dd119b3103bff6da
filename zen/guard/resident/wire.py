"""The resident guardian's wire format (zen/guard/resident/server.py and the hook's thin client).

One request and one answer per connection on `<home>/control/guard.sock`, both plain bytes so
that the client needs no json (the hook's start-up is what the agent waits for):

    request   MAGIC  field(argv NUL-joined) field(cwd) field(environ NUL-joined k=v)
                     field(the client's zen package folder) field(the hook's stdin, as read)
    answer    MAGIC  field(code) field(stdout) field(reason)

where field(b) = b"<len>:" + b. The code is "0" (allow: write stdout, exit 0), "2" (block with
the reason) or "-" (declined: this server is not the one to ask, e.g. it runs other code; the
client decides in-process). Anything else is no answer, and the client decides in-process.

Lean on purpose: the hook imports it on every agent action (os only, which Python has loaded).
"""

from __future__ import annotations

import os

MAGIC = b"zen-guard/1\n"
ALLOW, BLOCK, DECLINED = b"0", b"2", b"-"
MAX_FIELD = 8 * 1024 * 1024


def field(data: bytes) -> bytes:
    return b"%d:" % len(data) + data


def pack(*fields: bytes) -> bytes:
    return MAGIC + b"".join(field(f) for f in fields)


def unpack(data: bytes, count: int) -> list[bytes] | None:
    """The `count` fields of a message, or None when it is not one (wrong magic, short, too long)."""
    if not data.startswith(MAGIC):
        return None
    out: list[bytes] = []
    pos = len(MAGIC)
    for _ in range(count):
        colon = data.find(b":", pos, pos + 12)
        if colon < 0 or not data[pos:colon].isdigit():
            return None
        size = int(data[pos:colon])
        start = colon + 1
        if size > MAX_FIELD or start + size > len(data):
            return None
        out.append(data[start:start + size])
        pos = start + size
    return out if pos == len(data) else None


def env_bytes(env: dict[bytes, bytes]) -> bytes:
    return b"\0".join(k + b"=" + v for k, v in env.items() if b"\0" not in k + v)


def env_of(data: bytes) -> dict[str, str]:
    out: dict[str, str] = {}
    for item in data.split(b"\0") if data else []:
        k, eq, v = item.partition(b"=")
        if eq and k:
            out[os.fsdecode(k)] = os.fsdecode(v)
    return out

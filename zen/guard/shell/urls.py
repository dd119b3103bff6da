"""Hosts in URLs and bare host names, for the network rules (pure helpers).

Lean on purpose: imported by the hook (stdlib + zen.guard.shell.words).
"""

from __future__ import annotations

import re

from zen.guard.shell.words import UNK

URL_IN_TEXT = re.compile(r"(?i)\b(?:https?|wss?|ftp)://[^\s'\"<>`]+")


def looks_host(v: str) -> bool:
    return bool(re.match(r"^[A-Za-z0-9-]+(\.[A-Za-z0-9-]+)+(:\d+)?(/|$)", v)) and "/" not in v.split(".", maxsplit=1)[0]


def url_host(url: str) -> tuple[str | None, int | None, str | None]:
    u = url.strip()
    if "://" not in u:
        u = "http://" + u
    scheme, _, rest = u.partition("://")
    hostpart = re.split(r"[/?#]", rest, maxsplit=1)[0]
    if "@" in hostpart:
        hostpart = hostpart.rsplit("@", 1)[1]
    port = None
    if hostpart.startswith("["):
        host, _, after = hostpart.partition("]")
        host += "]"
        if after.startswith(":") and after[1:].isdigit():
            port = int(after[1:])
    else:
        host, _, p = hostpart.partition(":")
        if p.isdigit():
            port = int(p)
    host = host.strip().lower().rstrip(".")
    if host.startswith("{") or host == "":
        return (UNK if UNK in rest.split("/")[0] or not host else None), None, None
    return host, port, scheme.lower()


def host_of(text: str) -> str | None:
    if "://" not in text:
        return None
    h, _, _ = url_host(text)
    return h


def is_loopback(host: str) -> bool:
    """A name or address of this machine itself (127/8, ::1, localhost, 0.0.0.0)."""
    h = host.strip("[]").lower()
    return h in ("localhost", "::1", "0.0.0.0", "0", "::") or h.startswith("127.") or h.endswith(".localhost") \
        or h.startswith("::ffff:127.")

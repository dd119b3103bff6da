"""The kill switch of a home whose supervisor is on another machine (a Ray worker's home, DESIGN 14).

A worker's home holds `control/remote-switch.json` ({"url": ..., "token": ...}, written by
`zen remote-turn`); its guardian asks the supervisor's endpoint on every call:

    GET <url>   Authorization: Bearer <token>   ->   200 {"v": 1, "engaged": false}

Anything but a clear "not engaged" (no answer within the timeout, a refused connection, another
status, a body it cannot read) counts as engaged: fail closed, every domain observe-only.

Lean: runs inside the guard hook (stdlib socket and json only; no http.client, no urllib).
"""

from __future__ import annotations

import json
import os
import socket

from zen.store import layout

TIMEOUT_S = 2.0
MAX_ANSWER = 65536


def switch_file(home: str) -> str:
    return os.path.join(home, layout.CONTROL, layout.REMOTE_SWITCH)


def _split(url: str) -> tuple[str, int, str]:
    if not url.startswith("http://"):
        raise ValueError("only http:// endpoints")
    rest = url[len("http://"):]
    hostport, _, path = rest.partition("/")
    host, sep, port = hostport.rpartition(":")
    if not sep:
        host, port = hostport, "80"
    return host.strip("[]"), int(port), "/" + path


def _get(url: str, token: str, timeout_s: float) -> tuple[int, bytes]:
    host, port, path = _split(url)
    request = (f"GET {path} HTTP/1.0\r\nHost: {host}:{port}\r\nAuthorization: Bearer {token}\r\n"
               "Connection: close\r\n\r\n").encode()
    with socket.create_connection((host, port), timeout=timeout_s) as s:
        s.sendall(request)
        data = b""
        while len(data) <= MAX_ANSWER:
            chunk = s.recv(8192)
            if not chunk:
                break
            data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    status = int(head.split(b" ", 2)[1])
    return status, body


def engaged(home: str, timeout_s: float = TIMEOUT_S) -> bool:
    """True unless the supervisor clearly says its kill switch is released."""
    try:
        with open(switch_file(home), "rb") as f:
            conf = json.loads(f.read())
        status, body = _get(str(conf["url"]), str(conf.get("token") or ""), timeout_s)
        if status != 200:
            return True
        answer = json.loads(body)
        return answer.get("engaged") is not False
    except Exception:  # unreachable, garbled, misconfigured: the switch may be on
        return True


__all__ = ["engaged", "switch_file"]

"""Who may use the API (DESIGN section 11): the token, the login ticket, the cookie, Host and Origin.

- `control/api-token` (mode 0600) holds a random token. API clients send it as
  `Authorization: Bearer <token>`. It is never put in any environment, so no agent inherits it.
- `zen serve --url` prints `/agent?token=<ticket>`: a one-time login ticket (a nonce, an expiry
  ten minutes out, and an HMAC of both under the token), so the URL a human opens is worth one
  login and nothing once used, after a restart of the server too: the used nonces are kept in
  control/logins.json until they would have expired anyway. The server answers with an HttpOnly
  SameSite=Strict cookie and a 303 to the same URL without the ticket, so it leaves the address
  bar and the history.
- The cookie is a random id, one per login, that expires server-side (zen.yaml
  `server.session_ttl`, 12 hours by default). control/logins.json (0600, replaced atomically,
  under control/logins.lock) keeps only each id's sha256 and expiry, and a fingerprint of the
  token: every session dies when the token is replaced, at a logout (POST /agent/logout) of
  that browser, and at `zen serve --logout-all`.
- Host must be the address the server was started on (DNS rebinding); an Origin, when sent, must
  be that too, and a cookie-authenticated write must come from the page itself. No CORS headers
  are ever sent, so no other site can read an answer.

Standard library only: `zen serve --url` and the guard helpers import it without FastAPI.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import secrets
import stat
import threading
import time
from pathlib import Path
from typing import Any

from zen.errors import ZenError
from zen.server import tls as tls_names
from zen.store.atomic import atomic_write, create_exclusive, flocked
from zen.store.layout import Home

COOKIE = "zen_session"
TICKET_TTL_S = 600
SESSION_TTL_S = 12 * 3600
_STORE_LABEL = b"zen dashboard logins v2"


def ensure_token(home: Home) -> str:
    """The home's API token, created (0600, published by link so two servers agree) if missing.
    A token file others can read is narrowed to 0600 first."""
    path = home.api_token
    path.parent.mkdir(parents=True, exist_ok=True)
    if not path.exists():
        create_exclusive(path, secrets.token_urlsafe(32) + "\n", mode=0o600)
    return read_token(home)


def read_token(home: Home) -> str:
    path = home.api_token
    try:
        st = path.stat()
        if stat.S_IMODE(st.st_mode) & 0o077:
            os.chmod(path, 0o600)
        token = path.read_text().strip()
    except FileNotFoundError:
        raise ZenError(f"{path} does not exist yet (zen serve creates it)") from None
    except OSError as exc:
        raise ZenError(f"cannot read {path}: {exc.strerror}") from None
    if len(token) < 20:
        raise ZenError(f"{path} holds no usable token (delete it and zen serve makes a new one)")
    return token


def _ticket_mac(token: str, nonce: str, expires: int) -> str:
    return hmac.new(token.encode(), f"login:{nonce}:{expires}".encode(), hashlib.sha256).hexdigest()[:32]


def make_ticket(token: str, now: float | None = None) -> str:
    """A one-time login ticket for the dashboard URL."""
    expires = int((time.time() if now is None else now) + TICKET_TTL_S)
    nonce = secrets.token_urlsafe(12)
    return f"{nonce}.{expires}.{_ticket_mac(token, nonce, expires)}"


def _parse_ticket(token: str, ticket: str, t: float) -> tuple[str, int] | None:
    """(nonce, expiry) of a well-made, unexpired ticket of this token; None otherwise."""
    parts = ticket.split(".")
    if len(parts) != 3 or not parts[1].isdigit():
        return None
    nonce, exp_text, mac = parts
    expires = int(exp_text)
    if expires < t or expires > t + TICKET_TTL_S + 60:
        return None
    if not hmac.compare_digest(mac, _ticket_mac(token, nonce, expires)):
        return None
    return nonce, expires


def _sid_key(session_id: str) -> str:
    return hashlib.sha256(session_id.encode()).hexdigest()


def _fingerprint(token: str) -> str:
    return hmac.new(token.encode(), _STORE_LABEL, hashlib.sha256).hexdigest()


def cookie_id(cookie_header: str | None) -> str | None:
    """The session id a Cookie header carries, if any."""
    for part in (cookie_header or "").split(";"):
        name, _, value = part.strip().partition("=")
        if name == COOKIE and value:
            return value
    return None


class Logins:
    """The dashboard's login sessions and used tickets, kept in control/logins.json (module doc).
    Every process reads the file anew when it changed, so `zen serve --logout-all` run in a
    shell logs every browser out of the running server at its next request."""

    def __init__(self, home: Home, ttl_s: float = SESSION_TTL_S) -> None:
        self.home = home
        self.ttl_s = ttl_s
        self._lock = threading.Lock()
        self._cache: tuple[tuple[int, int, int] | None, dict[str, Any]] | None = None

    # -- the file ---------------------------------------------------------------------------------
    def _read(self, token: str) -> dict[str, Any]:
        path = self.home.logins
        try:
            st = path.stat()
            key: tuple[int, int, int] | None = (st.st_ino, st.st_mtime_ns, st.st_size)
        except OSError:
            key = None
        with self._lock:
            if self._cache is not None and key is not None and self._cache[0] == key:
                data = self._cache[1]
            else:
                data = _load(path) if key is not None else _empty()
                self._cache = (key, data)
        if data.get("token") != _fingerprint(token):
            return _empty()  # the token was replaced: every session with it
        return data

    def _change(self, token: str, fn: Any) -> Any:
        """Run fn(data) under the file's lock on its latest content; the file replaced with the result."""
        self.home.control.mkdir(parents=True, exist_ok=True)
        with flocked(self.home.logins_lock):
            data = _load(self.home.logins)
            if data.get("token") != _fingerprint(token):
                data = {**_empty(), "token": _fingerprint(token)}
            now = time.time()
            data["sessions"] = {k: v for k, v in data["sessions"].items() if v > now}
            data["used"] = {k: v for k, v in data["used"].items() if v > now}
            result = fn(data)
            atomic_write(self.home.logins, json.dumps(data) + "\n", mode=0o600)
        with self._lock:
            self._cache = None
        return result

    # -- logging in and out -----------------------------------------------------------------------
    def redeem(self, token: str, ticket: str, now: float | None = None) -> str | None:
        """A new session's id for a good, unused ticket (the ticket is used up); None otherwise."""
        t = time.time() if now is None else now
        parsed = _parse_ticket(token, ticket, t)
        if parsed is None:
            return None
        nonce, expires = parsed
        session_id = secrets.token_urlsafe(32)

        def use(data: dict[str, Any]) -> bool:
            if nonce in data["used"]:
                return False
            data["used"][nonce] = expires
            data["sessions"][_sid_key(session_id)] = t + self.ttl_s
            return True

        return session_id if self._change(token, use) else None

    def valid(self, token: str, cookie_header: str | None, now: float | None = None) -> bool:
        session_id = cookie_id(cookie_header)
        if session_id is None:
            return False
        expires = self._read(token)["sessions"].get(_sid_key(session_id))
        return isinstance(expires, int | float) and expires > (time.time() if now is None else now)

    def logout(self, token: str, cookie_header: str | None) -> bool:
        session_id = cookie_id(cookie_header)
        if session_id is None:
            return False
        return bool(self._change(token, lambda data: data["sessions"].pop(_sid_key(session_id), None)))

    def logout_all(self, token: str) -> int:
        """End every session (zen serve --logout-all); how many there were."""
        def clear(data: dict[str, Any]) -> int:
            n = len(data["sessions"])
            data["sessions"] = {}
            return n

        return int(self._change(token, clear))


def _empty() -> dict[str, Any]:
    return {"token": None, "sessions": {}, "used": {}}


def _load(path: Path) -> dict[str, Any]:
    """logins.json, or no sessions when it is missing or unreadable (fail closed)."""
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return _empty()
    if not isinstance(data, dict):
        return _empty()
    out = _empty()
    out["token"] = data.get("token") if isinstance(data.get("token"), str) else None
    for field in ("sessions", "used"):
        items = data.get(field)
        if isinstance(items, dict):
            out[field] = {str(k): v for k, v in items.items() if isinstance(v, int | float)}
    return out


def login_url(host: str, port: int, token: str, *, tls: bool = False) -> str:
    """The one-time login link; over TLS on every address, the one other machines reach (a phone)."""
    shown = "127.0.0.1" if host in ("0.0.0.0", "::", "") else (f"[{host}]" if ":" in host else host)
    if tls and host in ("0.0.0.0", "::", ""):
        shown = tls_names.primary_address() or shown
    return f"{'https' if tls else 'http'}://{shown}:{port}/agent?token={make_ticket(token)}"


def allowed_hosts(host: str, port: int, *, tls: bool = False) -> frozenset[str]:
    """Host header values the server answers to: loopback names, and the address it is bound to
    (over TLS on every address: this machine's names and addresses too)."""
    names = {"127.0.0.1", "localhost", "[::1]"}
    if host not in ("0.0.0.0", "::", ""):
        names.add(f"[{host}]" if ":" in host else host)
    elif tls:
        names |= tls_names.local_names(host)
    default = 443 if tls else 80
    return frozenset({f"{n}:{port}" for n in names} | ({n for n in names} if port == default else set()))


def bearer_ok(header: str | None, token: str) -> bool:
    if not header:
        return False
    scheme, _, value = header.partition(" ")
    return scheme.lower() == "bearer" and hmac.compare_digest(value.strip(), token)


def token_path(home: Home) -> Path:
    return home.api_token


__all__ = ["COOKIE", "SESSION_TTL_S", "Logins", "allowed_hosts", "bearer_ok", "cookie_id", "ensure_token",
           "login_url", "make_ticket", "read_token"]

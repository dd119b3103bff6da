"""Who may use the API (DESIGN section 11): the token, the login ticket, the cookie, Host and Origin.

- `control/api-token` (mode 0600) holds a random token. API clients send it as
  `Authorization: Bearer <token>`. It is never put in any environment, so no agent inherits it.
- `zen serve --url` prints `/agent?token=<ticket>`: a one-time login ticket (a nonce, an expiry
  ten minutes out, and an HMAC of both under the token), so the URL a human opens is worth one
  login and nothing once used. The server answers with an HttpOnly SameSite=Strict cookie and a
  303 to the same URL without the ticket, so it leaves the address bar and the history.
- The cookie holds an HMAC of the token (not the token), so it dies when the token is replaced.
- Host must be the address the server was started on (DNS rebinding); an Origin, when sent, must
  be that too, and a cookie-authenticated write must come from the page itself. No CORS headers
  are ever sent, so no other site can read an answer.

Standard library only: `zen serve --url` and the guard helpers import it without FastAPI.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import secrets
import stat
import threading
import time
from pathlib import Path

from zen.errors import ZenError
from zen.store.atomic import create_exclusive
from zen.store.layout import Home

COOKIE = "zen_session"
TICKET_TTL_S = 600
_COOKIE_LABEL = b"zen dashboard session v1"


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


def cookie_value(token: str) -> str:
    return hmac.new(token.encode(), _COOKIE_LABEL, hashlib.sha256).hexdigest()


def _ticket_mac(token: str, nonce: str, expires: int) -> str:
    return hmac.new(token.encode(), f"login:{nonce}:{expires}".encode(), hashlib.sha256).hexdigest()[:32]


def make_ticket(token: str, now: float | None = None) -> str:
    """A one-time login ticket for the dashboard URL."""
    expires = int((time.time() if now is None else now) + TICKET_TTL_S)
    nonce = secrets.token_urlsafe(12)
    return f"{nonce}.{expires}.{_ticket_mac(token, nonce, expires)}"


class Tickets:
    """Checks login tickets and remembers the used ones until they would have expired anyway."""

    def __init__(self) -> None:
        self._used: dict[str, int] = {}
        self._lock = threading.Lock()

    def redeem(self, token: str, ticket: str, now: float | None = None) -> bool:
        t = time.time() if now is None else now
        parts = ticket.split(".")
        if len(parts) != 3 or not parts[1].isdigit():
            return False
        nonce, exp_text, mac = parts
        expires = int(exp_text)
        if expires < t or expires > t + TICKET_TTL_S + 60:
            return False
        if not hmac.compare_digest(mac, _ticket_mac(token, nonce, expires)):
            return False
        with self._lock:
            for n, e in list(self._used.items()):
                if e < t:
                    del self._used[n]
            if nonce in self._used:
                return False
            self._used[nonce] = expires
        return True


def login_url(host: str, port: int, token: str) -> str:
    shown = "127.0.0.1" if host in ("0.0.0.0", "") else (f"[{host}]" if ":" in host else host)
    return f"http://{shown}:{port}/agent?token={make_ticket(token)}"


def allowed_hosts(host: str, port: int) -> frozenset[str]:
    """Host header values the server answers to: loopback names, and the address it is bound to."""
    names = {"127.0.0.1", "localhost", "[::1]"}
    if host not in ("0.0.0.0", "::", ""):
        names.add(f"[{host}]" if ":" in host else host)
    return frozenset({f"{n}:{port}" for n in names} | ({n for n in names} if port == 80 else set()))


def bearer_ok(header: str | None, token: str) -> bool:
    if not header:
        return False
    scheme, _, value = header.partition(" ")
    return scheme.lower() == "bearer" and hmac.compare_digest(value.strip(), token)


def cookie_ok(cookie_header: str | None, token: str) -> bool:
    if not cookie_header:
        return False
    want = cookie_value(token)
    for part in cookie_header.split(";"):
        name, _, value = part.strip().partition("=")
        if name == COOKIE and hmac.compare_digest(value, want):
            return True
    return False


def token_path(home: Home) -> Path:
    return home.api_token


__all__ = ["COOKIE", "Tickets", "allowed_hosts", "bearer_ok", "cookie_ok", "cookie_value", "ensure_token",
           "login_url", "make_ticket", "read_token"]

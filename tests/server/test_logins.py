"""Dashboard logins (security finding M15): a ticket is worth one login even across a server
restart, each login is its own random session that expires server-side, a browser can log out,
and `zen serve --logout-all` ends every session; the bearer token works as before."""

from __future__ import annotations

import hashlib
import hmac
import json
import signal
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest

from tests.helpers import wait_until
from tests.server.served import Served
from zen.server import auth

TTL_S = 2


@contextmanager
def server(root: Path, ttl: str | None = None) -> Iterator[Served]:
    s = Served(root, supervise=False)
    s.zen_ok("init", str(s.home))
    if ttl is not None:
        with (s.home / "zen.yaml").open("a") as f:
            f.write(f"\nserver:\n  session_ttl: {ttl}\n")
    s.start_server()
    try:
        yield s
    finally:
        s.stop()


@pytest.fixture(scope="module")
def srv(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    with server(tmp_path_factory.mktemp("logins")) as s:
        yield s


def login(s: Served, url: str | None = None) -> dict[str, str]:
    """A browser's login with a link as `zen serve --url` prints it."""
    url = url or auth.login_url("127.0.0.1", s.port, s.token)
    with httpx.Client(timeout=10) as c:
        r = c.get(url, follow_redirects=False)
    assert r.status_code == 303, r.text
    return {"Cookie": r.headers["set-cookie"].split(";")[0]}


def status(s: Served, jar: dict[str, str]) -> int:
    with httpx.Client(timeout=10) as c:
        return c.get(f"{s.base}/api/v1/agent/status", headers=jar).status_code


def restart(s: Served) -> None:
    assert s.server is not None
    s.server.send_signal(signal.SIGTERM)
    s.server.wait(timeout=20)
    s.start_server()


def test_a_used_ticket_is_refused_after_a_restart_and_a_session_survives_it(srv: Served) -> None:
    url = srv.zen_ok("serve", "--url")
    jar = login(srv, url)
    restart(srv)
    url = url.replace(url.split("/agent")[0], srv.base)  # the new server's port
    with httpx.Client(timeout=10) as c:
        again = c.get(url, follow_redirects=False)
    assert again.status_code == 401 and "already used" in again.text
    assert status(srv, jar) == 200


def test_each_login_is_its_own_session_and_none_is_on_disk(srv: Served) -> None:
    a, b = login(srv), login(srv)
    assert a != b and status(srv, a) == 200 and status(srv, b) == 200
    store = srv.home / "control" / "logins.json"
    assert stat.S_IMODE(store.stat().st_mode) == 0o600
    text = store.read_text()
    for jar in (a, b):
        assert jar["Cookie"].split("=", 1)[1] not in text
    assert json.loads(text)["sessions"]


def test_a_session_expires_on_the_server(tmp_path: Path) -> None:
    with server(tmp_path / "short", ttl=f"{TTL_S}s") as s:
        jar = login(s)
        assert status(s, jar) == 200
        wait_until(lambda: status(s, jar) == 401, timeout=TTL_S + 10, message="the session to expire")
        assert status(s, s.headers()) == 200  # the bearer token works as ever


def test_a_browser_logs_out(srv: Served) -> None:
    jar, other = login(srv), login(srv)
    with httpx.Client(timeout=10) as c:
        r = c.post(f"{srv.base}/agent/logout", headers={**jar, "Origin": srv.base})
    assert r.status_code == 200 and r.json() == {"logged_out": True}
    assert "Max-Age=0" in r.headers["set-cookie"]
    assert status(srv, jar) == 401
    assert status(srv, other) == 200  # only that browser


def test_logout_all_logs_every_browser_out(srv: Served) -> None:
    a, b = login(srv), login(srv)
    assert status(srv, a) == 200 and status(srv, b) == 200
    out = srv.zen_ok("serve", "--logout-all")
    assert "logged out" in out
    assert status(srv, a) == 401 and status(srv, b) == 401
    assert status(srv, login(srv)) == 200  # a new link logs in again


def test_a_cookie_made_from_the_token_opens_nothing(srv: Served) -> None:
    # what the cookie was: the same HMAC of the token for every login, forever
    old = hmac.new(srv.token.encode(), b"zen dashboard session v1", hashlib.sha256).hexdigest()
    assert status(srv, {"Cookie": f"zen_session={old}"}) == 401

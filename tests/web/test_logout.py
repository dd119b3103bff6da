"""The dashboard's Log out button (security finding M15): the server forgets the browser's session,
so the same cookie opens nothing afterwards, and only a new login link logs it in again."""

from __future__ import annotations

from typing import Any

import httpx

from tests.helpers import wait_until
from tests.server.served import Served
from tests.web.test_dashboard import click, text_of


def test_log_out_ends_the_session_on_the_server(browser: Any, served: Served) -> None:
    browser.get(served.zen_ok("serve", "--url"))
    wait_until(lambda: browser.current_url.endswith("/agent"), message="the redirect to the dashboard")
    wait_until(lambda: "live" in text_of(browser, "#live"), message="the event stream to connect")
    cookie = {c["name"]: c for c in browser.get_cookies()}["zen_session"]["value"]
    click(browser, "#logout")
    wait_until(lambda: "not logged in" in browser.page_source, message="the logged-out page")
    with httpx.Client(timeout=10) as c:   # the old cookie, replayed elsewhere, is dead too
        r = c.get(f"{served.base}/api/v1/agent/status", headers={"Cookie": f"zen_session={cookie}"})
    assert r.status_code == 401
    browser.get(served.zen_ok("serve", "--url"))
    wait_until(lambda: "live" in text_of(browser, "#live"), message="a new login")

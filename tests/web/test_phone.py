"""The dashboard on a phone (issue 35): 390x844, no sideways scrolling on any tab, and the fleet
steered from it: approve from Needs you, reply to a waiting agent, pause and kill a job, its
last screen."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from selenium.common.exceptions import NoSuchElementException, StaleElementReferenceException
from selenium.webdriver.common.keys import Keys

from tests.helpers import wait_until
from tests.server.served import Served
from tests.web.conftest import exists, js, shot, text_of

pytestmark = pytest.mark.slow

PHONE = {"width": 390, "height": 844, "deviceScaleFactor": 2, "mobile": True}








def tap(driver: Any, sel: str) -> None:
    """A real click at the element (it must be on screen and not covered), as a thumb would."""
    def done() -> bool:
        try:
            el = driver.find_elements("css selector", sel)[0]
            # what is at the element's centre is the element: the page has settled under the thumb
            on_top = js(driver, "const e = arguments[0]; e.scrollIntoView({block: 'center'});"
                                "const r = e.getBoundingClientRect();"
                                "const at = document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2);"
                                "return !!at && e.contains(at)", el)
            if not on_top:
                return False
            el.click()
            return True
        except (IndexError, StaleElementReferenceException):
            return False   # not there yet, or drawn again meanwhile
    wait_until(done, message=f"{sel} to tap")


def press(driver: Any, sel: str) -> None:
    """A click dispatched at the element itself (the Needs you list above it may move it meanwhile)."""
    wait_until(lambda: js(driver, "const e = document.querySelector(arguments[0]); if (!e || e.disabled) return false;"
                                  "e.click(); return true", sel), message=f"{sel} to press")


def sideways(driver: Any) -> int:
    """How many CSS pixels the page is wider than the screen."""
    return int(js(driver, "return document.documentElement.scrollWidth - window.innerWidth"))


@pytest.fixture(scope="module")
def phone(browser: Any, served: Served) -> Iterator[Any]:
    browser.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", PHONE)
    try:
        browser.get(served.zen_ok("serve", "--url"))
        wait_until(lambda: text_of(browser, "#live") == "live", message="the dashboard on the phone")
        yield browser
    finally:
        browser.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})


def test_no_tab_scrolls_sideways_on_a_phone(phone: Any, served: Served) -> None:
    job = served.dispatch_sim("a-rather-long-job-name-for-a-narrow-screen",
                              [{"say": "x" * 180}, {"wait": True}])
    served.wait_state(job, "waiting")
    assert js(phone, "return window.innerWidth") == 390
    for name in ("sessions", "tasks", "guardrails", "metrics", "grid", "machine"):
        tap(phone, f"#tabs [data-tab={name}]")
        wait_until(lambda n=name: not js(phone, f"return document.querySelector('#tab-{n}').hidden"))
        if name == "grid":
            wait_until(lambda: exists(phone, f".tile[data-job='{job}']"), message="the tile")
        wait_until(lambda: sideways(phone) <= 0, timeout=5, message=f"the {name} tab to fit the screen "
                                                                     f"(it is {sideways(phone)} px too wide)")
        shot(phone, f"phone-{name}")
    served.zen_ok("cancel", job)


def test_a_phone_approves_replies_pauses_and_kills(phone: Any, served: Served) -> None:
    r = served.call("PUT", "/api/v1/agent/guardrails", json={"changes": {"require_approval": {"file_deletes": True}}})
    assert r.status_code == 200, r.text
    try:
        tap(phone, "#tabs [data-tab=sessions]")
        script = [{"write": {"path": "junk.txt", "content": "junk\n"}}, {"bash": "rm junk.txt"},
                  {"ask": "Approved yet?", "expect": "yes"}, {"bash": "rm junk.txt"}, {"wait": True}]
        job = served.dispatch_sim("phone-steered", script)
        served.wait_state(job, "waiting")
        approval = f"#needs li.need.approval[data-job='{job}'] button.approve"
        wait_until(lambda: exists(phone, approval), message="the request in Needs you")
        shot(phone, "phone-needs-you")
        assert sideways(phone) <= 0
        tap(phone, approval)
        aid = next(a for a in served.get("/api/v1/agent/approvals").json()["approvals"] if a["job"] == job)["id"]
        wait_until((served.home / "approvals" / "granted" / f"{aid}.yaml").exists, message="the grant from the phone")
        reply = f"#needs li.need.input[data-job='{job}'] input[name=reply]"
        wait_until(lambda: exists(phone, reply), message="the reply box")
        served.wait_state(job, "waiting")

        def answer() -> bool:
            try:
                box = phone.find_element("css selector", reply)
                js(phone, "arguments[0].scrollIntoView({block: 'center'})", box)
                box.send_keys("yes", Keys.ENTER)
                return True
            except (IndexError, StaleElementReferenceException, NoSuchElementException):
                return False   # the list was drawn again under the thumb
        wait_until(answer, message="the reply typed")
        wait_until(lambda: any(e["type"] == "guard.allowed" and e.get("command") == "rm junk.txt"
                               for e in served.events(job)), timeout=20, message="the approved rm to run")
        wait_until(lambda: not (served.home / "worktrees" / job / "junk.txt").exists(), message="the file removed")
        # open the job: its last screen and its controls, on the phone
        served.wait_state(job, "waiting")
        tap(phone, f"#needs li.need[data-job='{job}'] a.name")
        wait_until(lambda: "phone-steered" in text_of(phone, "#sd-title"), message="the job's detail")
        wait_until(lambda: "Approved yet?" in str(js(phone, "return document.querySelector('#sd-term').dataset.text")),
                   message="its last screen")
        assert phone.current_url.endswith(f"/agent/jobs/{job}")
        press(phone, "#session-detail button[data-act=pause]")
        served.wait_state(job, "paused")
        js(phone, "window.confirm = () => true")
        press(phone, "#session-detail button[data-act=cancel]")
        served.wait_state(job, "cancelled")
        wait_until(lambda: "cancelled" in text_of(phone, "#sd-title"), message="the page to show it ended")
        assert sideways(phone) <= 0
        shot(phone, "phone-job")
    finally:
        served.call("PUT", "/api/v1/agent/guardrails", json={"changes": {"require_approval": {"file_deletes": False}}})

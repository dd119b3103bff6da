"""The dashboard puts the outcome and what needs you first (issue 35): a badge per job (an exit-2
job is not a green "harvested"), the "Needs you" group with its count in the tab's title and an
opt-in notification, per-job addresses with Back/Forward, and the smaller defects of the trial."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from selenium.webdriver.common.keys import Keys

from tests.helpers import wait_until
from tests.server.served import Served
from tests.web.conftest import exists, js, shot, text_of, type_into
from zen.store import events as ev_store

pytestmark = pytest.mark.slow








def click(driver: Any, sel: str) -> None:
    wait_until(lambda: js(driver, "const e = document.querySelector(arguments[0]); if (!e) return false; "
                                  "e.click(); return true", sel), message=f"{sel} to click")


def live(driver: Any) -> bool:
    return text_of(driver, "#live") == "live"


@pytest.fixture(scope="module")
def page(browser: Any, served: Served) -> Any:
    browser.get(served.zen_ok("serve", "--url"))
    wait_until(lambda: browser.current_url.endswith("/agent"), message="the dashboard")
    wait_until(lambda: live(browser), message="the stream to connect")
    return browser


def test_an_exit_2_job_shows_a_red_exit_2_badge_not_a_green_harvested(page: Any, served: Served) -> None:
    good = served.dispatch_sim("ends-well", [{"exit": 0}])
    worse = served.dispatch_sim("ends-badly", [{"say": "giving up"}, {"exit": 2}])
    served.wait_state(good, "harvested")
    served.wait_state(worse, "harvested")
    row = f"#sessions tr[data-job='{worse}']"
    wait_until(lambda: "exit 2" in text_of(page, f"{row} .badge.bad"), message="the exit-2 badge")
    assert exists(page, f"{row} .state.bad"), "the exit-2 job's state dot is not the failure colour"
    wait_until(lambda: "exit 0" in text_of(page, f"#sessions tr[data-job='{good}'] .badge.ok"), message="exit 0")
    assert not exists(page, f"#sessions tr[data-job='{good}'] .state.bad")
    js(page, "document.querySelector('#tabs [data-tab=tasks]').click()")
    wait_until(lambda: "exit 2" in text_of(page, f"#history tr[data-task='{worse}'] .badge.bad"),
               message="the badge in the Tasks history too")
    shot(page, "outcome-badges")


def test_a_job_the_anomaly_watch_flagged_carries_an_anomaly_badge_with_the_finding(page: Any, served: Served) -> None:
    job = served.dispatch_sim("loops", [{"wait": {"turns": []}}])
    served.wait_state(job, "working", "waiting")
    row = f"#sessions tr[data-job='{job}']"
    wait_until(lambda: exists(page, row), message="the job's row")
    assert "anomaly" not in text_of(page, row)
    # the record the supervisor's anomaly watch writes (zen/orchestration/insight/watch.py)
    ev_store.append(served.home / "jobs" / job, job, "anomaly.flagged", actor="supervisor", what="tool-loop",
                    key="t1", message="the same call 9 times in a row")
    wait_until(lambda: "anomaly" in text_of(page, f"{row} .badge.warn"), message="the anomaly badge")
    title = js(page, "const b = [...document.querySelectorAll(arguments[0] + ' .badge.warn')]"
                     ".find(b => b.textContent.includes('anomaly')); return b ? b.title : ''", row)
    assert title == "the same call 9 times in a row"
    served.zen_ok("cancel", job)


NOTIFY_STUB = """
window.notified = [];
window.Notification = function (title, opts) { window.notified.push([title, (opts || {}).body, performance.now()]); };
window.Notification.permission = 'granted';
window.Notification.requestPermission = () => Promise.resolve('granted');
localStorage.setItem('zen-notify', '1');
"""


def test_a_waiting_job_is_in_needs_you_with_the_count_in_the_title_and_a_reply_from_there_reaches_it(
        page: Any, served: Served) -> None:
    js(page, "document.querySelector('#tabs [data-tab=sessions]').click()")
    js(page, NOTIFY_STUB)
    assert not exists(page, "#needs li.need"), "something needs you before any job asked"
    job = served.dispatch_sim("asks-a-port", [{"ask": "Which port?", "expect": "8080"}, {"exit": 0}])
    served.wait_state(job, "waiting")
    t_waiting = js(page, "return performance.now()")
    item = f"#needs li.need[data-job='{job}']"
    wait_until(lambda: exists(page, item), message="the job in Needs you")
    assert js(page, "return document.title").startswith("(1) "), js(page, "return document.title")
    notes = wait_until(lambda: js(page, "return window.notified"), timeout=5, message="a notification")
    assert "asks-a-port" in notes[0][0]
    assert notes[0][2] - t_waiting < 1000, "the notification came later than a second after the state changed"
    shot(page, "needs-you")
    box = page.find_element("css selector", f"{item} input[name=reply]")
    box.send_keys("8080", Keys.ENTER)
    log = served.home / "jobs" / job / "pane.log"
    wait_until(lambda: "got the expected answer: 8080" in log.read_text(), timeout=15,
               message="the reply typed in Needs you to reach the agent")
    served.wait_state(job, "harvested")
    wait_until(lambda: not exists(page, item), message="the job to leave Needs you")
    wait_until(lambda: js(page, "return document.title") == "zen", message="the title without a count")


def test_a_job_has_its_own_address_and_back_and_forward_move_between_tabs(page: Any, served: Served) -> None:
    job = served.dispatch_sim("addressable", [{"say": "find me by my address"}, {"wait": True}])
    served.wait_state(job, "waiting")
    page.get(f"{served.base}/agent/jobs/{job}")
    wait_until(lambda: live(page), message="the page")
    wait_until(lambda: "addressable" in text_of(page, "#sd-title"), message="the job's detail from its address")
    wait_until(lambda: "find me by my address" in str(js(page, "return document.querySelector('#sd-term').dataset.text")),
               message="its screen")
    js(page, "document.querySelector('#tabs [data-tab=metrics]').click()")
    wait_until(lambda: page.current_url.endswith("/agent/metrics"))
    js(page, "document.querySelector('#tabs [data-tab=grid]').click()")
    wait_until(lambda: page.current_url.endswith("/agent/grid"))
    page.back()
    wait_until(lambda: not js(page, "return document.querySelector('#tab-metrics').hidden"), message="Back to Metrics")
    page.back()
    wait_until(lambda: not js(page, "return document.querySelector('#tab-sessions').hidden")
               and page.current_url.endswith(f"/agent/jobs/{job}"), message="Back to the job")
    page.forward()
    wait_until(lambda: not js(page, "return document.querySelector('#tab-metrics').hidden"), message="Forward")
    # an unknown job says so in the page's words, with the list still there
    page.get(f"{served.base}/agent/jobs/no-such-job")
    wait_until(lambda: "There is no job" in text_of(page, "#sd-missing"), message="the page's own message")
    assert "zen status" not in text_of(page, "#sd-missing")
    served.zen_ok("cancel", job)


def test_the_root_address_leads_to_the_dashboard(served: Served) -> None:
    with httpx.Client(base_url=served.base) as c:
        r = c.get("/", follow_redirects=False)
    assert r.status_code == 303 and r.headers["location"] == "/agent"


def test_keys_typed_in_a_tile_without_enter_are_not_sent_in_front_of_the_next_send(page: Any, served: Served) -> None:
    job = served.dispatch_sim("typed-ahead", [{"ask": "Which colour?", "expect": "blue"}, {"exit": 0}])
    served.wait_state(job, "waiting")
    js(page, "document.querySelector('#tabs [data-tab=grid]').click()")
    term_sel = f".tile[data-job='{job}'] .term"
    wait_until(lambda: "Which colour?" in str(js(page, "const e = document.querySelector(arguments[0]); "
                                                       "return e ? e.dataset.text : ''", term_sel)))
    term = page.find_element("css selector", term_sel)
    type_into(page, term, "xy")
    wait_until(lambda: "xy" in "".join(e["text"] for e in served.events(job) if e["type"] == "input.sent"),
               message="the stray keys to reach the agent")
    js(page, "document.querySelector('#tabs [data-tab=sessions]').click()")
    click(page, f"#sessions tr[data-job='{job}']")
    wait_until(lambda: "typed-ahead" in text_of(page, "#sd-title"))
    served.wait_state(job, "waiting")   # the stray keys made it busy for a moment
    wait_until(lambda: "waiting" in text_of(page, "#sd-title"), message="the page to see it waiting again")
    page.find_element("css selector", "#sd-text").send_keys("blue")
    click(page, "#sd-input button[type=submit]")
    log = served.home / "jobs" / job / "pane.log"
    wait_until(lambda: "got the expected answer: blue" in log.read_text(), timeout=15,
               message="the agent to get 'blue' alone, not the keys typed before it")


def test_denying_from_needs_you_says_denied_and_an_ended_jobs_request_is_not_actionable(
        page: Any, served: Served) -> None:
    r = served.call("PUT", "/api/v1/agent/guardrails", json={"changes": {"require_approval": {"file_deletes": True}}})
    assert r.status_code == 200, r.text
    try:
        script = [{"write": {"path": "junk.txt", "content": "junk\n"}}, {"bash": "rm junk.txt"},
                  {"ask": "Approved yet?"}, {"wait": True}]
        job = served.dispatch_sim("wants-rm", script)
        served.wait_state(job, "waiting")
        js(page, "document.querySelector('#tabs [data-tab=sessions]').click()")
        item = f"#needs li.need.approval[data-job='{job}']"
        wait_until(lambda: exists(page, f"{item} button.deny"), message="the request in Needs you")
        assert "rm junk.txt" in text_of(page, item)
        click(page, f"{item} button.deny")
        wait_until(lambda: text_of(page, "#toast").startswith("denied"), message="the toast")
        assert "denyd" not in text_of(page, "#toast")
        wait_until(lambda: not exists(page, item), message="the request to leave Needs you")
        served.zen_ok("cancel", job)
    finally:
        served.call("PUT", "/api/v1/agent/guardrails", json={"changes": {"require_approval": {"file_deletes": False}}})


def test_an_approval_of_a_job_that_ended_has_no_buttons(page: Any, served: Served) -> None:
    r = served.call("PUT", "/api/v1/agent/guardrails", json={"changes": {"require_approval": {"file_deletes": True}}})
    assert r.status_code == 200, r.text
    try:
        job = served.dispatch_sim("left-a-request", [{"write": {"path": "j.txt", "content": "j\n"}},
                                                     {"bash": "rm j.txt"}, {"exit": 0}])
        served.wait_state(job, "harvested")
        pending = [a for a in served.get("/api/v1/agent/approvals").json()["approvals"]
                   if a["job"] == job and a["state"] == "pending"]
        assert pending, "the job left no pending request"
        js(page, "document.querySelector('#tabs [data-tab=guardrails]').click()")
        row = f"#approvals tr[data-approval='{pending[0]['id']}']"
        wait_until(lambda: exists(page, row), message="the request's row")
        assert "job ended" in text_of(page, row) and not exists(page, f"{row} button.approve")
        assert not exists(page, f"#needs li.need[data-job='{job}']")
    finally:
        served.call("PUT", "/api/v1/agent/guardrails", json={"changes": {"require_approval": {"file_deletes": False}}})


def test_a_used_login_link_opened_again_in_a_logged_in_browser_opens_the_dashboard(served: Served) -> None:
    with httpx.Client(base_url=served.base, timeout=10) as c:
        url = served.zen_ok("serve", "--url")
        assert c.get(url, follow_redirects=False).status_code == 303
        again = c.get(url, follow_redirects=False)   # the same browser, its cookie with it
        assert again.status_code == 303 and again.headers["location"] == "/agent"
    with httpx.Client(timeout=10) as stranger:
        assert stranger.get(url, follow_redirects=False).status_code == 401


def test_a_job_whose_lane_check_failed_shows_it_in_its_badges(page: Any, served: Served) -> None:
    # issue 37: the supervisor runs the lane's checks after the harvest; the page shows the result
    served.zen_ok("lane", "set", "app", "--check", "test -f never-there.txt")
    try:
        job = served.dispatch_sim("checked", [{"write": {"path": "c.txt", "content": "c\n"}}, {"exit": 0}])
        served.wait_state(job, "harvested")
        row = f"#sessions tr[data-job='{job}']"
        wait_until(lambda: "check failed" in text_of(page, f"{row} .badge.bad"), timeout=30,
                   message="the failed check's badge")
    finally:
        served.zen_ok("lane", "set", "app", "--no-checks")

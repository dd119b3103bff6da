"""The dashboard in a real headless chromium: logging in with the URL token, every tab live, input
and approvals from the page, the grid's terminals, and land from the sidebar."""

from __future__ import annotations

import time
from typing import Any

import pytest
from selenium.webdriver.common.keys import Keys

from tests.helpers import git, wait_until
from tests.server.served import Served
from tests.web.conftest import exists, shot, text_of, type_into

pytestmark = pytest.mark.slow


def css(driver: Any, sel: str) -> Any:
    return driver.find_element("css selector", sel)


def all_css(driver: Any, sel: str) -> list[Any]:
    return list(driver.find_elements("css selector", sel))


def tab(driver: Any, name: str) -> None:
    css(driver, f'#tabs button[data-tab="{name}"]').click()
    wait_until(lambda: css(driver, f"#tab-{name}").is_displayed(), message=f"the {name} tab")


def click(driver: Any, sel: str) -> None:
    """Click by selector in the page itself: lists re-render live, so no element is held on to."""
    def done() -> bool:
        return bool(driver.execute_script("const e = document.querySelector(arguments[0]); if (!e) return false; "
                                          "e.click(); return true", sel))
    wait_until(done, message=f"{sel} to click")


def attr(driver: Any, sel: str, name: str) -> str:
    return str(driver.execute_script("const e = document.querySelector(arguments[0]); "
                                     "return e ? (e.getAttribute(arguments[1]) || '') : ''", sel, name))






@pytest.fixture(scope="module")
def page(browser: Any, served: Served) -> Any:
    """The browser logged in to the module's server with a one-time URL."""
    url = served.zen_ok("serve", "--url")
    browser.get(url)
    wait_until(lambda: browser.current_url.endswith("/agent"), message="the redirect to the dashboard")
    wait_until(lambda: "live" in text_of(browser, "#live"), message="the event stream to connect")
    return browser


def test_login_with_the_url_token_leaves_no_token_in_the_url(page: Any, served: Served) -> None:
    assert "token" not in page.current_url
    cookies = {c["name"]: c for c in page.get_cookies()}
    assert cookies["zen_session"]["httpOnly"] and cookies["zen_session"]["sameSite"] == "Strict"
    assert served.token not in page.current_url and served.token not in str(cookies)
    # the page's script cannot read the cookie
    assert "zen_session" not in page.execute_script("return document.cookie")


def test_a_job_dispatched_with_the_cli_appears_in_sessions_within_a_second(page: Any, served: Served) -> None:
    tab(page, "sessions")
    job = served.dispatch_sim("from-the-cli", [{"say": "hello from the cli job"}, {"ask": "Proceed?"}, {"wait": True}])
    record = served.home / "jobs" / job / "events.jsonl"
    wait_until(record.exists, timeout=10, message="the supervisor to take the task in")
    t0 = time.monotonic()
    wait_until(lambda: exists(page, f'#sessions tr[data-job="{job}"]'), timeout=5, interval=0.02,
               message="the new job's row")
    took = time.monotonic() - t0
    assert took <= 1.0, f"the job showed up {took:.2f}s after its record, without a reload"
    served.wait_state(job, "waiting")
    wait_until(lambda: "waiting" in text_of(page, f'#sessions tr[data-job="{job}"]'), message="its state to follow")
    click(page, f'#sessions tr[data-job="{job}"]')
    wait_until(lambda: "hello from the cli job" in attr(page, "#sd-term", 'data-text'),
               message="the live terminal of the job")
    shot(page, "sessions")


def test_sending_input_from_the_page_reaches_a_waiting_agent(page: Any, served: Served) -> None:
    tab(page, "sessions")
    job = served.dispatch_sim("asks-colour", [{"ask": "Which colour?", "expect": "blue"}, {"wait": True}])
    served.wait_state(job, "waiting")
    wait_until(lambda: exists(page, f'#sessions tr[data-job="{job}"]'))
    click(page, f'#sessions tr[data-job="{job}"]')
    wait_until(lambda: "Which colour?" in attr(page, "#sd-term", 'data-text'))
    box = css(page, "#sd-text")
    box.send_keys("blue")
    click(page, "#sd-input button[type=submit]")
    log = served.home / "jobs" / job / "pane.log"
    wait_until(lambda: "got the expected answer: blue" in log.read_text(), timeout=15,
               message="the agent to get the answer typed on the page")
    sent = [e for e in served.events(job) if e["type"] == "input.sent"]
    assert sent and sent[-1]["text"] == "blue" and sent[-1]["actor"] == "human"
    wait_until(lambda: "blue" in attr(page, "#sd-term", 'data-text'),
               message="the answer on the page's terminal")
    served.zen_ok("cancel", job)


def test_approving_in_the_guardrails_tab_lets_the_same_command_through_once(page: Any, served: Served) -> None:
    r = served.call("PUT", "/api/v1/agent/guardrails", json={"changes": {"require_approval": {"file_deletes": True}}})
    assert r.status_code == 200, r.text
    try:
        script = [{"write": {"path": "junk.txt", "content": "junk\n"}}, {"bash": "rm junk.txt"},
                  {"ask": "Approved yet?"}, {"bash": "rm junk.txt"}, {"bash": "rm junk.txt"}, {"wait": True}]
        job = served.dispatch_sim("needs-approval", script)
        served.wait_state(job, "waiting")
        denied = [e for e in served.events(job) if e["type"] == "guard.denied"]
        assert denied and "zen approve" in denied[-1]["reason"]
        tab(page, "guardrails")
        wait_until(lambda: exists(page, "#approvals tr[data-approval] button.approve"), message="the pending approval")
        row_text = text_of(page, "#approvals tr[data-approval]")
        assert "needs-approval" in row_text and "rm junk.txt" in row_text
        shot(page, "guardrails")
        aid = attr(page, "#approvals tr[data-approval]", "data-approval")
        click(page, f'#approvals tr[data-approval="{aid}"] button.approve')
        wait_until((served.home / "approvals" / "granted" / f"{aid}.yaml").exists, message="the grant")
        served.zen_ok("send", job, "yes")
        wait_until(lambda: sum(1 for e in served.events(job) if e["type"].startswith("guard.")
                               and e.get("command") == "rm junk.txt") >= 3, timeout=20)
        decisions = [e["type"] for e in served.events(job) if e["type"].startswith("guard.")
                     and e.get("command") == "rm junk.txt"]
        assert decisions == ["guard.denied", "guard.allowed", "guard.denied"], decisions  # once, not twice
        assert not (served.home / "worktrees" / job / "junk.txt").exists()
        served.zen_ok("cancel", job)
    finally:
        served.call("PUT", "/api/v1/agent/guardrails", json={"changes": {"require_approval": {"file_deletes": False}}})


def test_the_tasks_tab_queues_a_task_and_shows_its_result(page: Any, served: Served) -> None:
    tab(page, "tasks")
    form = css(page, "#new-task")
    form.find_element("css selector", "textarea[name=description]").send_keys("Note the plan in a file")
    form.find_element("css selector", "input[name=name]").send_keys("from-the-page")
    form.find_element("css selector", "button[type=submit]").click()
    wait_until(lambda: "from-the-page" in text_of(page, "#history") or "from-the-page" in text_of(page, "#queue"),
               message="the new task in the lists")
    job = next(t["id"] for t in served.get("/api/v1/agent/tasks").json()["tasks"] if t["name"] == "from-the-page")
    served.wait_state(job, "harvested")
    wait_until(lambda: "harvested" in text_of(page, f'#history tr[data-task="{job}"]'), message="the live state")
    click(page, f'#history tr[data-task="{job}"]')
    wait_until(lambda: "zen/review/" in text_of(page, "#td-review"), message="the review")
    shot(page, "tasks")


def test_the_metrics_tab_charts_the_jobs(page: Any, served: Served) -> None:
    # a job of its own: under xdist this test may run on a worker (and server) where no other test did
    first = served.dispatch_sim("some-tokens", [{"exit": 0}])
    served.wait_state(first, "harvested")
    tab(page, "metrics")
    wait_until(lambda: int(attr(page, "#chart-tokens", "data-points") or 0) >= 1, message="the charts")
    assert exists(page, "#chart-tokens svg rect") and "input tokens" in text_of(page, "#totals")
    job = served.dispatch_sim("more-tokens", [{"exit": 0}])
    served.wait_state(job, "harvested")
    wait_until(lambda: "more-tokens" in text_of(page, "#chart-tokens"), timeout=10, message="the new job in a chart")
    shot(page, "metrics")


def test_the_grid_shows_a_tile_per_live_agent_with_its_terminal(page: Any, served: Served) -> None:
    for s in served.get("/api/v1/agent/sessions?live=true").json()["sessions"]:
        served.zen("cancel", s["job"])
    a = served.dispatch_sim("tile-a", [{"say": "I am tile A"}, {"wait": True}])
    b = served.dispatch_sim("tile-b", [{"say": "I am tile B"}, {"wait": True}])
    served.wait_state(a, "waiting")
    served.wait_state(b, "waiting")
    tab(page, "grid")
    for job, words in ((a, "I am tile A"), (b, "I am tile B")):
        wait_until(lambda j=job, w=words: w in attr(page, f'.tile[data-job="{j}"] .term', 'data-text'),
                   message=f"tile {job}")
    assert page.execute_script("return document.querySelectorAll('.tile').length") == 2
    shot(page, "grid")
    # typing reaches an agent only through its focused tile
    term = css(page, f'.tile[data-job="{a}"] .term')
    type_into(page, term, "hello tile", Keys.ENTER)
    wait_until(lambda: "ok: hello tile" in attr(page, f'.tile[data-job="{a}"] .term', 'data-text'),
               message="the typed line to reach agent A")
    sent = [e for e in served.events(a) if e["type"] == "input.sent"]
    assert sent and sent[-1]["via"] == "grid" and "hello tile" in "".join(e["text"] for e in sent)
    assert not [e for e in served.events(b) if e["type"] == "input.sent"]
    # pause from the tile, then finish: the tile goes away
    click(page, f'.tile[data-job="{b}"] button.pause')
    served.wait_state(b, "paused")
    wait_until(lambda: "paused" in text_of(page, f'.tile[data-job="{b}"] .status'), message="the paused dot")
    page.execute_script("window.confirm = () => true")
    click(page, f'.tile[data-job="{b}"] button.finish')
    served.wait_state(b, "harvested")
    wait_until(lambda: not exists(page, f'.tile[data-job="{b}"]'), message="the tile of the finished job to go")
    served.zen_ok("cancel", a)


# In the page: hold back the first POST .../keys until window.releaseKeys() is called, and count them.
HOLD_FIRST_KEYS = """
window.keyPosts = 0;
const realFetch = window.realFetch = window.realFetch || window.fetch;
let release;
const held = new Promise(r => { release = r; });
window.releaseKeys = () => release();
window.fetch = (url, opts) => {
  if (!String(url).endsWith('/keys')) return realFetch(url, opts);
  window.keyPosts += 1;
  return window.keyPosts === 1 ? held.then(() => realFetch(url, opts)) : realFetch(url, opts);
};
"""


def test_keys_reach_the_agent_in_the_order_typed_when_a_batch_is_slow(page: Any, served: Served) -> None:
    job = served.dispatch_sim("slow-keys", [{"wait": True}])
    served.wait_state(job, "waiting")
    tab(page, "grid")
    wait_until(lambda: exists(page, f'.tile[data-job="{job}"] .term'), message="the tile")
    page.execute_script(HOLD_FIRST_KEYS)
    try:
        term = css(page, f'.tile[data-job="{job}"] .term')
        type_into(page, term, "hel")
        wait_until(lambda: page.execute_script("return window.keyPosts") == 1, message="the first batch to be sent")
        type_into(page, term, "lo", Keys.ENTER)  # typed while the first batch is still on its way
        page.execute_script("window.releaseKeys()")
        wait_until(lambda: "ok: hello" in attr(page, f'.tile[data-job="{job}"] .term', 'data-text'),
                   message="the line in the order typed")
        sent = "".join(e.get("text", "") for e in served.events(job) if e["type"] == "input.sent")
        assert sent.startswith("hello"), sent
    finally:
        page.execute_script("window.releaseKeys(); window.fetch = window.realFetch")
        served.zen_ok("cancel", job)


def test_land_from_the_sidebar_merges_a_clean_job_and_refuses_a_conflicting_one(page: Any, served: Served) -> None:
    git(served.repo, "checkout", "-q", "-b", "web-side")
    try:
        # one after the other: while one job writes src/app.py the coordinator leases it to that job
        ok = served.dispatch_sim("clean-one", [{"write": {"path": "src/app.py", "content": "print('clean')\n"}}, {"exit": 0}])
        served.wait_state(ok, "harvested")
        bad = served.dispatch_sim("clashing-one", [{"write": {"path": "src/app.py", "content": "print('clash')\n"}},
                                                   {"exit": 0}])
        served.wait_state(bad, "harvested")
        tab(page, "grid")
        page.execute_script("window.confirm = () => true")
        wait_until(lambda: exists(page, f'#lane-list .job[data-job="{ok}"] button.land'), message="the Land button")
        before = git(served.repo, "rev-parse", "main")
        click(page, f'#lane-list .job[data-job="{ok}"] button.land')
        wait_until(lambda: git(served.repo, "rev-parse", "main") != before, message="main to move")
        assert git(served.repo, "show", "main:src/app.py") == "print('clean')"
        landed = git(served.repo, "rev-parse", "main")
        wait_until(lambda: exists(page, f'#lane-list .job[data-job="{bad}"] button.land'))
        click(page, f'#lane-list .job[data-job="{bad}"] button.land')
        wait_until(lambda: "does not merge cleanly" in text_of(page, "#toast"),
                   message="the refusal on the page")
        assert git(served.repo, "rev-parse", "main") == landed
        assert not [e for e in served.events(bad) if e["type"] == "job.landed"]
    finally:
        git(served.repo, "checkout", "-q", "main")


def test_the_file_browser_shows_the_diff_and_saves_a_humans_edit(page: Any, served: Served) -> None:
    job = served.dispatch_sim("edited", [{"write": {"path": "notes.md", "content": "# notes\n"}}, {"wait": True}])
    served.wait_state(job, "waiting")
    tab(page, "sessions")
    wait_until(lambda: exists(page, f'#sessions tr[data-job="{job}"]'))
    click(page, f'#sessions tr[data-job="{job}"]')
    click(page, '#session-detail button[data-act="files"]')
    wait_until(lambda: "+# notes" in text_of(page, "#diff-view"), message="the diff")
    click(page, '#file-list li[data-path="notes.md"]')
    wait_until(lambda: page.execute_script("return ZenFiles.view && ZenFiles.view.state.doc.toString()") == "# notes\n",
               message="the file in the editor")
    assert exists(page, "#editor-cm .cm-editor .cm-lineNumbers"), "not the CodeMirror editor"
    assert exists(page, "#editor-cm .cm-line span"), "no syntax highlighting of the markdown"
    editor = css(page, "#editor-cm .cm-content")
    editor.click()
    page.execute_script("ZenFiles.view.dispatch({selection: {anchor: ZenFiles.view.state.doc.length}})")
    type_into(page, editor, "edited by a human\n")
    assert "unsaved" in page.execute_script("return getComputedStyle(document.querySelector('#editor-path'), '::after').content")
    page.execute_script("window.confirm = () => false")
    click(page, "#files-close")   # unsaved changes: Close asks first, and a No keeps the editor open
    assert not page.execute_script("return document.querySelector('#files').hidden")
    click(page, "#editor-save")
    path = served.home / "worktrees" / job / "notes.md"
    wait_until(lambda: "edited by a human" in path.read_text(), message="the save")
    # the file is written first, then the edit recorded: wait for the record too
    wait_until(lambda: [e for e in served.events(job) if e["type"] == "files.edited"], message="files.edited")
    edits = [e for e in served.events(job) if e["type"] == "files.edited"]
    assert edits[-1]["actor"] == "human" and edits[-1]["paths"] == ["notes.md"]
    shot(page, "files")
    click(page, "#files-close")
    served.zen_ok("cancel", job)

"""Real terminals in the page (issue 35): xterm.js fed the pane's bytes, its size following the
tile (the pane is resized to it), keys reaching the agent, a key that leaves the terminal, and
an ended job's output replayed read-only."""

from __future__ import annotations

import subprocess
from typing import Any

import pytest
from selenium.webdriver.common.keys import Keys

from tests.helpers import wait_until
from tests.server.served import Served
from tests.web.conftest import js, shot, type_into
from zen.store.home import Home

pytestmark = pytest.mark.slow




def data(driver: Any, sel: str, name: str) -> str:
    return str(js(driver, "const e = document.querySelector(arguments[0]); return e ? (e.dataset[arguments[1]] || '') : ''",
                  sel, name))


def pane_size(served: Served, job: str) -> tuple[int, int]:
    session = served.snap(job)["tmux_session"]
    r = subprocess.run(["tmux", "-L", Home(served.home).tmux_socket, "display-message", "-p", "-t", f"={session}:",
                        "#{pane_width} #{pane_height}"], env=served.env, capture_output=True, text=True, check=True)
    w, h = r.stdout.split()
    return int(w), int(h)


@pytest.fixture(scope="module")
def page(browser: Any, served: Served) -> Any:
    browser.get(served.zen_ok("serve", "--url"))
    wait_until(lambda: js(browser, "return document.querySelector('#live').textContent") == "live", message="the page")
    return browser


def test_a_tiles_terminal_sizes_the_pane_and_follows_the_tile(page: Any, served: Served) -> None:
    for s in served.get("/api/v1/agent/sessions?live=true").json()["sessions"]:
        served.zen("cancel", s["job"])
    job = served.dispatch_sim("sized", [{"say": "size me"}, {"wait": True}])
    served.wait_state(job, "waiting")
    assert pane_size(served, job) == (200, 50)   # the pane's size before any page looked at it
    js(page, "document.querySelector('#tabs [data-tab=grid]').click()")
    term = f".tile[data-job='{job}'] .term"
    wait_until(lambda: "size me" in data(page, term, "text"), message="the tile's terminal")

    def follows() -> tuple[int, int] | None:
        cols, rows = data(page, term, "cols"), data(page, term, "rows")
        got = pane_size(served, job)
        return got if cols and got == (int(cols), int(rows)) else None
    # the terminal starts at the pane's 200x50 (its seed), then fits the tile: both then agree
    first = wait_until(lambda: (got := follows()) and got[0] < 200 and got, timeout=10,
                       message="the pane to take the tile's size")
    js(page, "document.querySelector(arguments[0]).closest('.tile').style.width = '420px'", term)
    second = wait_until(lambda: (got := follows()) and got != first and got, timeout=10,
                        message="the pane to follow the narrower tile")
    assert second[0] < first[0]
    js(page, "document.querySelector(arguments[0]).closest('.tile').style.width = ''", term)
    shot(page, "terminal-sized")
    served.zen_ok("cancel", job)


def test_keys_typed_in_the_terminal_reach_the_agent_and_ctrl_bracket_leaves_it(page: Any, served: Served) -> None:
    job = served.dispatch_sim("typed", [{"say": "type to me"}, {"wait": True}])
    served.wait_state(job, "waiting")
    js(page, "document.querySelector('#tabs [data-tab=grid]').click()")
    sel = f".tile[data-job='{job}'] .term"
    wait_until(lambda: "type to me" in data(page, sel, "text"), message="the terminal")
    term = page.find_element("css selector", sel)
    type_into(page, term, "helo", Keys.BACKSPACE, "lo there", Keys.ENTER)
    wait_until(lambda: "ok: hello there" in data(page, sel, "text"), timeout=15,
               message="the agent's answer to the line typed (a Backspace in it)")
    keys = [k for e in served.events(job) if e["type"] == "input.sent" for k in e.get("keys", [])]
    assert "BSpace" in keys and "Enter" in keys
    assert js(page, "return document.activeElement.classList.contains('xterm-helper-textarea')")
    type_into(page, term, Keys.TAB)   # Tab belongs to the agent: the focus stays
    assert js(page, "return document.activeElement.classList.contains('xterm-helper-textarea')")
    from selenium.webdriver.common.action_chains import ActionChains
    ActionChains(page).key_down(Keys.CONTROL).send_keys("]").key_up(Keys.CONTROL).perform()
    wait_until(lambda: js(page, "return document.activeElement.tagName") == "BUTTON",
               message="Ctrl+] to move the focus out of the terminal, onto the tile's buttons")
    served.zen_ok("cancel", job)


def test_an_ended_jobs_terminal_replays_its_output_read_only(page: Any, served: Served) -> None:
    job = served.dispatch_sim("said-goodbye", [{"say": "\x1b[1;32mall green\x1b[0m and goodbye"}, {"exit": 0}])
    served.wait_state(job, "harvested")
    page.get(f"{served.base}/agent/jobs/{job}")
    wait_until(lambda: "all green and goodbye" in data(page, "#sd-term", "text"), timeout=10,
               message="the ended job's output in its terminal")
    assert js(page, "return !!document.querySelector('#sd-term .xterm')")
    shot(page, "terminal-replay")

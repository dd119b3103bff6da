"""The dashboard with a fleet (issue 35): the page holds one stream however many tiles it shows,
and after the server comes back it shows what happened while it was away before it says "live"."""

from __future__ import annotations

import signal
import subprocess
import sys
from collections.abc import Iterator
from typing import Any

import pytest
from selenium.webdriver.common.keys import Keys

from tests.helpers import REPO_ROOT, wait_until
from tests.server.served import Served
from tests.web.conftest import js, shot, type_into

pytestmark = pytest.mark.slow

FLEET = 12


class FleetServed(Served):
    """A served home that lets a dozen agents live at once."""

    def start_supervisor(self) -> None:
        cfg = self.home / "zen.yaml"
        cfg.write_text(cfg.read_text().replace("max_concurrent_tasks: 5", "max_concurrent_tasks: 16"))
        super().start_supervisor()

    def restart_server(self) -> None:
        """Stop `zen serve` and start it again on the same port (the page keeps its address)."""
        assert self.server is not None
        self.server.send_signal(signal.SIGTERM)
        self.server.wait(timeout=15)
        self.start_on(self.port)

    def stop_server(self) -> None:
        assert self.server is not None
        self.server.send_signal(signal.SIGTERM)
        self.server.wait(timeout=15)

    def start_on(self, port: int) -> None:
        out = (self.root / "server.out").open("ab")
        self.server = subprocess.Popen([sys.executable, "-m", "zen", "serve", "--port", str(port)], cwd=REPO_ROOT,
                                       env=self.env, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        self.procs.append(self.server)

        def answers() -> bool:
            try:
                return self.get("/api/v1/agent/status").status_code == 200
            except Exception:
                return False
        wait_until(answers, timeout=20, message="zen serve to answer again")


@pytest.fixture(scope="module")
def fleet(tmp_path_factory: pytest.TempPathFactory) -> Iterator[FleetServed]:
    s = FleetServed(tmp_path_factory.mktemp("fleet"))
    s.start()
    try:
        yield s
    finally:
        s.stop()




def term_text(driver: Any, job: str) -> str:
    return str(js(driver, "const e = document.querySelector(`.tile[data-job='${arguments[0]}'] .term`); "
                          "return e ? (e.dataset.text || '') : ''", job))


@pytest.fixture(scope="module")
def page(browser: Any, fleet: FleetServed) -> Any:
    browser.get(fleet.zen_ok("serve", "--url"))
    wait_until(lambda: "/agent" in browser.current_url, message="the redirect to the dashboard")
    wait_until(lambda: js(browser, "return document.querySelector('#live').textContent") == "live",
               message="the stream to connect")
    return browser


def test_twelve_live_agents_in_the_grid_and_keys_typed_into_the_last_tile_reach_its_agent(
        page: Any, fleet: FleetServed) -> None:
    jobs = [fleet.dispatch_sim(f"fleet-{i:02d}", [{"say": f"I am agent {i:02d}"}, {"wait": True}])
            for i in range(FLEET)]
    for job in jobs:
        fleet.wait_state(job, "waiting", timeout=90)
    js(page, "document.querySelector('#tabs [data-tab=grid]').click()")
    for i, job in enumerate(jobs):
        wait_until(lambda j=job, i=i: f"I am agent {i:02d}" in term_text(page, j), timeout=30,
                   message=f"tile {i} with its agent's screen")
    assert js(page, "return document.querySelectorAll('#grid .tile').length") == FLEET
    shot(page, "fleet-grid")
    last = jobs[-1]
    term = page.find_element("css selector", f".tile[data-job='{last}'] .term")
    js(page, "arguments[0].scrollIntoView()", term)
    type_into(page, term, "hello last tile", Keys.ENTER)
    wait_until(lambda: "ok: hello last tile" in term_text(page, last), timeout=20,
               message="the typed line to reach the last agent and its answer to show")
    sent = [e for e in fleet.events(last) if e["type"] == "input.sent"]
    assert sent and "hello last tile" in "".join(e["text"] for e in sent)
    assert not any(e["type"] == "input.sent" for j in jobs[:-1] for e in fleet.events(j))
    # the page is not starved of connections: a plain request answers at once
    took = page.execute_async_script(
        "const done = arguments[0]; const t0 = performance.now();"
        "fetch('/api/v1/agent/status', {credentials: 'same-origin'}).then(() => done(performance.now() - t0), "
        "() => done(-1))")
    assert 0 <= took < 3000, took
    for job in jobs:
        fleet.zen("cancel", job)


def test_after_a_server_restart_a_job_that_ended_meanwhile_shows_as_ended_before_live(
        page: Any, fleet: FleetServed) -> None:
    job = fleet.dispatch_sim("ends-while-away", [{"say": "still here"}, {"wait": True}])
    fleet.wait_state(job, "waiting", timeout=60)
    js(page, "document.querySelector('#tabs [data-tab=sessions]').click()")
    row = f"#sessions tr[data-job='{job}']"
    wait_until(lambda: "waiting" in str(js(page, "const r = document.querySelector(arguments[0]); "
                                                 "return r ? r.textContent : ''", row)), message="the waiting row")
    fleet.stop_server()
    wait_until(lambda: js(page, "return document.querySelector('#live').textContent") != "live",
               message="the page to see the server gone")
    fleet.zen_ok("finish", job)
    wait_until(lambda: any(e["type"] == "harvest.done" for e in fleet.events(job)), timeout=30,
               message="the job to end while the server is down")
    fleet.start_on(fleet.port)
    # the first moment the page says live again, the row already shows the job ended
    state = wait_until(lambda: js(page, "if (document.querySelector('#live').textContent !== 'live') return null;"
                                        "const r = document.querySelector(arguments[0]); return r ? r.textContent : '?'",
                                  row), timeout=20, message="the page to be live again")
    assert "harvested" in state and "waiting" not in state, state

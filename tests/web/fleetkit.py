"""A sim fleet served and opened in headless chromium, for `make screenshot` (tests/web/screens.py)
and the dashboard's benchmark (bench/web.py): a real home, `zen supervise`, `zen serve`, N sim
agents waiting at their prompts, and a logged-in browser."""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from tests.helpers import wait_until
from tests.web.conftest import CHROMEDRIVER, CHROMIUM
from tests.web.test_fleet import FleetServed

PHONE = {"width": 390, "height": 844, "deviceScaleFactor": 2, "mobile": True}


def browser(width: int = 1600, height: int = 1000) -> Any:
    from selenium import webdriver
    from selenium.webdriver.chrome.options import Options
    from selenium.webdriver.chrome.service import Service

    opts = Options()
    opts.binary_location = CHROMIUM
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                 f"--window-size={width},{height}", "--no-first-run", "--disable-extensions",
                 "--disable-background-networking", "--disable-sync", "--mute-audio", "--password-store=basic"):
        opts.add_argument(flag)
    driver = webdriver.Chrome(service=Service(executable_path=CHROMEDRIVER), options=opts)
    driver.set_page_load_timeout(60)
    return driver


@contextmanager
def fleet(n: int, scripts: list[list[dict[str, Any]]] | None = None) -> Iterator[tuple[FleetServed, Any, list[str]]]:
    """`n` sim agents (each saying who it is, then waiting), served, and a browser logged in."""
    root = Path(tempfile.mkdtemp(prefix="zenweb"))
    served = FleetServed(root)
    served.start()
    driver = None
    try:
        jobs = []
        for i in range(n):
            script = (scripts[i] if scripts and i < len(scripts) else
                      [{"say": f"agent {i:02d}: reading the code"}, {"wait": True}])
            jobs.append(served.dispatch_sim(f"agent-{i:02d}", script))
        for job in jobs:
            served.wait_state(job, "waiting", "harvested", timeout=120)
        driver = browser()
        driver.get(served.zen_ok("serve", "--url"))
        wait_until(lambda: driver.execute_script("return document.querySelector('#live').textContent") == "live",
                   timeout=30, message="the dashboard")
        yield served, driver, jobs
    finally:
        if driver is not None:
            driver.quit()
        served.stop()

"""A real browser for the dashboard: Debian's chromium, headless, through Selenium with the system
chromedriver (never Selenium Manager, which would try to download one). One browser for the
whole session, one served home per module; screenshots go to .artifacts/web/ (git-ignored), and
the run prints where they are."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import REPO_ROOT
from tests.server.served import Served

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
CHROMEDRIVER = shutil.which("chromedriver") or "/usr/bin/chromedriver"
ARTIFACTS = REPO_ROOT / ".artifacts" / "web"

needs_browser = pytest.mark.skipif(
    not (Path(CHROMIUM).exists() and Path(CHROMEDRIVER).exists()),
    reason="Debian's chromium and chromium-driver are not installed (apt-get install -y chromium chromium-driver; "
           ".ci/run installs them)")


@pytest.fixture(scope="session")
def browser() -> Iterator[Any]:
    if not (Path(CHROMIUM).exists() and Path(CHROMEDRIVER).exists()):
        pytest.skip("Debian's chromium and chromium-driver are not installed (apt-get install -y chromium "
                    "chromium-driver; .ci/run installs them)")
    from selenium import webdriver
    from selenium.webdriver.chrome.options import Options
    from selenium.webdriver.chrome.service import Service

    opts = Options()
    opts.binary_location = CHROMIUM
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                 "--window-size=1400,1000", "--no-first-run", "--disable-extensions",
                 "--disable-background-networking", "--disable-sync", "--metrics-recording-only",
                 "--disable-default-apps", "--mute-audio", "--password-store=basic"):
        opts.add_argument(flag)
    opts.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(executable_path=CHROMEDRIVER), options=opts)
    driver.set_page_load_timeout(30)
    try:
        yield driver
    finally:
        driver.quit()


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    s = Served(tmp_path_factory.mktemp("web")).start()
    try:
        yield s
    finally:
        s.stop()


def shot(driver: Any, name: str) -> Path:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    path = ARTIFACTS / f"{name}.png"
    driver.save_screenshot(str(path))
    return path


def pytest_terminal_summary(terminalreporter: Any) -> None:
    if ARTIFACTS.exists() and any(ARTIFACTS.glob("*.png")):
        terminalreporter.write_line(f"dashboard screenshots: {ARTIFACTS}")


def type_into(driver: Any, element: Any, *keys: str) -> None:
    """Click a terminal (xterm.js takes the focus in its own input) and type there, as a person does."""
    from selenium.webdriver.common.action_chains import ActionChains

    element.click()
    ActionChains(driver).send_keys(*keys).perform()


# -- reading the page: the few calls every browser test makes -------------------------------------

def js(driver: Any, script: str, *args: Any) -> Any:
    return driver.execute_script(script, *args)


def text_of(driver: Any, sel: str) -> str:
    return str(js(driver, "const e = document.querySelector(arguments[0]); return e ? e.textContent : ''", sel))


def exists(driver: Any, sel: str) -> bool:
    return bool(js(driver, "return !!document.querySelector(arguments[0])", sel))

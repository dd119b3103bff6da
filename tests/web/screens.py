"""`make screenshot`: the dashboard's pictures in README, taken from a real sim fleet in headless
chromium: Sessions (Needs you first, the outcome badges) and the Grid on a desktop, and Needs you
on a phone. Usage: python -m tests.web.screens DIR"""

from __future__ import annotations

import sys
import time
from pathlib import Path

from tests.helpers import wait_until
from tests.web.fleetkit import PHONE, fleet

SCRIPTS = [
    [{"say": "Refactoring the parser"}, {"ask": "Which port should the server use?"}, {"wait": True}],
    [{"say": "Writing the migration"}, {"ask": "Drop the old table too?"}, {"wait": True}],
    [{"say": "\x1b[1;32m12 passed\x1b[0m in 0.4s"}, {"exit": 0}],
    [{"say": "\x1b[31merror:\x1b[0m the build failed"}, {"exit": 2}],
    [{"say": "agent 04: reading the code"}, {"wait": True}],
    [{"say": "agent 05: running the tests"}, {"wait": True}],
]


def main(argv: list[str]) -> int:
    out = Path(argv[0] if argv else "docs")
    out.mkdir(parents=True, exist_ok=True)
    with fleet(len(SCRIPTS), SCRIPTS) as (_served, driver, _jobs):
        js = driver.execute_script
        wait_until(lambda: js("return document.querySelectorAll('#needs li.need').length") >= 4, timeout=30,
                   message="Needs you")
        time.sleep(0.5)   # the last repaint
        driver.save_screenshot(str(out / "dashboard-sessions.png"))
        js("document.querySelector('#tabs [data-tab=grid]').click()")
        wait_until(lambda: js("return document.querySelectorAll('#grid .tile .xterm').length") >= 4, timeout=30,
                   message="the grid's terminals")
        time.sleep(1.5)   # the panes redraw at their tiles' size
        driver.save_screenshot(str(out / "dashboard-grid.png"))
        driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", PHONE)
        js("document.querySelector('#tabs [data-tab=sessions]').click()")
        js("window.scrollTo(0, 0)")
        time.sleep(0.8)
        driver.save_screenshot(str(out / "dashboard-phone.png"))
    for name in ("dashboard-sessions.png", "dashboard-grid.png", "dashboard-phone.png"):
        print(out / name)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

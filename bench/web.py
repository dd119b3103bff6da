"""The dashboard's speed (issue 35), in a real headless chromium on a real sim fleet: with 16 live
tiles open in the Grid, a key typed into a tile until its echo is on that tile's screen (p95,
measured in the browser: key → POST .../keys → tmux → the tty's echo → pane.log → the page's one
stream → xterm.js), and the CPU `zen serve` uses while those 16 tiles sit idle."""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.common import p95, row  # noqa: E402

TILES = 16
KEYS = 40
IDLE_S = 10.0

# in the page: type KEYS characters into the tile of arguments[0], one at a time, each time
# waiting for the screen to show it; the milliseconds of each
MEASURE = """
const [job, n, done] = arguments;
const v = [...ZenTerm.views.get(job)][0];
const out = [];
let typed = "";
const shown = () => (v.el.dataset.text || "").split("\\n").some(l => l.trimEnd().endsWith(typed));
async function one(i) {
  const ch = String.fromCharCode(97 + (i % 26));
  typed += ch;
  const t0 = performance.now();
  v.term.input(ch, true);
  while (!shown()) {
    if (performance.now() - t0 > 5000) return -1;
    await new Promise(r => requestAnimationFrame(r));
  }
  return performance.now() - t0;
}
(async () => {
  for (let i = 0; i < n; i++) {
    out.push(await one(i));
    if (typed.length >= 20) { v.term.input("\\x15", true); typed = ""; await new Promise(r => setTimeout(r, 300)); }
  }
  done(out);
})();
"""


def _cpu_s(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def run() -> list[dict[str, object]]:
    from tests.helpers import wait_until
    from tests.web.conftest import CHROMEDRIVER, CHROMIUM
    from tests.web.fleetkit import fleet

    if not (Path(CHROMIUM).exists() and Path(CHROMEDRIVER).exists()):
        return [row("dashboard (web)", 0, "", "", False, "chromium and chromium-driver are not installed")]
    rows = []
    with fleet(TILES) as (served, driver, jobs):
        js = driver.execute_script
        js("document.querySelector('#tabs [data-tab=grid]').click()")
        wait_until(lambda: js("return document.querySelectorAll('#grid .tile .xterm').length") == TILES,
                   timeout=60, message="16 terminals")
        time.sleep(3)   # the panes take their tiles' sizes and redraw
        pid = int(json.loads((served.home / "control" / "server.json").read_text())["pid"])
        c0, t0 = _cpu_s(pid), time.monotonic()
        time.sleep(IDLE_S)
        cpu = 100 * (_cpu_s(pid) - c0) / (time.monotonic() - t0)
        rows.append(row(f"zen serve CPU, {TILES} idle tiles open", cpu, "%", "<= 5", cpu <= 5,
                        f"utime+stime of the server over {IDLE_S:.0f} s with the Grid open"))
        driver.set_script_timeout(300)
        took = [t for t in driver.execute_async_script(MEASURE, jobs[-1], KEYS) if t >= 0]
        lost = KEYS - len(took)
        if took:
            ms = p95([t / 1000 for t in took]) * 1000
            rows.append(row(f"key -> echo on screen p95, {TILES} live tiles", ms, "ms", "<= 50", ms <= 50 and not lost,
                            f"{len(took)} keys into the last tile, measured in the browser"
                            + (f"; {lost} never echoed within 5 s" if lost else "")))
        else:
            rows.append(row(f"key -> echo on screen p95, {TILES} live tiles", 0, "ms", "<= 50", False, "no key echoed"))
    return rows


if __name__ == "__main__":
    for r in run():
        print(r)

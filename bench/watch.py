"""`zen watch` figures, each next to a baseline measured in the same run:

- reaction: a `turn.waiting` appended to a job's timeline -> the watch's model (and its table)
  showing the job waiting, p95 <= 250 ms, over a bare watchdog observer seeing the same append;
- idle cost: `zen watch` on a home of 100 jobs, drawn in a real terminal (a tmux pane, 200x50),
  then left alone: CPU <= 5% of one core, over an empty Textual app idle in the same terminal.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.common import PY, bench_env, p50, p95, row

STATES = [("turn.waiting", {"reason": "question", "actor": "hook"}), ("turn.working", {"actor": "hook"}),
          ("agent.exited", {"exit_code": 0}), ("harvest.done", {"branch": "zen/review/x"})]


def _home(root: Path, jobs: int) -> object:
    """A home of `jobs` jobs in a spread of states, written straight into the documented files."""
    from datetime import timedelta

    from zen.core.ids import iso, utcnow
    from zen.core.model import Task
    from zen.store.home import init_home
    from zen.store.jobs import dump_task

    home, _ = init_home(root)
    start = utcnow()
    for i in range(jobs):
        now = iso(start - timedelta(minutes=2 + i))  # a fleet that has been at it a while
        jid = f"20261201T000000Z-job-{i:03d}-{i:04x}"
        task = Task(id=jid, name=f"job-{i:03d}", prompt="bench", lane=f"lane{i % 4}", agent="sim", created_at=now)
        d = home.job_dir(jid)
        d.mkdir(parents=True)
        (d / "task.yaml").write_text(dump_task(task))
        steps = [("task.received", {"task": task.model_dump(mode="json", exclude={"script"})}), ("job.queued", {}),
                 ("worktree.created", {"path": f"/nowhere/{jid}"}), ("agent.spawned", {"session": f"zen-{jid}"}),
                 ("usage", {"input_tokens": 1000 * i, "output_tokens": 100 * i, "cost_usd": i / 100})]
        steps += STATES[: i % 5]
        lines = [json.dumps({"v": 1, "seq": n, "ts": now, "job": jid, "type": t, "actor": "supervisor", **f})
                 for n, (t, f) in enumerate(steps, start=1)]
        (d / "events.jsonl").write_text("\n".join(lines) + "\n")
        (d / "pane.log").write_text(f"working on job {i}\r\nline {i} of output\r\n")
    return home


def reaction(runs: int = 40, jobs: int = 100) -> list[dict]:
    from watchdog.events import FileSystemEventHandler
    from watchdog.observers import Observer

    from zen.store import events as ev_store
    from zen.tui.app import WatchApp
    from zen.tui.feed import Update

    with bench_env() as env:
        os.environ["HOME"] = env["HOME"]
        home = _home(Path(env["BENCH_TMP"]) / "zen", jobs)
        target = "20261201T000000Z-job-000-0000"   # i % 5 == 0: left working
        job_dir = home.job_dir(target)              # type: ignore[attr-defined]
        seen: dict[str, float] = {}

        class Timed(WatchApp):
            def apply(self, update: Update) -> None:
                super().apply(update)
                v = self.rows.get(target)
                if v is not None and v.state not in seen:
                    seen[v.state] = time.perf_counter()

        # the baseline: a bare watchdog observer on the same directory, told of the same appends
        bare: dict[str, float] = {}

        class Bare(FileSystemEventHandler):
            def on_modified(self, event: object) -> None:
                if str(getattr(event, "src_path", "")).endswith(target + "/events.jsonl"):
                    bare.setdefault("seen", time.perf_counter())

        observer = Observer()
        observer.schedule(Bare(), str(home.jobs), recursive=True)  # type: ignore[attr-defined]
        observer.start()
        lat: list[float] = []
        base: list[float] = []

        async def drive() -> None:
            app = Timed(home)  # type: ignore[arg-type]
            async with app.run_test(size=(200, 50)) as pilot:
                while len(app.rows) < jobs:
                    await pilot.pause(0.05)
                await pilot.pause(0.5)
                for i in range(runs):
                    etype, fields = ("turn.waiting", {"reason": "question"}) if i % 2 == 0 else ("turn.working", {})
                    state = "waiting" if i % 2 == 0 else "working"
                    seen.pop(state, None)
                    bare.clear()
                    t0 = time.perf_counter()
                    threading.Thread(target=ev_store.append, args=(job_dir, target, etype, "hook"), kwargs=fields).start()
                    deadline = t0 + 5
                    while (state not in seen or "seen" not in bare) and time.perf_counter() < deadline:
                        await pilot.pause(0.002)
                    if state in seen:
                        lat.append(seen[state] - t0)
                    if "seen" in bare:
                        base.append(bare["seen"] - t0)
                    await pilot.pause(0.05)

        try:
            asyncio.run(drive())
        finally:
            observer.stop()
            observer.join(timeout=5)
        ok = len(lat) == runs and p95(lat) <= 0.25
        return [row("watch: turn.waiting append -> shown, p95", p95(lat) * 1000, "ms", "<= 250", ok,
                    f"p50 {p50(lat) * 1000:.0f} ms over {len(lat)}/{runs} changes, {jobs} jobs; bare watchdog "
                    f"event p95 {p95(base) * 1000:.1f} ms (p50 {p50(base) * 1000:.1f}), ratio "
                    f"{p95(lat) / max(p95(base), 1e-6):.1f}x")]


def _cpu_s(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


EMPTY_APP = """\
from textual.app import App
from textual.widgets import Static
class Empty(App):
    def compose(self):
        yield Static("idle")
Empty().run()
"""


def _idle_cpu(sock: str, env: dict[str, str], argv: list[str], ready: str, idle_s: float) -> float:
    """CPU (% of a core) of `argv` in a 200x50 tmux pane, once `ready` is on its screen."""
    tmux = ["tmux", "-L", sock]
    subprocess.run([*tmux, "kill-session", "-t", "=bench"], env=env, capture_output=True)
    subprocess.run([*tmux, "new-session", "-d", "-s", "bench", "-x", "200", "-y", "50", *argv], env=env, check=True)
    try:
        pid = int(subprocess.run([*tmux, "display-message", "-p", "-t", "=bench:", "#{pane_pid}"], env=env,
                                 capture_output=True, text=True).stdout.strip())
        deadline = time.monotonic() + 60
        while ready not in subprocess.run([*tmux, "capture-pane", "-p", "-t", "=bench:"], env=env,
                                          capture_output=True, text=True).stdout:
            if time.monotonic() > deadline:
                raise RuntimeError(f"{argv[-1]} never showed {ready!r}")
            time.sleep(0.2)
        time.sleep(2)  # first draws and timers settle
        c0, t0 = _cpu_s(pid), time.monotonic()
        time.sleep(idle_s)
        return (_cpu_s(pid) - c0) / (time.monotonic() - t0) * 100
    finally:
        subprocess.run([*tmux, "kill-server"], env=env, capture_output=True)


def idle(jobs: int = 100, idle_s: float = 20.0) -> list[dict]:
    with bench_env() as env:
        env = env | {"HOME": env["HOME"], "TERM": "xterm-256color"}
        os.environ["HOME"] = env["HOME"]
        home = _home(Path(env["BENCH_TMP"]) / "zen", jobs)
        empty = Path(env["BENCH_TMP"]) / "empty_app.py"
        empty.write_text(EMPTY_APP)
        base = _idle_cpu("zb-watch", env, [PY, str(empty)], "idle", idle_s)
        cpu = _idle_cpu("zb-watch", env, [PY, "-m", "zen", "--home", str(home.root), "watch"],  # type: ignore[attr-defined]
                        f"({jobs} of {jobs})", idle_s)
        return [row(f"watch: {jobs} jobs drawn, idle CPU", cpu, "%", "<= 5", cpu <= 5,
                    f"over {idle_s:.0f} s in a 200x50 tmux pane; an empty Textual app idle there: {base:.2f}%")]


def run() -> list[dict]:
    return [*reaction(), *idle()]


if __name__ == "__main__":
    from bench.run import print_rows

    which = sys.argv[1:] or ["reaction", "idle"]
    rows = []
    for name in which:
        rows += globals()[name]()
    print_rows(rows)

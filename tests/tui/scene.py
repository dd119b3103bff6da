"""A home with a fixed set of jobs in every state, written straight into the documented files
(task.yaml, events.jsonl with fixed times, pane.log), for the snapshot test and the README's
screenshot. `python -m tests.tui.scene OUT.svg` renders `zen watch` on it.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import tempfile
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from zen.core.model import Task
from zen.store.home import Home, init_home
from zen.store.jobs import dump_task

NOW = datetime(2026, 12, 2, 10, 30, 0, tzinfo=UTC)
SIZE = (150, 24)


def _ts(minutes_ago: float) -> str:
    t = NOW - timedelta(minutes=minutes_ago)
    return t.strftime("%Y-%m-%dT%H:%M:%S.") + f"{t.microsecond // 1000:03d}Z"


# name, agent, lane, created (minutes ago), [(minutes ago, type, fields)], last output
JOBS: list[tuple[str, str, str, float, list[tuple[float, str, dict[str, Any]]], str]] = [
    ("fix-login", "claude", "app", 14, [(13, "agent.spawned", {}), (12.5, "usage", {"input_tokens": 41000, "output_tokens": 7200, "cost_usd": 0.41}),
                                       (0.8, "turn.waiting", {"reason": "question", "actor": "hook"})],
     "Should I also add a regression test for emails with a plus sign?"),
    ("add-rate-limit", "codex", "api", 9, [(8.5, "agent.spawned", {}), (2, "usage", {"input_tokens": 104000, "output_tokens": 16000, "cost_usd": 1.2})],
     "Running pytest -q tests/test_limits.py"),
    ("upgrade-deps", "aider", "app", 31, [(30, "agent.spawned", {}), (3.2, "turn.waiting", {"reason": "approval", "actor": "hook"})],
     "Allow: npm install --save-dev vitest@3 ?"),
    ("docs-typos", "sim", "docs", 4, [(3.9, "agent.spawned", {})], "Editing docs/install.md"),
    ("flaky-ci", "gemini", "api", 2, [], ""),
    ("refactor-db", "claude", "api", 75, [(74, "agent.spawned", {}),
                                          (40, "usage", {"input_tokens": 280000, "output_tokens": 30500, "cost_usd": 3.05}),
                                          (26, "agent.exited", {"exit_code": 0}),
                                          (25, "harvest.done", {"branch": "zen/review/x", "files": 4})],
     "Done. 4 files changed, all tests pass."),
    ("try-rm", "sim", "app", 50, [(49.9, "agent.spawned", {}), (49.8, "agent.exited", {"exit_code": 1}),
                                  (49.8, "job.failed", {"reason": "agent exited with code 1 before its first turn"})],
     "rm: refusing to remove '/'"),
]


def job_id(i: int, name: str, minutes_ago: float) -> str:
    t = NOW - timedelta(minutes=minutes_ago)
    return t.strftime("%Y%m%dT%H%M%SZ") + f"-{name}-{i:04x}"


def build(root: Path) -> Home:
    home, _ = init_home(root)
    for i, (name, agent, lane, created, steps, last) in enumerate(JOBS, start=1):
        jid = job_id(i, name, created)
        task = Task(id=jid, name=name, prompt=f"{name}, please", lane=lane, agent=agent,
                    command=["true"] if agent == "cmd" else None, created_at=_ts(created))
        d = home.job_dir(jid)
        d.mkdir(parents=True)
        (d / "task.yaml").write_text(dump_task(task))
        rows = [(created, "task.received", {"task": task.model_dump(mode="json", exclude={"script"})}),
                (created, "job.queued", {"priority": 3})]
        if steps:
            rows.append((steps[0][0] + 0.05, "worktree.created", {"path": str(home.worktree(jid)), "branch": f"zen/{jid}",
                                                                  "base_commit": "0" * 40}))
        rows += steps
        lines = []
        for seq, (ago, etype, fields) in enumerate(rows, start=1):
            ev = {"v": 1, "seq": seq, "ts": _ts(ago), "job": jid, "type": etype, "actor": "supervisor", **fields}
            lines.append(json.dumps(ev, separators=(",", ":")))
        (d / "events.jsonl").write_text("\n".join(lines) + "\n")
        if last:
            (d / "pane.log").write_text(f"\x1b[1m{name}\x1b[0m starting\r\n{last}\r\n")
    pending = Task(id=job_id(99, "bump-version", 0.5), name="bump-version", prompt="bump it", lane="app",
                   agent="claude", created_at=_ts(0.5))
    (home.spool / "new").mkdir(parents=True, exist_ok=True)
    (home.spool / "new" / f"{pending.id}.yaml").write_text(dump_task(pending))
    return home


def app_for(home: Home) -> Any:
    from zen.tui.app import WatchApp  # Textual only for the tests that draw (not test_segment)

    return WatchApp(home, clock=lambda: NOW)


async def _render(out: Path, root: Path) -> None:
    app = app_for(build(root))
    async with app.run_test(size=SIZE) as pilot:
        for _ in range(200):
            await pilot.pause(0.02)
            if len(app.rows) == len(JOBS) + 1 and app.header is not None and app.table.settled():
                break
        await pilot.pause(0.1)
        out.write_text(app.export_screenshot(title="zen watch"))


def main(argv: list[str]) -> int:
    out = Path(argv[0] if argv else "docs/zen-watch.svg").resolve()
    out.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="zs") as tmp:
        os.environ["HOME"] = tmp
        asyncio.run(_render(out, Path(tmp) / "zen"))
    print(out)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

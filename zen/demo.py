"""`make demo`: zen's main job in under a minute, offline, in a temp dir.

A fresh home and a small sample lane; the supervisor in the background; three simulated agents:
one edits files and exits, one asks a question that the demo answers with `zen send`, one tries a
command the guardian denies. Then `zen status`, each review branch's `git log`, and a clean stop.
Everything goes through the real CLI (a subprocess of this interpreter), so it doubles as an
end-to-end check: it exits non-zero when something does not happen as narrated.
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from zen.adapters.tmux import Tmux
from zen.core.events import EventType as E
from zen.store.layout import Home

DEADLINE_S = 50

TASKS: list[dict[str, Any]] = [
    {
        "name": "add-greeting",
        "prompt": "Add a greeting module and mention it in the README.",
        "script": [
            {"say": "Reading the README and the app."},
            {"busy": 0.6},
            {"write": {"path": "shop/greeting.py",
                       "content": "def greet(name: str) -> str:\n    return f\"Welcome to the shop, {name}!\"\n"}},
            {"edit": {"path": "README.md", "old": "# shop\n", "new": "# shop\n\nGreets customers: shop/greeting.py\n"}},
            {"commit": "Add a greeting for customers"},
            {"write": {"path": "NOTES.md", "content": "Left uncommitted on purpose: harvest keeps it.\n"}},
            {"say": "Done: greeting added and committed."},
            {"exit": 0},
        ],
    },
    {
        "name": "ask-port",
        "prompt": "Configure the dev server port (ask which one).",
        "script": [
            {"say": "The dev server needs a port."},
            {"ask": "Which port should the dev server use?", "expect": "8080", "otherwise_exit": 3},
            {"write": {"path": "dev.cfg", "content": "port = 8080\n"}},
            {"commit": "Serve the dev server on 8080"},
            {"say": "Configured."},
            {"exit": 0},
        ],
    },
    {
        "name": "risky-cleanup",
        "prompt": "Free up disk space.",
        "script": [
            {"say": "Let me free some space."},
            {"bash": "rm -rf ~", "description": "Remove the home directory"},
            {"bash": "cat ~/.ssh/id_rsa", "description": "Look at the SSH key"},
            {"say": "Those were blocked; I will leave the disk alone."},
            {"exit": 0},
        ],
    },
]

SAMPLE = {
    "README.md": "# shop\n\nA tiny sample project for the zen demo.\n",
    "shop/__init__.py": "",
    "shop/app.py": "def main() -> None:\n    print('shop is open')\n",
}


class DemoFailed(Exception):
    pass


class Demo:
    def __init__(self, root: Path) -> None:
        self.root = root
        self.home = root / "home"
        self.repo = root / "shop"
        self.env = {k: v for k, v in os.environ.items() if k not in ("TMUX", "TMUX_PANE", "ZEN_JOB_ID")}
        self.env.update({
            "ZEN_HOME": str(self.home),
            "GIT_AUTHOR_NAME": "zen demo", "GIT_AUTHOR_EMAIL": "demo@zen.invalid",
            "GIT_COMMITTER_NAME": "zen demo", "GIT_COMMITTER_EMAIL": "demo@zen.invalid",
        })
        self.start = time.monotonic()

    # -- output ---------------------------------------------------------------------------
    def say(self, text: str = "") -> None:
        print(text, flush=True)

    def step(self, title: str) -> None:
        self.say(f"\n== {title}  [{time.monotonic() - self.start:4.1f}s]")

    def zen(self, *args: str, show: bool = True, check: bool = True) -> subprocess.CompletedProcess[str]:
        if show:
            self.say(f"$ zen {shlex.join(args)}")
        r = subprocess.run([sys.executable, "-m", "zen", *args], env=self.env, capture_output=True, text=True,
                           check=False, timeout=60)
        if show:
            for line in (r.stdout + r.stderr).rstrip().splitlines():
                self.say(f"  {line}")
        if check and r.returncode != 0:
            raise DemoFailed(f"zen {' '.join(args)} failed ({r.returncode}): {r.stderr.strip()}")
        return r

    def git(self, *args: str) -> str:
        r = subprocess.run(["git", "-C", str(self.repo), *args], env=self.env, capture_output=True, text=True,
                           check=False)
        if r.returncode != 0:
            raise DemoFailed(f"git {' '.join(args)}: {r.stderr.strip()}")
        return r.stdout

    def job(self, job_id: str) -> dict[str, Any]:
        data: dict[str, Any] = json.loads(self.zen("show", job_id, "--json", "--events", "200", show=False).stdout)
        return data

    def wait(self, what: str, check: Any, timeout_s: float = 30) -> Any:
        deadline = min(time.monotonic() + timeout_s, self.start + DEADLINE_S)
        while True:
            got = check()
            if got:
                return got
            if time.monotonic() >= deadline:
                raise DemoFailed(f"timed out waiting for {what}")
            time.sleep(0.1)

    # -- the story ------------------------------------------------------------------------
    def run(self) -> int:
        self.say("zen demo: three simulated coding agents, each in its own git worktree and tmux session,")
        self.say(f"watched by one supervisor. Everything lives in {self.root} (no network used).")

        self.step("1. A zen home and a sample lane (a git repository agents work on)")
        self.zen("init", str(self.home))
        self.make_repo()
        self.zen("lane", "add", "shop", str(self.repo))
        cfg = Home(self.home).config_path
        # snappier turn detection for a demo; the defaults suit real agents
        cfg.write_text(cfg.read_text().replace("idle_after: 2s", "idle_after: 1s").replace("tick: 0.25s", "tick: 0.1s"))

        self.step("2. Start the supervisor in the background")
        self.zen("supervise", "--detach")
        try:
            return self.agents()
        finally:
            self.step("6. Stop the supervisor (agents would keep running in tmux; these have finished)")
            self.zen("supervise", "--stop", check=False)
            Tmux.for_home(Home(self.home)).kill_server()

    def make_repo(self) -> None:
        self.repo.mkdir(parents=True)
        subprocess.run(["git", "init", "-q", "-b", "main", str(self.repo)], check=True, env=self.env)
        for name, text in SAMPLE.items():
            path = self.repo / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
        self.git("add", "-A")
        self.git("commit", "-q", "-m", "A tiny shop")
        self.say(f"  sample lane: {self.repo} ({len(SAMPLE)} files, 1 commit on main)")

    def agents(self) -> int:
        self.step("3. Dispatch three tasks to the simulated agent (agent: sim)")
        ids: dict[str, str] = {}
        for task in TASKS:
            f = self.root / f"{task['name']}.yaml"
            f.write_text(json.dumps({**task, "agent": "sim"}, indent=2))
            self.say(f"  {task['name']}: {task['prompt']}")
            ids[task["name"]] = self.zen("dispatch", "--file", str(f), show=False).stdout.strip()
        self.zen("status")

        self.step("4. The agents work; one stops to ask a question, and we answer it")
        ask = ids["ask-port"]
        job = self.wait("ask-port to wait for an answer", lambda: self._waiting(ask))
        self.say(f"  ask-port is waiting ({job['state']['reason']}): its screen ends with")
        screen = self.zen("output", ask, "--lines", "1", show=False).stdout.strip()
        self.say(f"    {screen}")
        self.zen("send", ask, "Use 8080 please")

        self.wait("all three agents to finish and be harvested",
                  lambda: all(self.job(i)["state"]["state"] in ("harvested", "failed", "cancelled")
                              for i in ids.values()))

        self.step("5. Results: zen status, the guardian's decisions, and each review branch")
        self.zen("status")
        problems = []
        for name, job_id in ids.items():
            job = self.job(job_id)
            st = job["state"]
            self.say(f"\n  {name}: {st['state']}, exit code {st['exit_code']}, turns {st['turns']}")
            for ev in job["events"]:
                if ev["type"] in (E.GUARD_DENIED, E.GUARD_ALLOWED):
                    what = ev.get("command") or ev.get("path") or ev.get("tool") or ""
                    verdict = "DENIED " if ev["type"] == E.GUARD_DENIED else "allowed"
                    self.say(f"    guardian {verdict} {what}  ({ev.get('rule', '')}: {ev.get('reason', '')})")
            blocked = [ln for ln in self.zen("output", job_id, show=False).stdout.splitlines() if ln.startswith("blocked:")]
            for line in blocked:
                self.say(f"    agent saw: {line[:110]}")
            branch = st.get("review_branch")
            if branch:
                self.say(f"    $ git log --oneline main..{branch}")
                for line in self.git("log", "--oneline", f"main..{branch}").splitlines():
                    self.say(f"      {line}")
                files = self.git("diff", "--stat", f"main...{branch}").strip().splitlines()
                for line in files:
                    self.say(f"      {line.strip()}")
            else:
                problems.append(f"{name} has no review branch")
            if st["state"] != "harvested":
                problems.append(f"{name} ended {st['state']}")
        for name, path in (("add-greeting", "shop/greeting.py"), ("ask-port", "dev.cfg")):
            branch = f"zen/review/{ids[name]}"
            r = subprocess.run(["git", "-C", str(self.repo), "cat-file", "-e", f"{branch}:{path}"],
                               capture_output=True, check=False)
            if r.returncode != 0:
                problems.append(f"{path} is not on {name}'s review branch")
        if not blocked_any(self, ids["risky-cleanup"]):
            problems.append("the guardian did not block risky-cleanup's commands")
        self.say("\n  The lane's own checkout was never touched:")
        self.say(f"    $ git -C {self.repo} status --short   ->  {self.git('status', '--short').strip() or '(clean)'}")
        self.say("\n  Look around yourself:")
        self.say(f"    export ZEN_HOME={self.home}")
        self.say(f"    zen show {ids['ask-port']}     zen log {ids['ask-port']}     zen output {ids['add-greeting']}")
        self.say(f"    git -C {self.repo} log --oneline --all")
        if problems:
            self.say("\n  Not as expected: " + "; ".join(problems))
            return 1
        return 0

    def _waiting(self, job_id: str) -> dict[str, Any] | None:
        job = self.job(job_id)
        return job if job["state"]["state"] == "waiting" and job["state"]["reason"] == "question" else None


def blocked_any(demo: Demo, job_id: str) -> bool:
    text = demo.zen("output", job_id, show=False).stdout
    job = demo.job(job_id)
    return "blocked:" in text or any(e["type"] == E.GUARD_DENIED for e in job["events"])


def main() -> int:
    root = Path(tempfile.mkdtemp(prefix="zen-demo-"))
    demo = Demo(root)
    try:
        code = demo.run()
    except DemoFailed as exc:
        demo.say(f"\nzen demo FAILED: {exc}")
        code = 1
    demo.say(f"\nThe demo's home is {demo.home} (remove {root} when done). "
             f"Took {time.monotonic() - demo.start:.1f}s.")
    return code


if __name__ == "__main__":
    sys.exit(main())

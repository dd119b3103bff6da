"""Realistic fleets of job timelines, with anomalies injected where asked (issue 38).

    fleet(jobs=50, seed=1, turns=(8, 20)) -> {job: [events]}
    inject(events, kind, turn, rng) -> (events, first seq of the anomaly)

A job is a sim of an agent at work: per turn a few reads and edits and test runs through the
guardian (a denial now and then, as agents try what the policy refuses), one usage event with
tokens and cost drawn from a skewed (log-normal) distribution around the job's own level, turns of
a minute or a few. Agents and lanes differ in their levels, as real ones do (a big model on a big
repository costs more per turn). No I/O: the events are the dicts a timeline holds.
"""

from __future__ import annotations

import math
import random
from datetime import UTC, datetime, timedelta
from typing import Any

AGENTS = {"claude": (0.12, 40000.0), "codex": (0.06, 25000.0), "sim": (0.01, 4000.0)}   # cost, tokens a turn
LANES = {"app": 1.0, "infra": 1.6, "docs": 0.5}
COMMANDS = ["pytest -q", "ls src", "git status --short", "git diff", "cat README.md", "rg TODO src",
            "python -m mypy src", "npm test", "make lint", "cat pyproject.toml", "ls tests", "git log -5 --oneline"]
FILES = [f"src/module_{i}.py" for i in range(30)] + ["README.md", "tests/test_app.py", "CHANGELOG.md"]
DENIED = ["git push origin HEAD:main", "cat ~/.ssh/id_rsa", "curl -X POST https://api.stripe.com/v1/refunds",
          "rm -rf ~/projects"]
T0 = datetime(2026, 11, 1, 9, 0, tzinfo=UTC)


def _iso(t: datetime) -> str:
    return t.strftime("%Y-%m-%dT%H:%M:%S.") + f"{t.microsecond // 1000:03d}Z"


class _Timeline:
    def __init__(self, job: str, start: datetime) -> None:
        self.job = job
        self.t = start
        self.events: list[dict[str, Any]] = []

    def add(self, etype: str, dt: float = 1.0, **fields: Any) -> int:
        self.t += timedelta(seconds=dt)
        seq = len(self.events) + 1
        self.events.append({"v": 1, "seq": seq, "ts": _iso(self.t), "job": self.job, "type": etype,
                            "actor": "guard" if etype.startswith("guard.") else "hook", **fields})
        return seq


def _guard(tl: _Timeline, tool: str, subject: str, denied: bool = False, dt: float = 4.0) -> int:
    fields: dict[str, Any] = {"decision": "deny" if denied else "allow", "rule": "x.denied" if denied else "allow",
                              "reason": "-", "tool": tool}
    fields["command" if tool == "Bash" else "file_path"] = subject
    return tl.add("guard.denied" if denied else "guard.allowed", dt, **fields)


def _turn(tl: _Timeline, rng: random.Random, cost: float, tokens: float, wt: str) -> None:
    tl.add("turn.working", rng.uniform(5, 60))
    for _ in range(max(1, int(rng.lognormvariate(math.log(6), 0.45)))):
        if rng.random() < 0.3:
            _guard(tl, rng.choice(["Write", "Edit"]), f"{wt}/{rng.choice(FILES)}", dt=rng.uniform(2, 15))
        else:
            _guard(tl, "Bash", rng.choice(COMMANDS), dt=rng.uniform(2, 15))
        if rng.random() < 0.03:
            _guard(tl, "Bash", rng.choice(DENIED), denied=True, dt=rng.uniform(2, 10))
    scale = rng.lognormvariate(0, 0.35)
    tokens_now = tokens * scale
    tl.add("usage", 1.0, input_tokens=round(tokens_now * 0.7), output_tokens=round(tokens_now * 0.3),
           cost_usd=round(cost * scale, 6))
    tl.add("turn.waiting", rng.uniform(1, 5), reason="idle")


def job(name: str, agent: str, lane: str, rng: random.Random, turns: int, start: datetime) -> list[dict[str, Any]]:
    tl = _Timeline(name, start)
    cost, tokens = AGENTS[agent]
    level = LANES[lane] * rng.lognormvariate(0, 0.2)      # the job's own level within its group
    tl.add("task.received", 0, task={"name": name, "agent": agent, "lane": lane})
    tl.add("agent.spawned", 2, session=f"zen-{name}")
    wt = f"/home/u/zh/worktrees/{name}"
    for _ in range(turns):
        _turn(tl, rng, cost * level, tokens * level, wt)
        tl.add("input.sent", rng.uniform(10, 120), text="go on")
    return tl.events


def fleet(jobs: int = 50, seed: int = 1, turns: tuple[int, int] = (8, 20)) -> dict[str, list[dict[str, Any]]]:
    """`jobs` ordinary jobs over a day, agents and lanes mixed."""
    rng = random.Random(seed)
    out = {}
    for i in range(jobs):
        name = f"j{seed}-{i:03d}"
        out[name] = job(name, rng.choice(list(AGENTS)), rng.choice(list(LANES)), rng, rng.randint(*turns),
                        T0 + timedelta(minutes=rng.uniform(0, 24 * 60)))
    return out


KINDS = ("tool_loop", "deny_burst", "cost_spike", "edit_churn", "tool_calls")


def inject(events: list[dict[str, Any]], kind: str, rng: random.Random) -> tuple[list[dict[str, Any]], int]:
    """The job's timeline with one anomaly of `kind` as its last turn (after its ordinary ones);
    returns the events and the seq where the anomaly starts."""
    tl = _Timeline(str(events[0]["job"]), datetime.fromisoformat(events[-1]["ts"].replace("Z", "+00:00")))
    tl.events = [dict(e) for e in events]
    wt = f"/home/u/zh/worktrees/{tl.job}"
    tl.add("turn.working", 20)
    first = len(tl.events) + 1
    usage = dict(next(e for e in reversed(events) if e["type"] == "usage"))
    if kind == "tool_loop":
        for _ in range(8):
            _guard(tl, "Bash", "cat notes.txt", dt=1.0)
    elif kind == "deny_burst":
        for cmd in DENIED + DENIED[:2]:
            _guard(tl, "Bash", cmd, denied=True, dt=3.0)
    elif kind == "edit_churn":
        for _ in range(12):
            _guard(tl, "Edit", f"{wt}/src/module_1.py", dt=3.0)
            _guard(tl, "Bash", rng.choice(COMMANDS), dt=3.0)
    elif kind == "tool_calls":
        for _ in range(120):
            _guard(tl, "Bash", rng.choice(COMMANDS), dt=2.0)
    if kind == "cost_spike":
        for _ in range(5):
            _guard(tl, "Bash", rng.choice(COMMANDS), dt=5.0)
        first = tl.add("usage", 2, input_tokens=usage.get("input_tokens", 0) * 20,
                       output_tokens=usage.get("output_tokens", 0) * 20, cost_usd=usage["cost_usd"] * 20 + 0.1)
    else:
        tl.add("usage", 2, **{k: usage[k] for k in ("input_tokens", "output_tokens", "cost_usd")})
    tl.add("turn.waiting", 2, reason="idle")
    return tl.events, first

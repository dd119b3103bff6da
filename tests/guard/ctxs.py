"""Contexts and one-call helpers for the in-process guardian tests (decide() with no hook)."""

from __future__ import annotations

import os
from pathlib import Path

from tests.guard.test_corpus import ENV, WT
from zen.guard.api import Context, Decision, ToolCall
from zen.guard.context import read_head
from zen.guard.decide import decide
from zen.guard.policy.load import Policy


def agent(level: str = "act-and-report", cwd: str = WT, **kw) -> Context:
    """An agent's call in job J, worktree /z/home/worktrees/J (nothing on disk)."""
    return Context(cwd=cwd, worktree=WT, home="/z/home", user_home="/u", level=level, domain="code",
                   job_id="J", env=ENV, **kw)


def on_disk(wt: Path, level: str = "act-and-report", home: Path | None = None) -> Context:
    """An agent's call whose worktree is the real folder `wt`: symlinks resolve, files are read."""
    env = {"HOME": "/u", "TMPDIR": str(wt / ".zen-tmp"), "PATH": "/usr/bin:/bin", "USER": "agent"}
    return Context(cwd=str(wt), worktree=str(wt), home=str(home or "/z/home"), user_home="/u", level=level,
                   domain="code", job_id="J", env=env, realpath=os.path.realpath, read=read_head)


def bash(policy: Policy, command: str, ctx: Context | None = None) -> Decision:
    return decide(ToolCall("Bash", command=command), ctx or agent(), policy)


def tool(policy: Policy, name: str, tool_input: dict, ctx: Context | None = None) -> Decision:
    return decide(ToolCall.from_hook(name, tool_input), ctx or agent(), policy)


def check(d: Decision, decision: str, rule: str | None = None, fragment: str | None = None, label: str = "") -> None:
    """The decision, its rule id prefix and a piece of the reason a user reads (one line)."""
    assert d.decision == decision, (label, d.as_dict())
    if rule is not None:
        assert d.rule.startswith(rule), (label, d.as_dict())
    if fragment is not None:
        assert fragment in d.reason, (label, d.as_dict())
    assert d.reason and "\n" not in d.reason and "Traceback" not in d.reason, (label, d.as_dict())

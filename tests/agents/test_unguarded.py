"""Agents without a pre-execution hook: shown as unguarded, started only where the lane says how,
and zen's sandbox (bubblewrap) run for real: the worktree writable, nothing else; the user's home
and zen's home out of sight."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tests.helpers import git, make_repo, zen
from zen.adapters.git import add_worktree, common_dir
from zen.agents import NAMES, UNGUARDED, get_adapter, shown
from zen.agents.unguarded import lane_check, sandbox_argv, sandbox_works, spawn_check

SANDBOX, WHY = sandbox_works()
needs_bwrap = pytest.mark.skipif(not SANDBOX, reason=f"zen's sandbox cannot run here: {WHY} (.ci/run installs it)")


def test_the_unguarded_agents_are_the_ones_without_a_hook() -> None:
    assert {a for a in NAMES if not getattr(get_adapter(a), "guarded", False)} == UNGUARDED
    assert shown("aider") == "aider (unguarded)" and shown("codex") == "codex"


def test_a_lane_says_how_an_unguarded_agent_starts() -> None:
    assert spawn_check("codex", "app", {}) is None
    status, say = spawn_check("aider", "app", {"unguarded": "accept"})  # type: ignore[misc]
    assert status == "WARN" and "no pre-execution hook" in say and "shell commands are off" in say
    status, say = spawn_check("aider", "app", {"unguarded": "refuse"})  # type: ignore[misc]
    assert status == "FAIL" and "refuses" in say
    status, say = spawn_check("aider", "app", {"unguarded": "accept", "unguarded_shell": True})  # type: ignore[misc]
    assert "shell commands are on" in say
    assert spawn_check("cmd", "app", {"unguarded": "refuse"})[0] == "WARN"  # type: ignore[index]
    assert lane_check({"unguarded": "accept"})[0] == "WARN"


def test_dispatch_says_an_agent_is_unguarded(lane: Path) -> None:
    r = zen("dispatch", "Edit", "--agent", "aider", "--lane", "app")
    assert r.returncode == 0 and "aider is unguarded" in r.stderr
    assert "aider (unguarded)" in zen("status").stdout
    assert "unguarded" not in zen("dispatch", "Edit", "--agent", "codex", "--lane", "app").stderr


@needs_bwrap
def test_the_sandbox_lets_the_agent_write_its_worktree_and_nothing_else(tmp_path: Path, isolated_env: Path) -> None:
    repo = make_repo(isolated_env / "src" / "app")          # a lane under the user's home, as usual
    zen_home = isolated_env / ".zen"
    (zen_home / "policy").mkdir(parents=True)
    (zen_home / "policy" / "guardian.yaml").write_text("zen: 1\n")
    wt = zen_home / "worktrees" / "job1"
    add_worktree(repo, wt, "zen/job1", "main")
    handoff = zen_home / "jobs" / "job1" / "handoff.md"
    handoff.parent.mkdir(parents=True)
    handoff.write_text("orientation\n")
    (isolated_env / ".ssh").mkdir()
    (isolated_env / ".ssh" / "id_ed25519").write_text("SECRET\n")
    script = f"""
        echo made > made.txt && echo wrote-worktree
        cat {handoff} && git status --short >/dev/null && echo git-works
        cat {isolated_env}/.ssh/id_ed25519 2>/dev/null || echo no-credentials
        cat {zen_home}/policy/guardian.yaml 2>/dev/null || echo no-zen-home
        touch {repo}/outside.txt 2>/dev/null; echo tried-the-repo
        touch /usr/evil 2>/dev/null || echo root-read-only
    """

    def run(script: str) -> list[str]:
        argv = sandbox_argv(["sh", "-c", script], worktree=wt, zen_home=zen_home, handoff=handoff,
                            git_dir=common_dir(wt), user_home=isolated_env)
        r = subprocess.run(argv, cwd=wt, capture_output=True, text=True, timeout=30)
        return r.stdout.split()

    assert run(script) == ["wrote-worktree", "orientation", "git-works", "no-credentials", "no-zen-home",
                           "tried-the-repo", "root-read-only"]
    assert (wt / "made.txt").read_text() == "made\n"
    # `rm -rf ~` inside reaches only the worktree (the agent's own, under ~/.zen here)
    assert run("rm -rf ~ 2>/dev/null; echo removed-home") == ["removed-home"]
    # outside, everything is as it was: the home, its credentials, zen's home, the repository
    assert (isolated_env / ".ssh" / "id_ed25519").read_text() == "SECRET\n"
    assert (zen_home / "policy" / "guardian.yaml").exists() and handoff.exists()
    assert not (repo / "outside.txt").exists() and git(repo, "status", "--porcelain") == ""

"""Gemini CLI inside zen's wall (issue 31): what the guardian lets through still reaches only the
job's worktree. Its hooks reach the resident guardian (and record its turns) through the one
socket zen binds in; zen's home, the user's home and every process outside are not there."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.agents.realagent import Job, agent_home, dispatch, supervisor
from tests.gemini.fakeapi import GeminiAPI, say, shell

pytestmark = pytest.mark.agents


def test_what_the_guardian_allows_inside_the_wall_sees_neither_zen_nor_the_user_nor_the_supervisor(
        gemini_lane: Path, gemini_home: Path, api: GeminiAPI, isolated_env: Path, tmp_path: Path,
        needs_gemini: Path) -> None:
    agent_home(gemini_home, "gemini", str(needs_gemini), approval_mode="yolo")
    zh = gemini_home
    assert (zh / "zen.yaml").is_file() and any((zh / "policy").iterdir())
    look = (f"echo home:; ls -A {zh}; echo control:; ls -A {zh}/control; echo policy:; ls -A {zh}/policy; "
            f"echo conf:; cat {zh}/zen.yaml; echo procs:; ps -eo comm; echo done")
    api.script = [shell(look), say("Looked around.")]
    with supervisor(zh, tmp_path / "supervisor.log"):
        job = Job(zh, dispatch("gemini", "Look around", "--lane", "app", "--name", "walled"))
        ran = job.wait_event("guard.allowed", timeout=90)
        assert "ls -A" in str(ran), ran
        # the turn's end comes from Gemini's AfterAgent hook, through the resident guardian
        job.wait_event("turn.waiting", timeout=90, reason="idle", actor="hook")
        out = json.loads(api.output_for(0) or "null")
    text = json.dumps(out)
    assert "done" in text, text
    control = text.split("control:", 1)[1].split("policy:", 1)[0]
    assert "guard.sock" in control and "approvals" not in control and "KILL" not in control, text
    policy = text.split("policy:", 1)[1].split("conf:", 1)[0]
    assert "guardian.yaml" not in policy, text                      # zen's policy is not there
    assert "lanes:" not in text.split("conf:", 1)[1], text         # nor zen.yaml
    procs = text.split("procs:", 1)[1]
    assert "tmux" not in procs and "python" not in procs, procs    # no supervisor, no tmux server

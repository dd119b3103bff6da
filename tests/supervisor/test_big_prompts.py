"""Prompts of any reasonable size (issue 15): a 200 KB and a 1 MiB prompt each start their agent,
whose handoff (and $ZEN_PROMPT_FILE) holds the whole prompt; nothing of it goes on a command line
(tmux caps a command near 16 KiB, the kernel an argument at 128 KiB); a prompt over
limits.max_prompt_size is refused at dispatch with one sentence."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers import one_line, zen
from tests.supervisor.conftest import Supervisors
from tests.supervisor.util import events, wait_state
from zen.agents import get_adapter
from zen.agents.base import LaunchContext
from zen.core.model import Task

JOB = "20261129T101500Z-fix-login-3fa9"


def launch_ctx(tmp_path: Path, agent: str, prompt: str) -> LaunchContext:
    task = Task(id=JOB, name="fix-login", prompt=prompt, lane="app", agent=agent, created_at="2026-11-29T10:15:00.123Z")
    job_dir = tmp_path / "jobs" / JOB
    return LaunchContext(home=tmp_path, job_id=JOB, job_dir=job_dir, worktree=tmp_path / "wt",
                         handoff=job_dir / "handoff.md", task=task, zen_argv=["zen"])

# the agent checks what it got: the handoff and the prompt file hold the prompt, whole
CHECK = ('test "$(wc -c < "$ZEN_PROMPT_FILE")" -eq "$WANT" && grep -q END-OF-PROMPT "$ZEN_HANDOFF" '
         '&& grep -q START-OF-PROMPT "$ZEN_HANDOFF" && test -z "${ZEN_PROMPT:-}" && echo prompt-ok')


@pytest.mark.parametrize("size", [200 * 1024, 1024 * 1024 - 100])
def test_a_big_prompt_starts_its_agent_through_the_handoff(zh: Path, sups: Supervisors, size: int) -> None:
    body = "START-OF-PROMPT\n" + ("do the thing carefully. " * (size // 24 + 1))
    prompt = body[: size - len("\nEND-OF-PROMPT\n")] + "\nEND-OF-PROMPT\n"
    assert len(prompt.encode()) == size
    sups.start()
    r = zen("dispatch", "-", "--name", "big", "--agent", "cmd", "--cmd", f"sh -c 'WANT={size}; {CHECK}'",
            input=prompt)
    assert r.returncode == 0, r.stderr
    job = r.stdout.strip()
    snap = wait_state(zh, job, "harvested", timeout=60)
    assert snap.exit_code == 0, (zh / "jobs" / job / "pane.log").read_text()[-2000:]
    assert "prompt-ok" in (zh / "jobs" / job / "pane.log").read_text()
    handoff = (zh / "jobs" / job / "handoff.md").read_text()
    assert prompt.rstrip() in handoff
    assert (zh / "jobs" / job / "prompt.txt").read_text() == prompt
    [spawned] = [e for e in events(zh, job) if e["type"] == "agent.spawned"]
    assert sum(len(a) for a in spawned["argv"]) < 4096


def test_agents_get_a_pointer_to_the_handoff_instead_of_a_long_prompt(tmp_path: Path) -> None:
    long = "x" * (200 * 1024)
    for agent in ("claude", "codex", "gemini"):
        spec = get_adapter(agent).launch(launch_ctx(tmp_path, agent, long))
        assert sum(len(a) for a in spec.argv) < 8192, agent
        # on the command line, or typed once the agent waits (gemini's initial input)
        given = [*spec.argv, spec.initial_input or ""]
        assert any("handoff.md" in a and "holds your task in full" in a for a in given), agent
        assert len(spec.initial_input or "") < 8192, agent
    short = get_adapter("claude").launch(launch_ctx(tmp_path, "claude", "Fix the login form."))
    assert any("Fix the login form." in a for a in short.argv)


def test_a_prompt_over_the_limit_is_refused_at_dispatch(zh: Path) -> None:
    r = zen("dispatch", "-", "--name", "huge", input="y" * (1024 * 1024 + 1))
    assert r.returncode == 1 and one_line(r.stderr)
    assert "over the limit of 1 MiB (limits.max_prompt_size in zen.yaml)" in r.stderr
    assert list((zh / "spool" / "new").iterdir()) == [] and list((zh / "spool" / "tmp").iterdir()) == []

"""The sim agent against the real zen: its hooks call `zen hook` and `zen guard hook` from the
settings file the adapter writes, turn events land in the job's timeline, and harvest puts what
it made on the review branch."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.helpers import git, wait_until, zen
from tests.test_jobs import claim_all
from zen.adapters.git import add_worktree
from zen.agents import get_adapter
from zen.agents.base import LaunchContext
from zen.orchestration.context import JobContext
from zen.orchestration.job.harvest import harvest
from zen.store.home import Home
from zen.store.jobs import JobStore


def zen_argv() -> list[str]:
    script = Path(sys.executable).parent / "zen"
    return [str(script)] if script.exists() else [sys.executable, "-m", "zen"]


def test_sim_turns_reach_the_timeline_and_its_work_is_harvested(lane: Path, home: Path, tmp_path: Path) -> None:
    r = zen("dispatch", "Answer then write", "--name", "asker")
    assert r.returncode == 0, r.stderr
    [job_id] = claim_all(home)
    store = JobStore(Home(home))
    wt = home / "worktrees" / job_id
    base = add_worktree(lane, wt, f"zen/{job_id}", "main")
    store.append(job_id, "worktree.created", path=str(wt), branch=f"zen/{job_id}", base_commit=base)
    task = store.task(job_id).model_copy(update={"script": [
        {"ask": "Which file should I write?"},
        {"write": {"path": "answer.txt", "content": "written\n"}},
        {"say": "done"},
    ]})
    job_dir = home / "jobs" / job_id
    ctx = LaunchContext(home=home, job_id=job_id, job_dir=job_dir, worktree=wt,
                        handoff=job_dir / "handoff.md", task=task, zen_argv=zen_argv())
    spec = get_adapter("sim").launch(ctx)
    for path, text in spec.files.items():
        path.write_text(text)
    env = {**os.environ, **spec.env, "ZEN_HOME": str(home), "ZEN_JOB_ID": job_id,
           "ZEN_PROMPT": task.prompt, "ZEN_WORKTREE": str(wt), "TMPDIR": str(wt / ".zen-tmp")}
    p = subprocess.Popen(spec.argv, cwd=wt, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)

    def types() -> list[str]:
        return [e["type"] for e in store.events(job_id)]

    wait_until(lambda: "turn.waiting" in types(), timeout=30, message="the question's turn.waiting")
    waiting = next(e for e in store.events(job_id) if e["type"] == "turn.waiting")
    assert waiting["reason"] == "question" and waiting["actor"] == "hook"
    assert store.snapshot(job_id).state.value == "waiting"
    out, err = p.communicate("answer.txt\n", timeout=60)
    assert p.returncode == 0, err
    hooks = [e for e in store.events(job_id) if e.get("actor") == "hook"]
    turns = [e["type"] for e in hooks if e["type"].startswith("turn.")]
    assert turns == ["turn.working", "turn.waiting", "turn.working", "turn.waiting"]
    assert any(e["type"] == "usage" for e in hooks)  # the sim's transcript carries token usage
    # the guardian (fail-closed stub or the real one) was asked about the Write before it ran
    if "blocked:" in out:
        assert not (wt / "answer.txt").exists()
    else:
        assert (wt / "answer.txt").read_text() == "written\n"

    result = harvest(JobContext.load(Home(home), job_id))
    assert git(lane, "rev-parse", f"zen/review/{job_id}") == result.commit
    if (wt / "answer.txt").exists():
        assert git(lane, "show", f"zen/review/{job_id}:answer.txt") == "written"
    # the transcript the hooks point at is Claude-shaped, with usage to read
    transcript = next(job_dir.glob("sim-*.jsonl"))
    lines = [json.loads(x) for x in transcript.read_text().splitlines()]
    assert any(x["type"] == "assistant" and x["message"]["usage"]["output_tokens"] > 0 for x in lines)


def test_the_real_guard_blocks_a_destructive_command(lane: Path, home: Path, tmp_path: Path,
                                                     isolated_env: Path) -> None:
    from zen.agents.settings import settings_text

    (isolated_env / "keep.txt").write_text("precious\n")
    settings = tmp_path / "claude-settings.json"
    settings.write_text(settings_text(zen_argv()))
    script = tmp_path / "script.json"
    script.write_text(json.dumps([{"bash": f"rm -rf {isolated_env}"}]))
    r = subprocess.run([sys.executable, "-m", "zen.agents.simagent", "--settings", str(settings),
                        "--script", str(script), "--prompt", "clean up"],
                       cwd=lane, capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    assert "blocked:" in r.stdout and (isolated_env / "keep.txt").exists()

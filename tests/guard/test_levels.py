"""Autonomy levels at the guardian: the kill switch clamps every running agent to observe at once
(and releasing it lifts that at once), and a job in an observe domain gets only read-only calls."""

from __future__ import annotations

from pathlib import Path

from tests.guard.util import bash, hook, job_env, make_job, write_tool
from tests.helpers import make_repo, zen
from zen.guard.policy.levels import level_for, read_lanes


def test_kill_switch_denies_writes_allows_reads_and_release_restores(home: Path) -> None:
    wt = make_job(home, "j1", domain="code")
    env = job_env(home, "j1")
    assert hook(bash("touch notes.txt", wt), env=env).returncode == 0

    r = zen("kill-switch", "--reason", "test")
    assert r.returncode == 0, r.stderr
    assert (home / "control" / "KILL").exists()
    denied = hook(bash("touch notes.txt", wt), env=env)
    assert denied.returncode == 2 and denied.stderr.startswith("zen guardian: ")
    assert hook(write_tool(wt / "a.py", wt), env=env).returncode == 2
    assert hook(bash("ls -la", wt), env=env).returncode == 0
    assert hook(bash("cat README.md", wt), env=env).returncode == 0

    r = zen("kill-switch", "--release")
    assert r.returncode == 0, r.stderr
    assert hook(bash("touch notes.txt", wt), env=env).returncode == 0
    assert hook(write_tool(wt / "a.py", wt), env=env).returncode == 0


def test_a_job_in_an_observe_domain_only_reads(home: Path) -> None:
    # the default autonomy.yaml puts `data` at observe and `code` at suggest
    wt = make_job(home, "jd", domain="data")
    env = job_env(home, "jd")
    assert hook(bash("git status", wt), env=env).returncode == 0
    assert hook(bash("touch x", wt), env=env).returncode == 2
    assert hook(write_tool(wt / "x.py", wt), env=env).returncode == 2
    wc = make_job(home, "jc", domain="code")
    assert hook(bash("touch x", wc), env=job_env(home, "jc")).returncode == 0


def test_level_for_reads_the_kill_switch_job_domain_task_and_default(home: Path) -> None:
    auto = {"default_level": "suggest", "domains": {"data": "observe", "ops": "autonomous"}}
    make_job(home, "j1", domain="ops")
    assert level_for(str(home), "j1", None, auto) == ("autonomous", "ops")
    # no state.json yet: the task's domain line
    d = home / "jobs" / "j2"
    d.mkdir()
    (d / "task.yaml").write_text("prompt: hi\ndomain: 'data'  # from the lane\nagent: sim\n")
    assert level_for(str(home), "j2", None, auto) == ("observe", "data")
    assert level_for(str(home), "nosuchjob", None, auto) == ("suggest", None)
    assert level_for(str(home), None, "/somewhere/else", auto) == ("suggest", None)
    assert level_for(None, "j1", None, auto) == ("suggest", None)
    # no job id: the job whose worktree holds the cwd
    assert level_for(str(home), None, str(home / "worktrees" / "j1" / "src"), auto) == ("autonomous", "ops")
    (home / "control" / "KILL").write_text("reason: test\n")
    assert level_for(str(home), "j1", None, auto) == ("observe", "ops")
    assert level_for(str(home), None, "/elsewhere", auto) == ("observe", None)


def test_without_a_job_the_lane_holding_the_cwd_gives_the_level(home: Path, tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "datarepo")
    r = zen("lane", "add", "warehouse", str(repo), "--domain", "data")
    assert r.returncode == 0, r.stderr
    other = make_repo(tmp_path / "coderepo")
    assert zen("lane", "add", "app", str(other)).returncode == 0
    lanes = read_lanes(str(home))
    assert lanes["warehouse"]["domain"] == "data" and lanes["app"]["path"] == str(other)
    auto = {"default_level": "suggest", "domains": {"data": "observe"}}
    assert level_for(str(home), None, str(repo / "src"), auto) == ("observe", "data")
    assert level_for(str(home), None, str(other), auto) == ("suggest", "code")
    # through the CLI from a shell (no job): the lane's level applies
    r = zen("guard", "check", "--cwd", str(repo), "--worktree", str(repo), "--json", "--", "touch x")
    assert r.returncode == 4, r.stdout
    r = zen("guard", "check", "--cwd", str(other), "--worktree", str(other), "--json", "--", "touch x")
    assert r.returncode == 0, r.stdout

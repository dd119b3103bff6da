"""Autonomy reaches Claude Code's own permission system (issue 31): at act-and-report and autonomous,
what zen's guardian allows it grants (`permissionDecision: allow`, so the agent does not ask), on a
hook told --grant (zen gives that only to a job inside its wall); at suggest and under the kill switch
it only has no objection, and a denial stays a denial."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers import zen

HOOK = [sys.executable, "-m", "zen", "guard", "hook"]


def _hook(home: Path, cwd: Path, command: str, *flags: str) -> subprocess.CompletedProcess[str]:
    payload = {"hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_input": {"command": command},
               "cwd": str(cwd)}
    env = {k: v for k, v in os.environ.items() if not k.startswith("ZEN_")}
    return subprocess.run([*HOOK, *flags], input=json.dumps(payload), capture_output=True, text=True,
                          cwd=cwd, env={**env, "ZEN_HOME": str(home)}, timeout=30)


def _level(home: Path, level: str) -> None:
    policy = home / "policy" / "autonomy.yaml"
    text = policy.read_text()
    start = text.index("default_level:")
    end = text.index("\n", start)
    policy.write_text(text[:start] + f"default_level: {level}" + text[end:])


@pytest.mark.parametrize("level,granted", [("observe", False), ("suggest", False),
                                           ("act-and-report", True), ("autonomous", True)])
def test_the_guardian_grants_what_it_allows_at_the_levels_that_act_without_asking(
        home: Path, tmp_path: Path, level: str, granted: bool) -> None:
    _level(home, level)
    cwd = tmp_path / "work"
    cwd.mkdir()
    r = _hook(home, cwd, "ls -la", "--grant")
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout) if r.stdout.strip() else {}
    assert (out.get("hookSpecificOutput", {}).get("permissionDecision") == "allow") is granted, r.stdout
    # without --grant (a lane with no wall), never
    plain = _hook(home, cwd, "ls -la")
    assert plain.returncode == 0 and "permissionDecision" not in plain.stdout
    # a denial is a denial at every level
    denied = _hook(home, cwd, "rm -rf ~", "--grant")
    assert denied.returncode == 2 and "permissionDecision" not in denied.stdout


def test_the_kill_switch_ends_every_grant_at_once(home: Path, tmp_path: Path) -> None:
    _level(home, "autonomous")
    cwd = tmp_path / "work"
    cwd.mkdir()
    assert "permissionDecision" in _hook(home, cwd, "ls", "--grant").stdout
    assert zen("kill-switch", "--reason", "test", env={"ZEN_HOME": str(home)}).returncode == 0
    r = _hook(home, cwd, "ls", "--grant")
    assert r.returncode == 0 and "permissionDecision" not in r.stdout


def test_a_claude_jobs_private_tmpdir_is_the_jobs_own(home: Path) -> None:
    """Claude Code's sandbox keeps its sockets under $TMPDIR, so a Claude job's TMPDIR is a short
    private folder outside the worktree (zen.adapters.sandbox.run_dir_for): writes there are the
    job's own, as in its worktree; any other folder of /tmp is not."""
    wt = home / "worktrees" / "20261204T000000Z-tmp-0000"
    wt.mkdir(parents=True)
    (wt / "a.txt").write_text("a\n")
    mine = f"/tmp/zen-wall-{os.getuid()}/0123456789abcdef"

    def check(command: str, tmpdir: str) -> int:
        env = {**os.environ, "ZEN_HOME": str(home), "TMPDIR": tmpdir}
        return subprocess.run([sys.executable, "-m", "zen", "guard", "check", "--cwd", str(wt), "--worktree",
                               str(wt), "--", command], env=env, capture_output=True, text=True).returncode

    for command in ('echo x > "$TMPDIR/scratch"', 'cp a.txt "$TMPDIR/a.txt"', 'mktemp -p "$TMPDIR"'):
        assert check(command.replace("$TMPDIR", mine), mine) == 0, command
    assert check('echo x > /tmp/zen-wall-0/../elsewhere', mine) == 4
    assert check(f'echo x > {mine}/scratch', "/tmp/other") == 4

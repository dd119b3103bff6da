"""The PreToolUse hook through a real subprocess, as Claude Code and Codex run it: exit 0 allows,
exit 2 blocks with the reason on stderr, and nothing (bad input, a broken policy, a crash, a hang)
can make it exit with anything else, since every other code lets the agent's call run."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.guard.util import bash, events, hook, job_env, make_job, set_policy, write_tool
from tests.helpers import REPO_ROOT, ZEN
from zen.agents.codex import HOOK_TIMEOUT_S as CODEX_TIMEOUT_S
from zen.agents.gemini import HOOK_TIMEOUT_MS as GEMINI_TIMEOUT_MS
from zen.agents.settings import GUARD_TIMEOUT_S
from zen.guard.hook import AGENT_TIMEOUT_S

HEAVY = ("typer", "pydantic", "ruamel", "rich")


@pytest.fixture
def wt(home: Path) -> Path:
    return make_job(home, "j1")


def test_allow_is_exit_0_with_nothing_on_stdout(home: Path, wt: Path) -> None:
    r = hook(bash("ls -la", wt), env=job_env(home, "j1"))
    assert r.returncode == 0, r.stderr
    assert r.stdout == ""


def test_deny_is_exit_2_with_the_reason_on_stderr(home: Path, wt: Path) -> None:
    r = hook(bash("rm -rf ~/projects", wt), env=job_env(home, "j1"))
    assert r.returncode == 2
    assert r.stdout == ""
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("zen guardian: ") and len(lines[0]) > 20


def test_codex_allow_prints_exactly_empty_object_and_deny_exits_2(home: Path, wt: Path) -> None:
    r = hook(bash("git status", wt), "--agent", "codex", env=job_env(home, "j1"))
    assert (r.returncode, r.stdout) == (0, "{}")
    json.loads(r.stdout)
    r = hook(bash("sudo ls", wt), "--agent", "codex", env=job_env(home, "j1"))
    assert r.returncode == 2 and r.stdout == "" and r.stderr.startswith("zen guardian: ")


def test_file_tools_get_the_same_path_rules(home: Path, wt: Path) -> None:
    env = job_env(home, "j1")
    assert hook(write_tool(wt / "src" / "new.py", wt), env=env).returncode == 0
    r = hook(write_tool(home / "policy" / "guardian.yaml", wt, "rules: []\n"), env=env)
    assert r.returncode == 2 and "zen guardian: " in r.stderr


@pytest.mark.parametrize("raw", [
    b"", b"   \n", b"not json", b"[1, 2]", b'"Bash"', b"\xff\xfe\x00garbage", b'{"tool_input": {"command": "ls"}}',
    b'{"tool_name": 5, "tool_input": {}}', b'{"tool_name": "Bash", "tool_input": "ls"}',
    b'{"tool_name": "Bash", "tool_input": {}}', b'{"tool_name": "Bash", "tool_input": {"command": ["ls"]}}',
    b'{"tool_name": "FrobnicateEverything", "tool_input": {"x": 1}}', b'{"tool_name": "Bash"',
])
def test_malformed_input_blocks(home: Path, wt: Path, raw: bytes) -> None:
    r = hook(None, raw=raw, env=job_env(home, "j1"))
    assert r.returncode == 2, (raw, r.stdout, r.stderr)
    assert r.stderr.startswith("zen guardian: ") and "Traceback" not in r.stderr


@pytest.mark.parametrize("args", [["--bogus"], ["--agent", "copilot"], ["--agent"], ["--worktree"]])
def test_bad_arguments_block(home: Path, wt: Path, args: list[str]) -> None:
    r = hook(bash("ls", wt), *args, env=job_env(home, "j1"))
    assert r.returncode == 2 and r.stderr.startswith("zen guardian: ")


def test_a_policy_with_a_yaml_syntax_error_blocks_everything(home: Path, wt: Path) -> None:
    set_policy(home, "require_approval:\n  file_deletes: [true\nrules: {\n")
    r = hook(bash("ls", wt), env=job_env(home, "j1"))
    assert r.returncode == 2
    assert "guardian.yaml" in r.stderr and r.stderr.startswith("zen guardian: ")
    # fixed: allowed again, no restart of anything
    set_policy(home, "require_approval:\n  file_deletes: false\n")
    assert hook(bash("ls", wt), env=job_env(home, "j1")).returncode == 0


def test_a_crash_inside_the_decision_blocks(home: Path, wt: Path) -> None:
    r = hook(bash("ls", wt), env={**job_env(home, "j1"), "ZEN_GUARD_SELFTEST_CRASH": "1"})
    assert r.returncode == 2
    assert "internal error" in r.stderr and "Traceback" not in r.stderr


def test_its_own_deadline_blocks_a_hang_well_under_the_configured_timeout(home: Path, wt: Path) -> None:
    # asked for a minute, it still blocks before the 10 s the agents' settings give it
    t0 = time.monotonic()
    r = hook(bash("ls", wt), env={**job_env(home, "j1"), "ZEN_GUARD_SELFTEST_HANG": "1", "ZEN_GUARD_DEADLINE": "60"})
    took = time.monotonic() - t0
    assert r.returncode == 2 and "deadline" in r.stderr
    assert took < AGENT_TIMEOUT_S - 0.5, took
    assert AGENT_TIMEOUT_S == GUARD_TIMEOUT_S == CODEX_TIMEOUT_S == GEMINI_TIMEOUT_MS / 1000


def test_the_deadline_counts_from_the_start_of_the_process_not_from_its_imports(home: Path, wt: Path) -> None:
    # a start-up slowed by a loaded machine (here a 1.5 s sleep before the hook's own code, in the
    # same process) spends the deadline: the agent's timeout runs from the spawn too
    slow = ("import os, sys, time; time.sleep(1.5); "
            "os.execv(sys.executable, [sys.executable, '-m', 'zen', 'guard', 'hook'])")
    env = {**os.environ, **job_env(home, "j1"), "ZEN_GUARD_SELFTEST_HANG": "1", "ZEN_GUARD_DEADLINE": "2.5"}
    t0 = time.monotonic()
    r = subprocess.run([sys.executable, "-c", slow], input=json.dumps(bash("ls", wt)).encode(),
                       capture_output=True, env=env, timeout=30)
    took = time.monotonic() - t0
    assert r.returncode == 2 and b"deadline" in r.stderr
    assert 2.4 < took < 3.5, took   # 2.5 s from the start, not 1.5 + 2.5


def test_a_zen_home_that_is_not_one_blocks(tmp_path: Path, home: Path, wt: Path) -> None:
    r = hook(bash("ls", wt), env={**job_env(home, "j1"), "ZEN_HOME": str(tmp_path / "nowhere")})
    assert r.returncode == 2 and "not a zen home" in r.stderr


def test_the_console_script_blocks_and_allows_like_the_module(home: Path, wt: Path) -> None:
    script = Path(sys.executable).parent / "zen"
    if not script.exists():
        pytest.skip("no console script next to the interpreter")
    env = job_env(home, "j1")
    assert hook(bash("ls", wt), env=env, argv=[str(script)]).returncode == 0
    assert hook(bash("rm -rf /", wt), env=env, argv=[str(script)]).returncode == 2


def test_every_decision_lands_in_the_jobs_timeline_gap_free(home: Path, wt: Path) -> None:
    # six at once on a loaded 2-core box: give each the longest internal deadline allowed so none
    # is cut short (a cut-short hook blocks, but writes no audit line)
    env = {**job_env(home, "j1"), "ZEN_GUARD_DEADLINE": "60"}
    procs = [subprocess.Popen([*ZEN, "guard", "hook"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, env={**__import__("os").environ, **env})
             for _ in range(6)]
    cmds = ["ls", "rm -rf /", "git status", "sudo true", "cat README.md", "rm -rf ~"]
    errs = [p.communicate(json.dumps(bash(c, wt)).encode(), timeout=30)[1] for p, c in zip(procs, cmds, strict=True)]
    assert all(p.returncode in (0, 2) for p in procs)
    evs = events(home, "j1")
    assert [e["seq"] for e in evs] == list(range(1, 7)), errs
    assert {e["type"] for e in evs} == {"guard.allowed", "guard.denied"}
    by_cmd = {e["command"]: e for e in evs}
    assert by_cmd["rm -rf /"]["type"] == "guard.denied" and by_cmd["rm -rf /"]["actor"] == "guard"
    assert by_cmd["ls"]["type"] == "guard.allowed" and by_cmd["ls"]["decision"] == "allow"
    assert all(e["rule"] and e["reason"] and e["tool"] == "Bash" for e in evs)


def test_a_long_command_is_truncated_in_the_timeline(home: Path, wt: Path) -> None:
    long = "echo " + "x" * 3000
    hook(bash(long, wt), env=job_env(home, "j1"))
    (ev,) = events(home, "j1")
    assert len(ev["command"]) <= 501 and ev["command"].startswith("echo xxx")


def test_without_a_job_decisions_go_to_the_home_audit_log(home: Path, tmp_path: Path) -> None:
    r = hook(bash("rm -rf /", tmp_path), env={"ZEN_HOME": str(home)})
    assert r.returncode == 2
    lines = (home / "logs" / "guard-audit.jsonl").read_text().splitlines()
    rec = json.loads(lines[-1])
    assert rec["type"] == "guard.denied" and rec["command"] == "rm -rf /" and rec["rule"]


def test_a_failing_audit_never_turns_a_deny_into_an_allow(home: Path, wt: Path) -> None:
    # the job's events.jsonl is a directory: every append fails
    (home / "jobs" / "j1" / "events.jsonl").mkdir()
    env = job_env(home, "j1")
    r = hook(bash("rm -rf /", wt), env=env)
    assert r.returncode == 2
    r = hook(bash("ls", wt), env=env)
    assert r.returncode == 0 and "could not write the audit" in r.stderr and r.stdout == ""


def test_the_hook_import_path_stays_lean(home: Path, wt: Path) -> None:
    env = job_env(home, "j1")
    hook(bash("ls", wt), env=env)                    # compiles the policy cache (ruamel, once)
    r = hook(bash("ls", wt), env=env, argv=[sys.executable, "-X", "importtime", "-m", "zen"])
    assert r.returncode == 0, r.stderr
    imported = {line.split("|")[-1].strip() for line in r.stderr.splitlines() if line.startswith("import time:")}
    heavy = sorted(m for m in imported if m.split(".")[0] in HEAVY)
    assert not heavy, heavy
    assert "zen.guard.decide" in imported


def test_the_hook_is_routed_before_the_cli_framework() -> None:
    text = (REPO_ROOT / "zen" / "__main__.py").read_text()
    assert 'argv[:2] == ["guard", "hook"]' in text


def _patch(body: str, cwd: Path) -> dict:
    return {"session_id": "t", "hook_event_name": "PreToolUse", "tool_name": "apply_patch",
            "tool_input": {"command": f"*** Begin Patch\n{body}*** End Patch\n"}, "cwd": str(cwd),
            "turn_id": "1", "model": "gpt"}


def test_codex_apply_patch_is_judged_file_by_file(home: Path, wt: Path) -> None:
    env = job_env(home, "j1")
    ok = _patch("*** Add File: src/new.py\n+print('hi')\n*** Update File: README.md\n@@\n-a\n+b\n", wt)
    r = hook(ok, "--agent", "codex", env=env)
    assert (r.returncode, r.stdout) == (0, "{}"), r.stderr
    protected = _patch(f"*** Update File: src/a.py\n+x\n*** Update File: {home}/policy/guardian.yaml\n+rules: []\n", wt)
    assert hook(protected, "--agent", "codex", env=env).returncode == 2
    outside = _patch("*** Delete File: ../../../etc/hosts\n", wt)
    r = hook(outside, "--agent", "codex", env=env)
    assert r.returncode == 2 and r.stdout == ""
    for bad in ({"command": "rm -rf /"}, {"command": 5}, {}):
        payload = {**_patch("", wt), "tool_input": bad}
        assert hook(payload, "--agent", "codex", env=env).returncode == 2

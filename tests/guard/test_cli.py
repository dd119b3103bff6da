"""`zen guard check` (one command, a file tool, --batch) and `zen guard settings`, through the
real CLI: the same answers as the hook, exit 0 allow / 4 deny, a bad batch line is a deny line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.guard.util import bash, hook, job_env, make_job, set_policy, write_tool
from tests.helpers import zen

CASES = ["ls -la", "git status", "rm -rf /", "sudo true", "rm -rf ~/.ssh", "cat README.md",
         "rm -rf build", "echo hi > notes.txt"]


@pytest.fixture
def wt(home: Path) -> Path:
    return make_job(home, "j1")


def test_check_allows_with_0_and_denies_with_4(home: Path, wt: Path) -> None:
    r = zen("guard", "check", "--cwd", str(wt), "--worktree", str(wt), "--", "ls -la")
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.startswith("allow")
    r = zen("guard", "check", "--json", "--cwd", str(wt), "--worktree", str(wt), "--", "rm -rf /")
    assert r.returncode == 4
    d = json.loads(r.stdout)
    assert set(d) == {"decision", "rule", "reason"} and d["decision"] == "deny" and d["rule"] and d["reason"]


def test_check_joins_words_after_the_double_dash(home: Path, wt: Path) -> None:
    r = zen("guard", "check", "--json", "--cwd", str(wt), "--", "rm", "-rf", "/")
    assert r.returncode == 4 and json.loads(r.stdout)["decision"] == "deny"


def test_check_a_file_tool(home: Path, wt: Path) -> None:
    r = zen("guard", "check", "--json", "--cwd", str(wt), "--tool", "Write", "--file", "src/app.py")
    assert r.returncode == 0, r.stdout + r.stderr
    r = zen("guard", "check", "--json", "--cwd", str(wt), "--tool", "Edit",
            "--file", str(home / "policy" / "guardian.yaml"))
    assert r.returncode == 4 and json.loads(r.stdout)["decision"] == "deny"


def test_check_usage_errors_exit_2(home: Path, wt: Path) -> None:
    assert zen("guard", "check").returncode == 2
    assert zen("guard", "check", "--tool", "Write").returncode == 2


def test_check_audits_to_the_home_log_without_a_job(home: Path, tmp_path: Path) -> None:
    zen("guard", "check", "--cwd", str(tmp_path), "--", "sudo true")
    rec = json.loads((home / "logs" / "guard-audit.jsonl").read_text().splitlines()[-1])
    assert rec["type"] == "guard.denied" and rec["command"] == "sudo true"


def test_batch_answers_each_line_in_order_like_the_hook(home: Path, wt: Path, tmp_path: Path) -> None:
    lines = [json.dumps({"command": c, "cwd": str(wt)}) for c in CASES]
    lines.insert(3, "this is not json")
    lines.insert(5, json.dumps({"cwd": str(wt)}))
    lines.insert(6, "")
    lines.append(json.dumps({"tool": "Write", "file_path": str(wt / "new.py"), "cwd": str(wt)}))
    lines.append(json.dumps({"tool": "Write", "file_path": str(home / "policy" / "guardian.yaml"),
                             "cwd": str(wt)}))
    lines.append("[1, 2]")
    f = tmp_path / "cmds.jsonl"
    f.write_text("\n".join(lines) + "\n")
    env = {"ZEN_WORKTREE": str(wt)}
    r = zen("guard", "check", "--batch", str(f), env=env)
    assert r.returncode == 4, r.stderr
    out = [json.loads(x) for x in r.stdout.splitlines()]
    assert len(out) == len(lines)
    assert [o["decision"] for o in out][3] == "deny" and out[3]["rule"] == "guard.input"
    assert out[5]["decision"] == "deny" and out[6]["decision"] == "deny" and out[-1]["decision"] == "deny"
    # the same answer as the hook gives for each command
    hook_env = job_env(home, "j1")
    for line, got in zip(lines, out, strict=True):
        try:
            rec = json.loads(line)
        except ValueError:
            continue
        if not isinstance(rec, dict) or ("command" not in rec and "tool" not in rec):
            continue
        payload = bash(rec["command"], wt) if "command" in rec else write_tool(rec["file_path"], wt)
        h = hook(payload, env=hook_env)
        assert (h.returncode == 0) == (got["decision"] == "allow"), (rec, got, h.stderr)


def test_batch_all_allowed_exits_0_and_reads_stdin(home: Path, wt: Path) -> None:
    text = "\n".join(json.dumps({"command": c, "cwd": str(wt)}) for c in ("ls", "git status", "pwd")) + "\n"
    r = zen("guard", "check", "--batch", "-", input=text, env={"ZEN_WORKTREE": str(wt)})
    assert r.returncode == 0, r.stdout + r.stderr
    assert [json.loads(x)["decision"] for x in r.stdout.splitlines()] == ["allow"] * 3


def test_batch_with_a_broken_policy_denies_every_line(home: Path, wt: Path, tmp_path: Path) -> None:
    set_policy(home, "rules: [\n")
    f = tmp_path / "b.jsonl"
    f.write_text(json.dumps({"command": "ls", "cwd": str(wt)}) + "\n")
    r = zen("guard", "check", "--batch", str(f))
    assert r.returncode == 4 and json.loads(r.stdout)["rule"] == "policy.invalid"


def test_settings_registers_the_hook_like_the_per_job_settings(home: Path) -> None:
    r = zen("guard", "settings")
    assert r.returncode == 0, r.stderr
    data = json.loads(r.stdout)
    pre = data["hooks"]["PreToolUse"]
    matchers = {m["matcher"] for m in pre}
    assert "Bash" in matchers and any("Write" in m and "Edit" in m for m in matchers)
    for m in pre:
        (h,) = m["hooks"]
        assert h["command"].endswith(" guard hook") and h["timeout"] == 10
    from zen.agents.settings import hook_settings

    assert set(data["hooks"]) == set(hook_settings(["zen"])["hooks"])

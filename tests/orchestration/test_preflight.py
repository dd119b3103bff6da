"""Preflight in-process (zen.orchestration.job.preflight, DESIGN 7): each check's verdict and its
sentence on a real home, the guardian self-test through a hook subprocess, the hook command read
from a job's settings, incident checks of every kind, and the spawn cache."""

from __future__ import annotations

import json
import shutil
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import git, make_repo, one_line, tune
from zen.core.ids import iso, utcnow
from zen.orchestration.intake.dispatch import dispatch
from zen.orchestration.job import preflight
from zen.orchestration.job.preflight import (
    FAIL,
    PASS,
    WARN,
    Report,
    hook_command_from_data,
    hook_command_from_settings,
)
from zen.orchestration.lanes import add_lane
from zen.store.home import Home

# a stand-in hook that decides as the guardian would on the two self-test commands
GOOD_HOOK = ["sh", "-c", "grep -q 'rm -rf' && exit 2; exit 0"]


def checks(report: Report) -> dict[str, tuple[str, str]]:
    return {c.name: (c.status, c.message) for c in report.checks}


def run(home: Path, **kw: Any) -> dict[str, tuple[str, str]]:
    kw.setdefault("hook_argv", GOOD_HOOK)
    return checks(preflight.run(Home(home), **kw))


def bash_settings(command: str, matcher: str = "Bash") -> dict[str, Any]:
    return {"hooks": {"PreToolUse": [{"matcher": matcher, "hooks": [{"type": "command", "command": command}]}]}}


# -- the report ---------------------------------------------------------------------------------

def test_a_report_is_ok_until_one_check_fails_and_warnings_do_not_count() -> None:
    r = Report()
    r.add("a", PASS, "fine")
    r.add("b", WARN, "hm")
    assert r.ok and r.failures == []
    r.add("c", FAIL, "broken")
    assert not r.ok and [c.name for c in r.failures] == ["c"]
    assert r.as_dict() == {"ok": False, "checks": [{"check": "a", "status": "PASS", "message": "fine"},
                                                    {"check": "b", "status": "WARN", "message": "hm"},
                                                    {"check": "c", "status": "FAIL", "message": "broken"}]}


def test_a_fresh_home_with_a_lane_passes_with_the_supervisor_missing_as_a_warning(lane: Path, home: Path) -> None:
    got = run(home)
    assert got["home layout"][0] == PASS and got["config"] == (PASS, "zen.yaml parses")
    assert got["lane app"] == (PASS, f"{lane} @ main")
    assert got["supervisor"] == (WARN, "no supervisor is running (zen supervise --detach); tasks wait in the spool")
    assert got["guardian self-test"][0] == PASS
    assert all(status != FAIL for status, _ in got.values()), got


def test_every_message_is_one_line(lane: Path, home: Path) -> None:
    (home / "policy" / "guardian.yaml").write_text("rules: [unterminated\n")
    for status, message in run(home).values():
        assert one_line(message), (status, message)


def test_a_missing_home_directory_fails_and_says_how_to_restore_it(home: Path) -> None:
    shutil.rmtree(home / "spool")
    status, message = run(home)["home layout"]
    assert status == FAIL and "missing spool" in message and f"zen init {home}" in message


def test_a_broken_zen_yaml_fails_and_stops_the_report_there(home: Path) -> None:
    (home / "zen.yaml").write_text("lanes: [unclosed\n")
    got = run(home)
    assert list(got) == ["home layout", "config"]
    assert got["config"][0] == FAIL and "not valid YAML" in got["config"][1]


def test_a_missing_guardian_policy_warns_that_only_built_in_rules_apply(home: Path) -> None:
    (home / "policy" / "guardian.yaml").unlink()
    status, message = run(home)["guardian policy"]
    assert status == WARN and "only the built-in rules apply" in message


def test_a_broken_autonomy_policy_fails(home: Path) -> None:
    (home / "policy" / "autonomy.yaml").write_text("domains: [nope\n")
    assert run(home)["autonomy policy"][0] == FAIL


def test_a_broken_incident_record_fails_naming_its_file(home: Path) -> None:
    (home / "incidents" / "2026-12-01-bad.yaml").write_text("zen: 1\nid: 2026-12-01-bad\n")
    status, message = run(home)["incidents"]
    assert status == FAIL and message.startswith("2026-12-01-bad.yaml: ")


# -- lanes --------------------------------------------------------------------------------------

def test_a_lane_narrowed_to_an_unknown_name_fails(lane: Path, home: Path) -> None:
    got = run(home, lane="nope")
    assert got["lane nope"] == (FAIL, "no lane named 'nope' in zen.yaml")
    assert "lane app" not in got


def test_a_lane_whose_checkout_is_gone_fails_saying_what_to_do(lane: Path, home: Path) -> None:
    shutil.rmtree(lane)
    assert run(home)["lane app"] == (FAIL, f"{lane} does not exist (zen lane remove app, or restore it)")


def test_a_lane_that_is_no_longer_a_repository_fails(lane: Path, home: Path) -> None:
    shutil.rmtree(lane / ".git")
    assert run(home)["lane app"] == (FAIL, f"{lane} is not a git repository")


def test_a_lane_whose_base_branch_was_deleted_fails_naming_it(home: Path, tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "r")
    git(repo, "checkout", "-q", "-b", "dev")
    add_lane(Home(home), "web", str(repo), "dev", None)
    git(repo, "checkout", "-q", "main")
    git(repo, "branch", "-q", "-D", "dev")
    assert run(home)["lane web"] == (FAIL, f"base 'dev' does not resolve in {repo}")


# -- the guardian self-test ---------------------------------------------------------------------

def test_the_real_guard_hook_passes_the_self_test(home: Path) -> None:
    got = checks(preflight.run(Home(home)))
    assert got["guardian self-test"] == (PASS, "hook blocks 'rm -rf ~/.ssh' and allows 'git status'")


def test_a_hook_that_allows_everything_fails_open_and_is_caught(home: Path) -> None:
    status, message = run(home, hook_argv=["sh", "-c", "cat >/dev/null; exit 0"])["guardian self-test"]
    assert status == FAIL and "did not block 'rm -rf ~/.ssh' (exit 0; agents treat that as allow)" in message


def test_a_hook_that_blocks_everything_is_caught_too(home: Path) -> None:
    status, message = run(home, hook_argv=["sh", "-c", "echo denied >&2; exit 2"])["guardian self-test"]
    assert status == FAIL and message == "the hook blocks even 'git status' (exit 2): denied"


def test_a_hook_that_cannot_start_fails(home: Path) -> None:
    status, message = run(home, hook_argv=["/no/such/hook"])["guardian self-test"]
    assert status == FAIL and "exit -1" in message


def test_the_hook_is_asked_as_an_agent_would_ask_it(home: Path, tmp_path: Path) -> None:
    seen = tmp_path / "payloads"
    seen.mkdir()
    hook = ["sh", "-c", f"cat > $(mktemp -p {seen}); echo \"$ZEN_HOME $ZEN_WORKTREE ${{ZEN_JOB_ID-unset}}\" >> {seen}/env;"
            " grep -q 'rm -rf' $(ls -t " + str(seen) + "/tmp.* | head -1) && exit 2; exit 0"]
    assert run(home, hook_argv=hook)["guardian self-test"][0] == PASS
    payloads = [json.loads(p.read_text()) for p in sorted(seen.glob("tmp.*"))]
    commands = sorted(p["tool_input"]["command"] for p in payloads)
    assert commands == ["git status", "rm -rf ~/.ssh"]
    assert all(p["hook_event_name"] == "PreToolUse" and p["tool_name"] == "Bash" for p in payloads)
    env = (seen / "env").read_text().split()
    assert env[0] == str(home) and env[1] == str(home / "worktrees" / "preflight-selftest") and env[2] == "unset"


def test_settings_that_register_no_bash_hook_fail(home: Path) -> None:
    status, message = run(home, settings={"hooks": {}})["guardian self-test"]
    assert status == FAIL and "register no PreToolUse hook for Bash" in message


def test_the_hook_of_a_settings_file_is_the_one_self_tested(home: Path, tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    path.write_text(json.dumps(bash_settings("cat >/dev/null; exit 0")))
    status, message = run(home, settings_file=path)["guardian self-test"]
    assert status == FAIL and "did not block" in message
    path.write_text("{broken")
    status, message = run(home, settings_file=path)["guardian self-test"]
    assert status == FAIL and f"{path} registers no PreToolUse hook for Bash" in message


@pytest.mark.parametrize(("data", "want"), [
    (bash_settings("zen guard hook"), ["sh", "-c", "zen guard hook"]),
    (bash_settings("h", matcher="Edit|Bash|Write"), ["sh", "-c", "h"]),
    (bash_settings("h", matcher="Edit|Write"), None),
    (bash_settings("h", matcher="Bashful"), None),
    ({"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": []}]}}, None),
    ({"hooks": {"PostToolUse": bash_settings("h")["hooks"]["PreToolUse"]}}, None),
    ([], None),
    (None, None),
])
def test_the_bash_hook_command_is_found_only_where_an_agent_would_run_it(data: Any, want: list[str] | None) -> None:
    assert hook_command_from_data(data) == want


def test_an_unreadable_settings_file_has_no_hook(tmp_path: Path) -> None:
    assert hook_command_from_settings(tmp_path / "missing.json") is None


# -- the rest of the checks ---------------------------------------------------------------------

def test_the_kill_switch_engaged_is_a_warning(home: Path) -> None:
    Home(home).kill_file.parent.mkdir(parents=True, exist_ok=True)
    Home(home).kill_file.write_text("engaged\n")
    status, message = run(home)["kill switch"]
    assert status == WARN and "zen kill-switch --release" in message


def test_a_task_waiting_longer_than_its_timeout_is_named(lane: Path, home: Path) -> None:
    h = Home(home)
    old = dispatch(h, {"prompt": "Old one", "name": "stale-task", "timeout": "1m"})
    dispatch(h, {"prompt": "New one", "name": "fresh-task"})
    path = home / "spool" / "new" / f"{old.id}.yaml"
    path.write_text(path.read_text().replace(old.created_at, iso(utcnow() - timedelta(minutes=5))))
    assert run(home)["deadlines"] == (WARN, "tasks queued for longer than their timeout: stale-task")


def test_no_late_task_passes_the_deadline_check(lane: Path, home: Path) -> None:
    dispatch(Home(home), {"prompt": "New one"})
    assert run(home)["deadlines"] == (PASS, "no queued task is past its deadline")


def test_less_free_disk_than_the_limit_fails_naming_the_setting(home: Path) -> None:
    tune(home, **{"min_free_disk: 512MiB": "min_free_disk: 100000000GiB"})
    status, message = run(home)["disk"]
    assert status == FAIL and "limits.min_free_disk is" in message and str(home) in message


def test_a_limit_that_is_no_size_fails_the_disk_check_and_the_rest_still_run(home: Path) -> None:
    tune(home, **{"min_free_disk: 512MiB": "min_free_disk: plenty"})
    checks = run(home)
    assert checks["disk"] == (FAIL, "zen.yaml limits.min_free_disk: 'plenty' is not a size (try 200000, 512KiB, "
                                    "1MiB, 2GiB)")
    assert checks["tool git"][0] == PASS


def test_free_disk_under_four_times_the_limit_warns(home: Path) -> None:
    free = shutil.disk_usage(home).free
    tune(home, **{"min_free_disk: 512MiB": f"min_free_disk: {free // 2}"})
    assert run(home)["disk"][0] == WARN


CHECK_INCIDENT = """zen: 1
id: 2026-12-02-checks
title: Checks of every kind
date: 2026-12-02
domain: code
lanes: []
paths: []
tags: []
what_happened: x
root_cause: x
impact: x
prevention: x
mitigations: []
controls:
  guardian_rules: []
  handoff_warnings: []
  preflight_checks:
    - {id: no-secret, kind: env_absent, var: ZT_SECRET, pattern: "^prod", description: no prod secret}
    - {id: has-token, kind: env_present, var: ZT_TOKEN, description: a token is set, severity: warn}
    - {id: no-dump, kind: file_absent, path: dump.sql, description: no dump in the checkout}
    - {id: has-readme, kind: file_present, path: README.md, description: a readme}
    - {id: tests-pass, kind: command, run: "echo checking; test -f OK || { echo not ok; exit 3; }", description: the check}
"""


def incident_checks(home: Path) -> dict[str, tuple[str, str]]:
    return {k.split(": ", 1)[1]: v for k, v in run(home).items() if k.startswith("incident 2026-12-02-checks")}


def test_incident_checks_of_every_kind_pass_on_a_clean_lane(lane: Path, home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (home / "incidents" / "2026-12-02-checks.yaml").write_text(CHECK_INCIDENT)
    (lane / "OK").write_text("")
    monkeypatch.setenv("ZT_TOKEN", "t")
    monkeypatch.setenv("ZT_SECRET", "staging-123")       # set, but not matching the pattern
    got = incident_checks(home)
    assert got == {"no-secret": (PASS, "$ZT_SECRET is not set to anything risky"),
                   "has-token": (PASS, "$ZT_TOKEN is set"),
                   "no-dump (app)": (PASS, "dump.sql is absent"),
                   "has-readme (app)": (PASS, "README.md exists"),
                   "tests-pass (app)": (PASS, "`echo checking; test -f OK || { echo not ok; exit 3; }` passed")}


def test_failing_incident_checks_say_why_with_their_severity(lane: Path, home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (home / "incidents" / "2026-12-02-checks.yaml").write_text(CHECK_INCIDENT)
    (lane / "README.md").unlink()
    (lane / "dump.sql").write_text("drop table x;\n")
    monkeypatch.setenv("ZT_SECRET", "prod-abc")
    monkeypatch.delenv("ZT_TOKEN", raising=False)
    got = incident_checks(home)
    assert got["no-secret"] == (FAIL, "no prod secret: $ZT_SECRET is set and matches '^prod'")
    assert got["has-token"] == (WARN, "a token is set: $ZT_TOKEN is not set")     # severity: warn
    assert got["no-dump (app)"] == (FAIL, f"no dump in the checkout: dump.sql exists in {lane}")
    assert got["has-readme (app)"] == (FAIL, f"a readme: README.md is missing in {lane}")
    assert got["tests-pass (app)"][0] == FAIL and got["tests-pass (app)"][1].endswith("exited 3 not ok")


def test_a_lane_incident_runs_only_for_its_lane(lane: Path, home: Path, tmp_path: Path) -> None:
    add_lane(Home(home), "web", str(make_repo(tmp_path / "web")), None, None)
    (home / "incidents" / "2026-12-02-checks.yaml").write_text(CHECK_INCIDENT.replace("lanes: []", "lanes: [web]"))
    names = set(incident_checks(home))
    assert "has-readme (web)" in names and "has-readme (app)" not in names


# -- before a spawn -----------------------------------------------------------------------------

def test_a_passing_spawn_report_is_reused_until_a_source_changes(lane: Path, home: Path) -> None:
    settings = bash_settings("grep -q 'rm -rf' && exit 2; exit 0")
    h = Home(home)
    first = preflight.for_spawn(h, "app", settings)
    assert first.ok
    assert preflight.for_spawn(h, "app", settings) is first
    tune(home, **{"  tick: 0.25s ": "  tick: 0.3s  "})
    again = preflight.for_spawn(h, "app", settings)
    assert again is not first and again.ok


def test_a_failing_spawn_report_is_never_reused(lane: Path, home: Path) -> None:
    settings = bash_settings("cat >/dev/null; exit 0")
    h = Home(home)
    first = preflight.for_spawn(h, "app", settings)
    assert not first.ok
    assert preflight.for_spawn(h, "app", settings) is not first

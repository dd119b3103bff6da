"""Incident records and preflight (issue 7): records validate, controls are live, preflight
reports PASS / WARN / FAIL and catches what would let an agent run unchecked."""

from __future__ import annotations

import json
import stat
from pathlib import Path

from tests.helpers import one_line, zen, zen_json

SHIPPED = {"2026-03-14-force-push-over-shared-branch", "2026-05-02-credentials-copied-into-a-log",
           "2026-08-21-destructive-migration-on-shared-db"}


def checks(report: dict) -> dict[str, tuple[str, str]]:
    return {c["check"]: (c["status"], c["message"]) for c in report["checks"]}


def test_zen_init_ships_three_valid_example_incidents(home: Path) -> None:
    rows = zen_json("incident", "list")
    assert {r["id"] for r in rows} == SHIPPED
    assert all(r["error"] is None for r in rows)
    assert all(r["guardian_rules"] + r["preflight_checks"] + r["handoff_warnings"] > 0 for r in rows)
    assert zen("incident", "check").returncode == 0
    shown = zen_json("incident", "show", "2026-03-14")
    assert shown["domain"] == "code" and shown["example"] is True


def test_incident_new_writes_a_valid_record_and_demotes_the_domain(home: Path) -> None:
    r = zen("incident", "new", "--title", "Agent deleted fixtures", "--domain", "code",
            "--what-happened", "rm -rf tests/fixtures", "--root-cause", "no guard on fixtures",
            "--impact", "CI red for a day", "--prevention", "protect fixtures",
            "--warning", "tests/fixtures is generated: never delete it", "--path", "tests/fixtures/*", "--json")
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert out["demoted_to"] == "observe"
    record = zen_json("incident", "show", out["id"])
    assert record["controls"]["handoff_warnings"] == ["tests/fixtures is generated: never delete it"]
    assert record["paths"] == ["tests/fixtures/*"] and record["example"] is False
    autonomy = {r["domain"]: r["level"] for r in zen_json("autonomy")}
    assert autonomy["code"] == "observe"


def test_incident_new_refuses_missing_fields_without_a_terminal(home: Path) -> None:
    r = zen("incident", "new", "--title", "x", input="")
    assert r.returncode == 1 and one_line(r.stderr) and "--domain" in r.stderr


def test_incident_check_reports_a_broken_record(home: Path) -> None:
    bad = home / "incidents" / "broken.yaml"
    bad.write_text("zen: 1\nid: broken\ntitle: [unterminated\n")
    r = zen("incident", "check")
    assert r.returncode == 1 and "broken" in r.stdout and "BAD" in r.stdout
    bad.write_text("zen: 1\nid: broken-two\ntitle: t\ndate: 2026-01-01\ndomain: code\n")
    r = zen("incident", "check", "--json")
    assert r.returncode == 1
    [problem] = [x for x in json.loads(r.stdout) if not x["ok"]]
    assert "what_happened" in problem["problems"][0]


def test_a_fresh_home_with_one_valid_lane_and_no_supervisor_passes_preflight(lane: Path, home: Path) -> None:
    r = zen("preflight", "--json")
    report = json.loads(r.stdout)
    assert r.returncode == 0, report
    got = checks(report)
    assert got["supervisor"][0] == "WARN"
    assert got["guardian self-test"][0] == "PASS"
    assert got["lane app"][0] == "PASS"
    assert all(status in ("PASS", "WARN") for status, _ in got.values())
    text = zen("preflight").stdout
    assert "PASS" in text and "WARN" in text


def test_preflight_catches_a_broken_policy(lane: Path, home: Path) -> None:
    (home / "policy" / "guardian.yaml").write_text("rules: [unterminated\n")
    r = zen("preflight", "--json")
    assert r.returncode == 1
    status, message = checks(json.loads(r.stdout))["guardian policy"]
    assert status == "FAIL" and "guardian.yaml" in message


def test_preflight_catches_a_missing_lane_repo(lane: Path, home: Path, tmp_path: Path) -> None:
    import shutil

    shutil.rmtree(lane)
    r = zen("preflight", "--json")
    assert r.returncode == 1
    status, message = checks(json.loads(r.stdout))["lane app"]
    assert status == "FAIL" and "does not exist" in message


def test_preflight_catches_a_hook_that_would_fail_open(lane: Path, home: Path, tmp_path: Path) -> None:
    """A settings file pointing at a missing command: the agent would treat exit 127 as allow."""
    from zen.orchestration.job.preflight import run
    from zen.store.home import Home

    settings = tmp_path / "claude-settings.json"
    settings.write_text(json.dumps({"hooks": {"PreToolUse": [
        {"matcher": "Bash", "hooks": [{"type": "command", "command": "/no/such/zen guard hook"}]}]}}))
    report = run(Home(home), settings_file=settings)
    assert not report.ok
    [fail] = [c for c in report.failures if c.name == "guardian self-test"]
    assert "did not block" in fail.message
    # a hook that allows everything is caught the same way
    allow_all = tmp_path / "allow.sh"
    allow_all.write_text("#!/bin/sh\ncat >/dev/null\nexit 0\n")
    allow_all.chmod(allow_all.stat().st_mode | stat.S_IEXEC)
    settings.write_text(json.dumps({"hooks": {"PreToolUse": [
        {"matcher": "Bash", "hooks": [{"type": "command", "command": str(allow_all)}]}]}}))
    assert not run(Home(home), settings_file=settings).ok
    # no Bash hook registered at all
    settings.write_text(json.dumps({"hooks": {}}))
    assert not run(Home(home), settings_file=settings).ok


def test_incident_preflight_checks_run(lane: Path, home: Path) -> None:
    r = zen("preflight", "--json", env={"DATABASE_URL": "postgres://app:pw@staging.db.internal:5432/app"})
    assert r.returncode == 1
    got = checks(json.loads(r.stdout))
    [key] = [k for k in got if "no-shared-database-url" in k]
    assert got[key][0] == "FAIL"
    r = zen("preflight", "--json", env={"DATABASE_URL": "postgres://app:pw@localhost:5432/app"})
    got = checks(json.loads(r.stdout))
    assert got[key][0] == "PASS"


def test_a_spawn_whose_preflight_fails_records_it_and_never_starts_the_agent(lane: Path, home: Path,
                                                                            tmp_path: Path) -> None:
    """Preflight before every spawn: a broken autonomy policy blocks the start with the report."""
    import subprocess

    from tests.helpers import wait_until
    from tests.supervisor.conftest import Supervisors
    from zen.store.home import Home
    from zen.store.jobs import JobStore

    (home / "policy" / "autonomy.yaml").write_text("domains: [unterminated\n")
    job = zen("dispatch", "never starts", "--name", "blocked", "--cmd", "touch started").stdout.strip()
    sups = Supervisors(home, tmp_path)
    try:
        sup = sups.start()
        store = JobStore(Home(home))
        wait_until(lambda: store.snapshot(job).state.value == "failed", timeout=30, message="the job to fail")
        evs = store.events(job)
        [pf] = [e for e in evs if e["type"] == "preflight.failed"]
        assert any(c["check"] == "autonomy policy" and c["status"] == "FAIL" for c in pf["report"])
        assert not any(e["type"] in ("worktree.created", "agent.spawned") for e in evs)
        assert "preflight failed" in store.snapshot(job).reason
        # the worktree git was making meanwhile is taken back: nothing of the start is left
        assert not Home(home).worktree(job).exists()
        branches = subprocess.run(["git", "-C", str(lane), "branch", "--list", f"zen/{job}"],
                                  capture_output=True, text=True, check=True).stdout
        assert branches.strip() == ""
        worktrees = subprocess.run(["git", "-C", str(lane), "worktree", "list", "--porcelain"],
                                   capture_output=True, text=True, check=True).stdout
        assert job not in worktrees
        assert sups.stop(sup) == 0
    finally:
        sups.close()

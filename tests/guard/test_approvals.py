"""Approvals end to end: a call that needs a human is denied with `zen approve <id>` in the reason
and a pending request on disk; once approved the same call from the same job runs exactly once;
`zen deny` keeps it blocked."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tests.guard.util import bash, hook, job_env, make_job, set_policy
from tests.helpers import one_line, zen, zen_json

POLICY = "require_approval:\n  system_commands: true\n"
CMD = "systemctl restart nginx"


@pytest.fixture
def wt(home: Path) -> Path:
    set_policy(home, POLICY)
    return make_job(home, "j1")


def _ask(home: Path, wt: Path, job: str = "j1", command: str = CMD):
    return hook(bash(command, wt), env=job_env(home, job))


def _id(stderr: str) -> str:
    m = re.search(r"zen approve ([0-9a-f]+)", stderr)
    assert m, stderr
    return m.group(1)


def test_pending_request_then_approve_allows_exactly_once(home: Path, wt: Path) -> None:
    r = _ask(home, wt)
    assert r.returncode == 2 and r.stderr.startswith("zen guardian: ")
    aid = _id(r.stderr)
    pending = home / "approvals" / "pending" / f"{aid}.yaml"
    assert pending.exists()
    rec = {k: json.loads(v) for k, _, v in (ln.partition(": ") for ln in pending.read_text().splitlines())}
    assert rec["id"] == aid and rec["job"] == "j1" and rec["tool"] == "Bash" and rec["command"] == CMD
    assert rec["cwd"] == str(wt) and rec["rule"] and rec["reason"] and rec["created_at"]

    # asking again is the same request, not a second one
    assert _id(_ask(home, wt).stderr) == aid
    listed = zen_json("approvals")
    assert [(a["id"], a["state"]) for a in listed] == [(aid, "pending")]

    r = zen("approve", aid)
    assert r.returncode == 0, r.stderr
    assert not pending.exists() and (home / "approvals" / "granted" / f"{aid}.yaml").exists()
    assert _ask(home, wt).returncode == 0                 # once
    again = _ask(home, wt)
    assert again.returncode == 2 and _id(again.stderr) == aid   # and only once: a new request
    assert pending.exists()


def test_a_grant_is_for_that_job_and_that_command_only(home: Path, wt: Path) -> None:
    make_job(home, "j2")
    aid = _id(_ask(home, wt).stderr)
    assert zen("approve", aid).returncode == 0
    other_job = _ask(home, home / "worktrees" / "j2", job="j2")
    assert other_job.returncode == 2 and _id(other_job.stderr) != aid
    other_cmd = _ask(home, wt, command="systemctl stop nginx")
    assert other_cmd.returncode == 2 and _id(other_cmd.stderr) != aid
    assert _ask(home, wt).returncode == 0


def test_deny_keeps_it_denied(home: Path, wt: Path) -> None:
    aid = _id(_ask(home, wt).stderr)
    r = zen("deny", aid)
    assert r.returncode == 0, r.stderr
    assert (home / "approvals" / "denied" / f"{aid}.yaml").exists()
    for _ in range(2):
        r = _ask(home, wt)
        assert r.returncode == 2 and "denied" in r.stderr
    assert not (home / "approvals" / "pending" / f"{aid}.yaml").exists()
    states = {a["id"]: a["state"] for a in zen_json("approvals")}
    assert states == {aid: "denied"}
    r = zen("approve", aid)
    assert r.returncode == 1 and one_line(r.stderr) and "already denied" in r.stderr


def test_unknown_ids_get_one_sentence(home: Path, wt: Path) -> None:
    for cmd in ("approve", "deny"):
        r = zen(cmd, "0123456789ab")
        assert r.returncode == 1 and one_line(r.stderr) and "no pending approval" in r.stderr
        r = zen(cmd, "../../etc/passwd")
        assert r.returncode == 1 and one_line(r.stderr)


def test_approvals_lists_text_and_json(home: Path, wt: Path) -> None:
    r = zen("approvals")
    assert r.returncode == 0 and "no approval requests" in r.stdout
    aid = _id(_ask(home, wt).stderr)
    r = zen("approvals")
    assert r.returncode == 0 and aid in r.stdout and "pending" in r.stdout and "zen approve" in r.stdout


def test_a_check_from_a_shell_reports_approval_without_writing_or_using_anything(home: Path, wt: Path) -> None:
    r = zen("guard", "check", "--json", "--cwd", str(wt), "--", CMD, env=job_env(home, "j1"))
    assert r.returncode == 4
    d = json.loads(r.stdout)
    assert d["decision"] == "approval" and "zen approve" in d["reason"]
    assert list((home / "approvals" / "pending").iterdir()) == []

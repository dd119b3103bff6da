"""Autonomy earned from evidence: accept / reject, promote / demote / override, kill switch files.

The guardian's enforcement of levels and of the kill switch on running agents is tested with the
guardian and the supervisor (tests/guard, tests/supervisor); here: the evidence rules and CLI."""

from __future__ import annotations

import json
from pathlib import Path

from tests.helpers import one_line, zen, zen_json
from tests.test_jobs import claim_all
from zen.store.home import Home
from zen.store.jobs import JobStore


def harvested_job(home: Path, name: str) -> str:
    """A job record that went through intake and was harvested (the harvest itself is tested elsewhere)."""
    job_id = zen("dispatch", f"task {name}", "--name", name).stdout.strip()
    claim_all(home)
    store = JobStore(Home(home))
    store.append(job_id, "worktree.created", path=str(home / "worktrees" / job_id), branch=f"zen/{job_id}")
    store.append(job_id, "agent.spawned", session="s", target="%1")
    store.append(job_id, "agent.exited", exit_code=0)
    store.append(job_id, "harvest.done", actor="harvest", branch=f"zen/review/{job_id}", commit="abc123",
                 files=1, insertions=1, deletions=0)
    return job_id


def level(domain: str) -> str:
    rows = zen_json("autonomy")
    return next(r["level"] for r in rows if r["domain"] == domain)


def test_promotion_is_refused_without_evidence_and_allowed_with_it(lane: Path, home: Path) -> None:
    r = zen("autonomy", "promote", "code")
    assert r.returncode == 1 and one_line(r.stderr) and "5 more accepted" in r.stderr
    assert level("code") == "suggest"
    for i in range(4):
        assert zen("accept", harvested_job(home, f"job-{i}")).returncode == 0
    r = zen("autonomy", "promote", "code")
    assert r.returncode == 1 and "1 more accepted" in r.stderr
    assert zen("accept", harvested_job(home, "job-4")).returncode == 0
    row = next(r for r in zen_json("autonomy") if r["domain"] == "code")
    assert row["eligible"] is True and row["accepted"] == 5
    r = zen("autonomy", "promote", "code")
    assert r.returncode == 0, r.stderr
    assert level("code") == "act-and-report"
    text = (home / "policy" / "autonomy.yaml").read_text()
    assert "code: act-and-report" in text and "# Levels, lowest first" in text  # comments kept
    kinds = [json.loads(x)["kind"] for x in (home / "evidence" / "code.jsonl").read_text().splitlines()]
    assert kinds == ["accepted"] * 5 + ["promoted"]


def test_a_correction_demotes_and_resets_the_count(lane: Path, home: Path) -> None:
    for i in range(5):
        zen("accept", harvested_job(home, f"ok-{i}"))
    bad = harvested_job(home, "bad")
    r = zen("reject", bad)
    assert r.returncode == 1 and "--correction" in r.stderr and one_line(r.stderr)
    r = zen("reject", bad, "--correction", "it deleted the migration tests", "--json")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["demoted_to"] == "observe"
    assert level("code") == "observe"
    row = next(r for r in zen_json("autonomy") if r["domain"] == "code")
    assert row["accepted"] == 0 and row["next_level"] == "suggest"
    # the verdict is in the job's own timeline too, and cannot be given twice
    assert any(e["type"] == "review.rejected" for e in JobStore(Home(home)).events(bad))
    r = zen("accept", bad)
    assert r.returncode == 1 and "already has a verdict" in r.stderr


def test_override_is_recorded_and_needs_a_reason(lane: Path, home: Path) -> None:
    r = zen("autonomy", "promote", "infra", "--override")
    assert r.returncode == 1 and "--reason" in r.stderr
    r = zen("autonomy", "promote", "infra", "--override", "--reason", "audited by ops")
    assert r.returncode == 0
    assert level("infra") == "suggest"
    [rec] = [json.loads(x) for x in (home / "evidence" / "infra.jsonl").read_text().splitlines()]
    assert rec["kind"] == "override" and rec["reason"] == "audited by ops" and rec["to"] == "suggest"
    assert zen("autonomy", "demote", "infra").returncode == 0
    assert level("infra") == "observe"


def test_accept_refuses_an_unharvested_job(lane: Path, home: Path) -> None:
    job_id = zen("dispatch", "not yet", "--name", "notyet").stdout.strip()
    claim_all(home)
    r = zen("accept", job_id)
    assert r.returncode == 1 and "not been harvested" in r.stderr and one_line(r.stderr)


def test_kill_switch_engage_and_release_without_a_supervisor(lane: Path, home: Path) -> None:
    r = zen("kill-switch", "--reason", "agent went rogue")
    assert r.returncode == 0, r.stderr
    kill = home / "control" / "KILL"
    assert kill.is_file() and "agent went rogue" in kill.read_text()
    st = zen("status")
    assert "KILL SWITCH ENGAGED" in st.stderr
    assert zen_json("status")["supervisor"]["kill_switch"] is True
    assert all(r["effective_level"] == "observe" for r in zen_json("autonomy"))
    assert level("code") == "suggest"  # the domain's own level is untouched
    r = zen("kill-switch", "--release")
    assert r.returncode == 0 and not kill.exists()
    assert next(r for r in zen_json("autonomy") if r["domain"] == "code")["effective_level"] == "suggest"
    log = [json.loads(x)["type"] for x in (home / "logs" / "control.jsonl").read_text().splitlines()]
    assert log == ["killswitch.engaged", "killswitch.released"]
    r = zen("kill-switch", "--release")
    assert r.returncode == 1 and "not engaged" in r.stderr

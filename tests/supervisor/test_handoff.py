"""handoff.md (issue 7): task, constraints by level, orientation, and the warnings of the past
incidents that match the job's lane, domain or paths, and not the others."""

from __future__ import annotations

from pathlib import Path

from tests.helpers import git, make_repo, zen
from tests.supervisor.util import dispatch_cmd, wait_state
from zen.orchestration.intake.dispatch import build_task
from zen.orchestration.job import handoff
from zen.store.config import Config
from zen.store.home import Home

FORCE_PUSH = "force-pushed over the shared release branch"
CREDENTIALS = "copied live credentials into a committed debug log"
MIGRATION = "destructive migration against the shared staging database"


def render_for(home: Path, repo: Path, prompt: str, lane: str) -> str:
    h = Home(home)
    task = build_task(h, Config.load(h), {"prompt": prompt, "lane": lane})
    return handoff.render(task, job_id="J", lane=lane, repo=repo, worktree=repo, branch="zen/J",
                          base_commit=git(repo, "rev-parse", "HEAD"), level="suggest", home=h)


def test_a_code_job_gets_the_code_incidents_and_not_the_data_one(zh: Path, lane: Path) -> None:
    text = render_for(zh, lane, "Tidy the README wording", "app")
    assert FORCE_PUSH in text and CREDENTIALS in text
    assert MIGRATION not in text
    assert "Autonomy level **suggest**" in text and "review branch" in text
    assert "Tidy the README wording" in text and "`README.md`" in text  # the likely file


def test_a_data_lane_gets_the_migration_incident(zh: Path, tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "warehouse")
    assert zen("lane", "add", "warehouse", str(repo), "--domain", "data").returncode == 0
    text = render_for(zh, repo, "Add an index to orders", "warehouse")
    assert MIGRATION in text and "disposable database" in text
    assert FORCE_PUSH not in text


def test_paths_the_task_touches_match_an_incident_of_another_domain(zh: Path, tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "svc", {"migrations/001_orders.sql": "create table orders();\n", "app.py": "x=1\n"})
    assert zen("lane", "add", "svc", str(repo)).returncode == 0
    text = render_for(zh, repo, "Rename the orders migrations", "svc")
    assert "`migrations/001_orders.sql`" in text
    assert MIGRATION in text  # by path, though the lane's domain is code


def test_the_supervisor_writes_the_handoff_before_the_agent_starts(zh: Path, sup) -> None:
    job = dispatch_cmd('test -s "$ZEN_HANDOFF" && grep -q "past incidents" "$ZEN_HANDOFF"', "reads-handoff")
    s = wait_state(zh, job, "harvested", timeout=30)
    assert s.exit_code == 0
    assert "## Warnings from past incidents" in (zh / "jobs" / job / "handoff.md").read_text()


def test_each_base_commit_gets_its_own_history_and_files(zh: Path, lane: Path) -> None:
    """The orientation is read once per base commit and kept: a job on a newer base sees the
    newer history and files, one on the old base still sees the old."""
    old = render_for(zh, lane, "Document the billing export", "app")
    (lane / "billing_export.py").write_text("x = 1\n")
    git(lane, "add", "billing_export.py")
    git(lane, "commit", "-qm", "Billing export skeleton")
    new = render_for(zh, lane, "Document the billing export", "app")
    assert "Billing export skeleton" in new and "`billing_export.py`" in new
    assert "Billing export skeleton" not in old and "billing_export.py" not in old
    h = Home(zh)
    task = build_task(h, Config.load(h), {"prompt": "Document the billing export", "lane": "app"})
    first = git(lane, "rev-list", "--max-parents=0", "HEAD")
    again = handoff.render(task, job_id="J", lane="app", repo=lane, worktree=lane, branch="zen/J",
                           base_commit=first, level="suggest", home=h)
    assert "Billing export skeleton" not in again and "billing_export.py" not in again

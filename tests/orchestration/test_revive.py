"""zen recover's decisions in-process (zen.orchestration.job.revive, DESIGN 13): which jobs can be
recovered and why not, the recovery handoff a new session reads (goal, commits and files of the
real worktree, reports, the last output), and the recovery lease."""

from __future__ import annotations

import fcntl
import os
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import git, one_line
from zen.adapters.tmux import Tmux
from zen.core.ids import iso, utcnow
from zen.core.model import Task
from zen.orchestration.job import revive
from zen.orchestration.job.revive import RecoveryRefused, recover, recoverable, recovery_handoff
from zen.store.home import Home
from zen.store.jobs import JobStore

JOB = "20270101T000000Z-fix-login-3fa9"
PARENT = "20270101T000000Z-parent-0001"


def make_job(h: Home, **task: Any) -> JobStore:
    store = JobStore(h)
    store.create(Task.model_validate({"id": JOB, "name": "fix-login", "prompt": "Fix the login form\n",
                                      "lane": "app", "created_at": iso(utcnow()), **task}))
    return store


def worktree(repo: Path, tmp_path: Path) -> tuple[Path, str]:
    wt = tmp_path / "wt"
    base = git(repo, "rev-parse", "HEAD")
    git(repo, "worktree", "add", "-q", "-b", f"zen/{JOB}", str(wt), base)
    return wt, base


def started(store: JobStore, wt: Path, base: str, session: str = "zen-none") -> None:
    store.append(JOB, "worktree.created", path=str(wt), branch=f"zen/{JOB}", base_commit=base)
    store.append(JOB, "agent.spawned", session=session, pid=1)


# -- recoverable --------------------------------------------------------------------------------

def test_a_queued_job_has_nothing_to_recover(home: Path) -> None:
    h = Home(home)
    make_job(h)
    assert recoverable(h, JOB) == f"job {JOB} has not started yet"


def test_a_cancelled_job_is_dispatched_again_not_recovered(home: Path) -> None:
    h = Home(home)
    store = make_job(h)
    store.append(JOB, "job.cancelled", actor="human", reason="no")
    assert recoverable(h, JOB) == f"job {JOB} was cancelled; dispatch the task again instead"


def test_a_job_whose_worktree_is_gone_cannot_go_on(home: Path, tmp_path: Path) -> None:
    h = Home(home)
    store = make_job(h)
    started(store, tmp_path / "removed", "0" * 40)
    why = recoverable(h, JOB)
    assert why is not None and "has no worktree any more" in why and one_line(why)


def test_a_dead_agent_with_its_worktree_is_recoverable(home: Path, git_repo: Path, tmp_path: Path) -> None:
    h = Home(home)
    store = make_job(h)
    wt, base = worktree(git_repo, tmp_path)
    started(store, wt, base)
    assert recoverable(h, JOB) is None            # no pane at all: its agent is gone
    store.append(JOB, "agent.exited", exit_code=137, signal=9)
    assert recoverable(h, JOB) is None


def test_a_job_whose_agent_still_runs_is_not_recovered(home: Path, git_repo: Path, tmp_path: Path) -> None:
    h = Home(home)
    store = make_job(h)
    wt, base = worktree(git_repo, tmp_path)
    session = f"zen-{JOB}"
    Tmux.for_home(h).start_pane(session, wt, ["sleep", "60"], {"PATH": "/usr/bin:/bin"}, tmp_path / "pane.log")
    started(store, wt, base, session)
    why = recoverable(h, JOB)
    assert why == f"job {JOB}'s agent is still running (zen attach {JOB}, or zen cancel it first)"


# -- the recovery handoff -----------------------------------------------------------------------

def test_the_handoff_names_the_worktree_and_says_nothing_was_done_yet(home: Path, git_repo: Path, tmp_path: Path) -> None:
    h = Home(home)
    store = make_job(h)
    wt, base = worktree(git_repo, tmp_path)
    started(store, wt, base)
    text = recovery_handoff(h, JOB, store.task(JOB))
    assert text.startswith(f"# Recovery of job {JOB}: fix-login\n")
    assert f"in the same worktree, `{wt}` (branch `zen/{JOB}`)" in text
    assert "## The goal\n\nFix the login form\n\n## What was done" in text
    assert "- (a one-turn task)" in text
    assert "- No commits since the base yet." in text and "- No files changed against the base." in text
    assert "The task above, from where the work stands." in text
    assert f"The original handoff is {home / 'jobs' / JOB / 'handoff.md'}." in text


def test_the_handoff_lists_the_commits_and_changed_files_of_the_real_worktree(home: Path, git_repo: Path,
                                                                              tmp_path: Path) -> None:
    h = Home(home)
    store = make_job(h)
    wt, base = worktree(git_repo, tmp_path)
    started(store, wt, base)
    (wt / "login.py").write_text("def check(): ...\n")
    git(wt, "add", "login.py")
    git(wt, "commit", "-qm", "Add the login check")
    (wt / "notes.txt").write_text("half done\n")          # untracked, left by the first session
    (wt / "README.md").write_text("# changed\n")          # modified, not committed
    text = recovery_handoff(h, JOB, store.task(JOB))
    sha = git(wt, "rev-parse", "HEAD")
    assert "- Commits on the branch since the base: 1:" in text
    assert f"  - {sha[:10]} Add the login check" in text
    assert "- Files changed against the base: `README.md`, `login.py`, `notes.txt`." in text


def test_the_handoff_says_how_the_agent_ended_and_shows_its_last_output_without_escapes(home: Path, git_repo: Path,
                                                                                      tmp_path: Path) -> None:
    h = Home(home)
    store = make_job(h)
    wt, base = worktree(git_repo, tmp_path)
    started(store, wt, base)
    store.append(JOB, "agent.exited", exit_code=None, signal=9)
    log = "".join(f"line {i}\n" for i in range(100)) + "\x1b[31mKilled\x1b[0m\n\n"
    (home / "jobs" / JOB / "pane.log").write_text(log)
    text = recovery_handoff(h, JOB, store.task(JOB))
    assert "(its agent ended with code None, signal 9)" in text
    output = text.split("## The agent's last output\n\n```\n")[1].split("\n```")[0].splitlines()
    assert len(output) == revive.OUTPUT_LINES and output[-1] == "Killed" and output[0] == "line 61"
    assert "\x1b" not in text


def test_a_goal_handoff_counts_its_turns_and_shows_the_last_reports(home: Path, git_repo: Path, tmp_path: Path) -> None:
    h = Home(home)
    store = make_job(h, goal="until-done", parent=PARENT, created_by=f"job:{PARENT}")
    wt, base = worktree(git_repo, tmp_path)
    started(store, wt, base)
    for i in range(7):
        store.append(JOB, "goal.turn", turn=i + 1, at=1.0 + i)
        store.append(JOB, "team.report", actor="agent", status="progress", summary=f"step {i}")
    store.append(JOB, "team.report", actor="agent", status="blocked", blocker="no database")
    text = recovery_handoff(h, JOB, store.task(JOB))
    assert "- Goal turns so far: 7." in text
    reports = [ln for ln in text.splitlines() if ln.startswith("- Reported ")]
    assert reports == ["- Reported progress: step 3", "- Reported progress: step 4", "- Reported progress: step 5",
                       "- Reported progress: step 6", "- Reported blocked: no database"]
    assert "Report with agent_report when it is done (or blocked)." in text


def test_a_handoff_without_a_pane_log_has_an_empty_output_block(home: Path, git_repo: Path, tmp_path: Path) -> None:
    h = Home(home)
    store = make_job(h)
    wt, base = worktree(git_repo, tmp_path)
    started(store, wt, base)
    assert "## The agent's last output\n\n```\n```" in recovery_handoff(h, JOB, store.task(JOB))


# -- recover ------------------------------------------------------------------------------------

def test_recover_of_a_queued_job_is_refused_and_writes_nothing(home: Path) -> None:
    h = Home(home)
    store = make_job(h)
    before = store.events(JOB)
    with pytest.raises(RecoveryRefused) as exc:
        recover(h, JOB)
    assert str(exc.value) == f"job {JOB} has not started yet"
    assert store.events(JOB) == before
    assert not store.paths(JOB).recovery_handoff.exists()


def test_a_second_recovery_while_one_holds_the_lease_is_refused(home: Path, git_repo: Path, tmp_path: Path) -> None:
    h = Home(home)
    store = make_job(h)
    wt, base = worktree(git_repo, tmp_path)
    started(store, wt, base)
    fd = os.open(store.paths(JOB).recovery_lock, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        with pytest.raises(RecoveryRefused) as exc:
            recover(h, "fix-login")
        assert str(exc.value) == f"a recovery of job {JOB} is already running; wait for it"
    finally:
        os.close(fd)
    assert "recovery.started" not in [e["type"] for e in store.events(JOB)]

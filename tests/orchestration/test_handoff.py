"""handoff.md composed in-process (zen.orchestration.job.handoff, DESIGN 7): what the document tells
the agent for a task, its level, lane, history and leased paths, the worker's agreement, and the
warnings of the home's incidents; and `likely_files`, the orientation's guess of what it touches."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import git, make_repo
from zen.core.ids import parse_iso
from zen.core.model import Task
from zen.orchestration.job import handoff
from zen.orchestration.job.handoff import likely_files
from zen.store.home import Home

PARENT = "20270101T000000Z-parent-0001"
FORCE_PUSH = "force-pushed over the shared release branch"


def task(**kw: Any) -> Task:
    base: dict[str, Any] = {"id": "20270101T000000Z-fix-login-3fa9", "name": "fix-login", "prompt": "Fix the login form validation",
                            "lane": "app", "created_at": "2027-01-01T00:00:00.000Z"}
    return Task.model_validate({**base, **kw})


def render(repo: Path, t: Task | None = None, home: Path | None = None, base: str | None = None, **kw: Any) -> str:
    t = t or task()
    return handoff.render(t, job_id="J1", lane="app", repo=repo, worktree=repo, branch="zen/J1",
                          base_commit=base or git(repo, "rev-parse", "HEAD"),
                          home=Home(home) if home is not None else None, **kw)


def section(text: str, title: str) -> str:
    start = text.index(f"## {title}\n")
    nxt = text.find("\n## ", start + 1)
    return text[start: nxt if nxt != -1 else len(text)]


# -- likely_files -------------------------------------------------------------------------------

TRACKED = ["src/login/form.py", "src/login/validation.py", "src/logout.py", "docs/login.md",
           "tests/test_login_form_validation.py", "README.md"]


def test_files_mentioning_more_of_the_prompts_words_come_first() -> None:
    got = likely_files(TRACKED, "Fix the login form validation")
    assert got[0] == "tests/test_login_form_validation.py"       # login, form, validation
    assert set(got[1:3]) == {"src/login/form.py", "src/login/validation.py"}   # two each
    assert "src/logout.py" not in got and "README.md" not in got


def test_among_equal_scores_the_shorter_path_wins() -> None:
    assert likely_files(["a/very/deep/login.py", "login.py", "b/login.py"], "login") == \
        ["login.py", "b/login.py", "a/very/deep/login.py"]


def test_stop_words_and_short_words_never_match() -> None:
    assert likely_files(["the/and/for.py", "tests/test_file.py", "ab.py"], "the and for tests file ab") == []


def test_a_prompt_without_words_guesses_nothing() -> None:
    assert likely_files(TRACKED, "") == [] and likely_files(TRACKED, "!!! 42 ?") == []


def test_matching_is_case_insensitive_and_the_list_is_capped() -> None:
    many = [f"pkg/Billing{i:02}.py" for i in range(20)]
    got = likely_files(many, "BILLING")
    assert len(got) == 8 and got == sorted(got, key=lambda p: (len(p), p))
    assert len(likely_files(many, "billing", limit=3)) == 3


def test_a_huge_tree_is_looked_at_only_in_its_first_twenty_thousand_paths() -> None:
    tracked = [f"d/f{i}.txt" for i in range(20000)] + ["zz/invoice.py"]
    assert likely_files(tracked, "invoice") == []
    assert likely_files(["zz/invoice.py", *tracked], "invoice") == ["zz/invoice.py"]


# -- the document -------------------------------------------------------------------------------

def test_the_document_opens_with_the_task_and_who_does_it(git_repo: Path) -> None:
    text = render(git_repo, task(prompt="Fix the login form validation\n\n\n", domain="web"))
    assert text.startswith("# Handoff: fix-login\n")
    assert "Job `J1`, agent `sim`, lane `app`, domain `web`." in text
    assert "## Task\n\nFix the login form validation\n\n## Hard constraints" in text   # trailing blank lines trimmed


def test_a_task_without_a_domain_shows_a_dash(git_repo: Path) -> None:
    assert "domain `-`." in render(git_repo)


@pytest.mark.parametrize(("level", "words"), [("observe", "read and report only"),
                                              ("suggest", "harvested to a review branch"),
                                              ("act-and-report", "reversible actions beyond the worktree"),
                                              ("autonomous", "without per-action reports")])
def test_each_autonomy_level_says_what_it_allows(git_repo: Path, level: str, words: str) -> None:
    text = render(git_repo, level=level)
    line = next(ln for ln in text.splitlines() if ln.startswith("- Autonomy level"))
    assert f"**{level}**" in line and words in line


def test_no_level_given_means_suggest(git_repo: Path) -> None:
    assert "Autonomy level **suggest**: change files only inside this worktree" in render(git_repo)


def test_the_constraints_name_the_worktree_the_branch_and_everything_the_guardian_blocks(git_repo: Path) -> None:
    text = section(render(git_repo), "Hard constraints")
    assert f"this worktree only, `{git_repo}` (branch `zen/J1`)" in text
    assert "`zen/review/J1`" in text
    for blocked in handoff.BLOCKED:
        assert f"  - {blocked}" in text


def test_the_deadline_is_the_tasks_timeout_from_now(git_repo: Path) -> None:
    before = datetime.now(UTC)
    text = render(git_repo, task(timeout="2h"))
    m = re.search(r"- Deadline: (\S+) \(2h from the start\)", text)
    assert m, text
    at = parse_iso(m.group(1))
    assert before + timedelta(hours=2) - timedelta(seconds=1) <= at <= datetime.now(UTC) + timedelta(hours=2)


def test_paths_leased_in_advance_are_listed_and_absent_otherwise(git_repo: Path) -> None:
    assert "Leased for you from the start" not in render(git_repo)
    text = render(git_repo, task(paths=["src/app.py", "docs/"]))
    assert "- Leased for you from the start: `src/app.py`, `docs/`." in text


def test_the_orientation_shows_the_lane_base_and_recent_history(git_repo: Path) -> None:
    head = git(git_repo, "rev-parse", "HEAD")
    text = section(render(git_repo, task(base="main")), "Orientation")
    assert f"main checkout `{git_repo}`" in text
    assert f"Base: `main` at commit `{head}`." in text
    assert "add changelog" in text and "initial commit" in text
    assert text.index("add changelog") < text.index("initial commit")   # newest first


def test_history_is_cut_to_the_recent_count(git_repo: Path) -> None:
    for i in range(5):
        (git_repo / f"n{i}.txt").write_text(str(i))
        git(git_repo, "add", "-A")
        git(git_repo, "commit", "-qm", f"note {i}")
    text = render(git_repo, recent=3)
    block = text.split("```")[1]
    assert block.strip().splitlines()[0].endswith("note 4") and len(block.strip().splitlines()) == 3
    assert "initial commit" not in block


def test_a_base_without_a_history_says_unavailable_and_guesses_no_files(git_repo: Path) -> None:
    text = render(git_repo, base="0" * 40)
    assert "```\n(unavailable)\n```" in text
    assert "most likely touches" not in text


def test_a_symbolic_base_is_read_again_each_time_not_kept(git_repo: Path) -> None:
    """Only a full commit id names fixed content: a job on `HEAD` after a new commit sees it."""
    t = task(prompt="Describe the payments module")
    assert "payments.py" not in render(git_repo, t, base="HEAD")
    (git_repo / "payments.py").write_text("x = 1\n")
    git(git_repo, "add", "-A")
    git(git_repo, "commit", "-qm", "payments module")
    text = render(git_repo, t, base="HEAD")
    assert "payments module" in text and "`payments.py`" in text


def test_the_likely_files_come_from_the_base_not_the_worktrees_untracked_files(git_repo: Path) -> None:
    (git_repo / "src" / "login_untracked.py").write_text("")
    text = render(git_repo, task(prompt="Fix the hello app"))
    assert "- Files this task most likely touches:\n  - `src/app.py`" in text
    assert "login_untracked" not in text


def test_a_job_a_human_started_is_told_about_the_team_tools(git_repo: Path) -> None:
    text = render(git_repo)
    assert "## Team tools" in text and "agent_spawn" in text
    assert "Coordination agreement" not in text


@pytest.mark.parametrize(("goal", "words"), [(None, "(one task)"),
                                             ("until-done", "continued by zen after each turn")])
def test_a_worker_gets_the_coordination_agreement_naming_its_parent_and_goal(git_repo: Path, goal: str | None,
                                                                             words: str) -> None:
    t = task(parent=PARENT, created_by=f"job:{PARENT}", paths=["src/app.py"], goal=goal)
    text = render(git_repo, t)
    agreement = section(text, "Coordination agreement (you are a worker)")
    assert f"Parent job: `{PARENT}` started you (`created_by: job:{PARENT}`)" in agreement
    assert words in agreement
    assert "Your paths: `src/app.py`." in agreement
    assert "agent_report" in agreement and "agent_message" in agreement
    assert "## Team tools" not in text


def test_a_worker_without_paths_is_told_none_were_leased(git_repo: Path) -> None:
    text = render(git_repo, task(parent=PARENT, created_by=f"job:{PARENT}"))
    assert "Your paths: none leased in advance." in text


def test_without_a_home_there_are_no_incident_warnings(git_repo: Path) -> None:
    assert "past incidents" not in render(git_repo, task(domain="code"))


def test_the_code_domains_example_incidents_warn_a_code_job(home: Path, git_repo: Path) -> None:
    text = render(git_repo, task(domain="code"), home=home)
    warnings = section(text, "Warnings from past incidents")
    assert FORCE_PUSH in warnings
    assert "`zen incident show 2026-03-14-force-push-over-shared-branch`" in warnings
    assert "  - Never push to main, master, release/* or production" in warnings


INCIDENT = """zen: 1
id: {id}
title: {title}
date: 2026-11-01
domain: ops
lanes: [{lanes}]
paths: []
tags: []
what_happened: |
  Something went wrong.
root_cause: |
  A cause.
impact: |
  An impact.
prevention: |
  First line of prevention.
  Second line that is not shown.
mitigations: []
controls:
  guardian_rules: {rules}
  preflight_checks: []
  handoff_warnings: {warnings}
"""


def write_incident(home: Path, id: str, title: str, lanes: str = "app", warnings: str = "[]",
                   rules: str = "[]") -> None:
    (home / "incidents" / f"{id}.yaml").write_text(INCIDENT.format(id=id, title=title, lanes=lanes,
                                                                    warnings=warnings, rules=rules))


def test_an_incident_of_the_lane_warns_with_its_own_words(home: Path, git_repo: Path) -> None:
    write_incident(home, "2026-11-01-lane-thing", "The lane broke", warnings='["Mind the lane.", "And its tests."]')
    text = render(git_repo, task(domain="ops-other"), home=home)
    warnings = section(text, "Warnings from past incidents")
    assert "- **The lane broke** (`zen incident show 2026-11-01-lane-thing`)\n  - Mind the lane.\n  - And its tests." \
        in warnings


def test_an_incident_with_rules_but_no_warnings_shows_its_preventions_first_line(home: Path, git_repo: Path) -> None:
    rules = '[{id: incident.no-curl, reason: no curl, match: {command: [curl]}}]'
    write_incident(home, "2026-11-02-rules-only", "Curl went out", rules=rules)
    warnings = section(render(git_repo, task(domain="ops-other"), home=home), "Warnings from past incidents")
    assert "  - First line of prevention." in warnings and "Second line" not in warnings


def test_an_incident_with_neither_rules_nor_warnings_is_not_shown(home: Path, git_repo: Path) -> None:
    write_incident(home, "2026-11-03-no-controls", "Nothing to say")
    assert "Nothing to say" not in render(git_repo, task(domain="ops-other"), home=home)


def test_an_incident_of_another_lane_is_not_shown(home: Path, git_repo: Path) -> None:
    write_incident(home, "2026-11-04-other-lane", "Elsewhere", lanes="web", warnings='["Not for app."]')
    assert "Elsewhere" not in render(git_repo, task(domain="ops-other"), home=home)


def test_a_broken_incident_file_does_not_stop_the_handoff(home: Path, git_repo: Path) -> None:
    (home / "incidents" / "2026-11-05-broken.yaml").write_text("zen: 1\nid: [unclosed\n")
    write_incident(home, "2026-11-06-fine", "Still shown", warnings='["Fine."]')
    text = render(git_repo, task(domain="ops-other"), home=home)
    assert "Still shown" in text


def test_an_incident_matched_by_a_likely_files_path_warns_a_job_of_another_domain(home: Path, tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "svc", {"debug/trace.log": "x\n", "app.py": "x=1\n"})
    text = render(repo, task(prompt="Clean the debug trace output", domain="docs"), home=home)
    assert "`debug/trace.log`" in text
    assert "copied live credentials into a committed debug log" in text
    assert FORCE_PUSH not in text   # a code-domain incident without paths: not for a docs job


def test_the_document_is_the_same_for_the_same_inputs_but_the_deadline(git_repo: Path) -> None:
    def strip(text: str) -> str:
        return re.sub(r"- Deadline: \S+", "- Deadline: X", text)

    head = git(git_repo, "rev-parse", "HEAD")
    assert strip(render(git_repo, base=head)) == strip(render(git_repo, base=head))

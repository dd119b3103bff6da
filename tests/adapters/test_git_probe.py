"""The quick repository questions of `zen dispatch`, `zen lane add` and preflight (git binary,
no GitPython), on real repositories in temp dirs."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers import git, make_repo
from zen.adapters import git_probe
from zen.orchestration.job.preflight import FAIL, PASS, Report, _lane
from zen.store.home import Home


def test_the_questions_on_a_repo_a_subdir_a_detached_head_and_a_plain_dir(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    assert git_probe.is_repo(repo) and git_probe.is_repo(repo / "src")
    assert git_probe.toplevel(repo / "src") == repo.resolve()
    assert git_probe.current_branch(repo) == "main"
    assert git_probe.resolve_commit(repo, "main") == git(repo, "rev-parse", "main")
    assert git_probe.resolve_commit(repo, "main~1") == git(repo, "rev-parse", "main~1")
    assert git_probe.resolve_commit(repo, "nope") is None
    git(repo, "checkout", "-q", "--detach", "main~1")
    assert git_probe.current_branch(repo) is None
    plain = tmp_path / "plain"
    plain.mkdir()
    assert not git_probe.is_repo(plain) and git_probe.toplevel(plain) is None
    assert git_probe.resolve_commit(plain, "HEAD") is None and not git_probe.is_repo(tmp_path / "missing")


def test_an_inherited_git_dir_does_not_redirect_the_questions(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    repo = make_repo(tmp_path / "repo")
    other = make_repo(tmp_path / "other", branch="trunk")
    monkeypatch.setenv("GIT_DIR", str(other / ".git"))
    monkeypatch.setenv("GIT_WORK_TREE", str(other))
    assert git_probe.toplevel(repo) == repo.resolve() and git_probe.current_branch(repo) == "main"
    assert git_probe.resolve_commit(repo, "trunk") is None


@pytest.mark.parametrize("case", ["ok", "bad base", "not a repo"])
def test_preflight_tells_a_lane_that_is_not_a_repo_from_one_whose_base_is_missing(tmp_path: Path, case: str) -> None:
    path = make_repo(tmp_path / "repo") if case != "not a repo" else tmp_path / "plain"
    path.mkdir(exist_ok=True)
    report = Report()
    _lane(Home(tmp_path / "home"), report, "app", {"path": str(path), "base": "nope" if case == "bad base" else "main"})
    (check,) = report.checks
    assert check.status == (PASS if case == "ok" else FAIL)
    if case == "bad base":
        assert "base 'nope' does not resolve" in check.message
    if case == "not a repo":
        assert "is not a git repository" in check.message

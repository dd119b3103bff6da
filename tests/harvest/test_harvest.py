"""Harvest on real repositories with real worktrees: what ends up on zen/review/<id>, what never
does, what the agent's own worktree looks like afterwards, and what review.md and the timeline say."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests.helpers import git, zen
from tests.test_jobs import claim_all
from zen.adapters import git as zgit
from zen.errors import GitError, ZenError
from zen.orchestration.context import JobContext
from zen.orchestration.job.harvest import harvest
from zen.store.home import Home
from zen.store.jobs import JobStore


def start_job(home: Path, repo: Path, name: str = "work") -> tuple[str, Path]:
    """A job record as the supervisor leaves it after spawning: claimed, worktree created."""
    r = zen("dispatch", f"do the {name}", "--name", name)
    assert r.returncode == 0, r.stderr
    [job_id] = claim_all(home)
    wt = home / "worktrees" / job_id
    base = zgit.add_worktree(repo, wt, f"zen/{job_id}", "main")
    JobStore(Home(home)).append(job_id, "worktree.created", path=str(wt), branch=f"zen/{job_id}",
                                base_commit=base)
    return job_id, wt


def agent_state(wt: Path) -> tuple[str, str, str, str]:
    """What an agent would notice if harvest touched its worktree."""
    index = Path(git(wt, "rev-parse", "--path-format=absolute", "--git-path", "index"))
    return (git(wt, "rev-parse", "HEAD"), git(wt, "status", "--porcelain", "--untracked-files=all"),
            git(wt, "symbolic-ref", "HEAD"), index.read_bytes().hex())


def files_on(repo: Path, ref: str) -> set[str]:
    return set(git(repo, "ls-tree", "-r", "--name-only", ref).splitlines())


def test_agent_commits_and_untracked_files_land_on_the_review_branch(lane: Path, home: Path) -> None:
    job_id, wt = start_job(home, lane)
    (wt / "feature.py").write_text("x = 1\n")
    git(wt, "add", "feature.py")
    git(wt, "commit", "-q", "-m", "agent: add feature")
    agent_commit = git(wt, "rev-parse", "HEAD")
    (wt / "src" / "app.py").write_text("print('changed')\n")   # tracked, modified, not staged
    (wt / "new_dir").mkdir()
    (wt / "new_dir" / "notes.txt").write_text("untracked\n")   # untracked
    (wt / "README.md").unlink()                                # tracked, deleted
    before = agent_state(wt)

    result = harvest(JobContext.load(Home(home), job_id))

    assert agent_state(wt) == before  # HEAD, branch, index and files exactly as the agent left them
    branch = f"zen/review/{job_id}"
    assert result.branch == branch and git(lane, "rev-parse", branch) == result.commit
    log = git(lane, "log", "--format=%an|%s", f"main..{branch}").splitlines()
    assert log == ["zen|zen: uncommitted work of work", "zen test|agent: add feature"]
    assert git(lane, "rev-parse", f"{branch}^") == agent_commit  # the agent's commit is kept
    files = files_on(lane, branch)
    assert {"feature.py", "new_dir/notes.txt", "src/app.py"} <= files and "README.md" not in files
    assert git(lane, "show", f"{branch}:src/app.py") == "print('changed')"
    assert result.files == 4 and result.clean_merge is True and result.snapshot is True
    # the agent's branch did not move and no lane branch changed
    assert git(lane, "rev-parse", f"zen/{job_id}") == agent_commit
    assert git(lane, "status", "--porcelain") == ""


def test_ignored_files_and_zen_private_dirs_are_left_out(lane: Path, home: Path) -> None:
    (lane / ".gitignore").write_text("*.log\nbuild/\n")
    git(lane, "add", ".gitignore")
    git(lane, "commit", "-q", "-m", "ignore logs")
    job_id, wt = start_job(home, lane)
    (wt / "debug.log").write_text("noise\n")
    (wt / "build").mkdir()
    (wt / "build" / "out.bin").write_text("bin\n")
    (wt / ".zen-tmp" / "scratch.txt").write_text("tmp of the agent\n")
    (wt / ".zen").mkdir(exist_ok=True)
    (wt / ".zen" / "state").write_text("zen's\n")
    (wt / "real.txt").write_text("the work\n")

    result = harvest(JobContext.load(Home(home), job_id))

    files = files_on(lane, result.branch)
    assert "real.txt" in files
    assert not any(f.startswith((".zen", "build/")) or f.endswith(".log") for f in files), files
    assert result.files == 1 and result.insertions == 1


def test_the_agents_own_git_add_all_skips_zen_private_dirs(lane: Path, home: Path) -> None:
    _, wt = start_job(home, lane)
    (wt / ".zen-tmp" / "tmpfile").write_text("x\n")
    (wt / "a.txt").write_text("a\n")
    git(wt, "add", "-A")
    assert git(wt, "diff", "--cached", "--name-only") == "a.txt"


def test_harvesting_twice_with_nothing_new_gives_the_same_commit(lane: Path, home: Path) -> None:
    job_id, wt = start_job(home, lane)
    (wt / "one.txt").write_text("1\n")
    first = harvest(JobContext.load(Home(home), job_id))
    second = harvest(JobContext.load(Home(home), job_id))
    assert second.commit == first.commit
    assert len(git(lane, "rev-list", f"main..zen/review/{job_id}").splitlines()) == 1
    # new work after a harvest: a fresh snapshot on top of the agent's HEAD, not on the old one
    (wt / "two.txt").write_text("2\n")
    third = harvest(JobContext.load(Home(home), job_id))
    assert third.commit != first.commit
    assert git(lane, "rev-list", "--count", f"main..zen/review/{job_id}") == "1"
    assert files_on(lane, third.branch) >= {"one.txt", "two.txt"}
    types = [e["type"] for e in JobStore(Home(home)).events(job_id)]
    assert types.count("harvest.done") == 3


def test_nothing_uncommitted_means_the_branch_points_at_the_agents_head(lane: Path, home: Path) -> None:
    job_id, wt = start_job(home, lane)
    (wt / "f.txt").write_text("f\n")
    git(wt, "add", "f.txt")
    git(wt, "commit", "-q", "-m", "agent work")
    result = harvest(JobContext.load(Home(home), job_id))
    assert result.commit == git(wt, "rev-parse", "HEAD") and result.snapshot is False
    assert [c["subject"] for c in result.commits] == ["agent work"]


def test_an_agent_that_changed_nothing_harvests_to_the_base(lane: Path, home: Path) -> None:
    job_id, _ = start_job(home, lane)
    result = harvest(JobContext.load(Home(home), job_id))
    assert result.commit == git(lane, "rev-parse", "main")
    assert result.files == 0 and result.commits == []
    assert "none: the agent changed nothing" in (home / "jobs" / job_id / "review.md").read_text()


def test_review_md_and_the_harvest_done_event(lane: Path, home: Path) -> None:
    job_id, wt = start_job(home, lane, "docs")
    (wt / "guide.md").write_text("line 1\nline 2\nline 3\n")
    git(wt, "add", "guide.md")
    git(wt, "commit", "-q", "-m", "write the guide")
    (wt / "CHANGELOG.md").write_text("")  # deletes one line, uncommitted
    result = harvest(JobContext.load(Home(home), job_id))

    review = (home / "jobs" / job_id / "review.md").read_text()
    assert f"zen/review/{job_id}" in review and result.commit[:12] in review
    assert git(lane, "rev-parse", "main")[:12] in review  # the base commit
    assert "write the guide" in review and "zen: uncommitted work of docs" in review
    assert "2 files changed, 3 insertions(+), 1 deletions(-)" in review
    assert "guide.md" in review and "merges cleanly: yes" in review
    assert "> do the docs" in review

    store = JobStore(Home(home))
    done = [e for e in store.events(job_id) if e["type"] == "harvest.done"][-1]
    assert done["actor"] == "harvest"
    assert {k: done[k] for k in ("branch", "commit", "files", "insertions", "deletions", "clean_merge")} == {
        "branch": f"zen/review/{job_id}", "commit": result.commit, "files": 2,
        "insertions": 3, "deletions": 1, "clean_merge": True}
    snap = store.snapshot(job_id)
    assert snap.review_branch == f"zen/review/{job_id}" and snap.harvest_commit == result.commit


def test_a_conflict_with_the_current_base_is_reported(lane: Path, home: Path) -> None:
    job_id, wt = start_job(home, lane)
    (wt / "src" / "app.py").write_text("print('agent')\n")
    first = harvest(JobContext.load(Home(home), job_id))
    assert first.clean_merge is True
    # meanwhile a human changes the same line on main
    (lane / "src" / "app.py").write_text("print('human')\n")
    git(lane, "commit", "-q", "-am", "human edit")
    main_before = git(lane, "rev-parse", "main")
    second = harvest(JobContext.load(Home(home), job_id))
    assert second.clean_merge is False and second.conflicts == ["src/app.py"]
    assert second.commit == first.commit  # nothing new in the worktree
    review = (home / "jobs" / job_id / "review.md").read_text()
    assert "merges cleanly: NO" in review and "`src/app.py`" in review
    # the check merged nothing anywhere
    assert git(lane, "rev-parse", "main") == main_before and git(lane, "status", "--porcelain") == ""
    done = [e for e in JobStore(Home(home)).events(job_id) if e["type"] == "harvest.done"][-1]
    assert done["clean_merge"] is False


def test_a_diverged_but_compatible_base_still_merges_cleanly(lane: Path, home: Path) -> None:
    job_id, wt = start_job(home, lane)
    (wt / "agent.txt").write_text("agent\n")
    (lane / "human.txt").write_text("human\n")
    git(lane, "add", "human.txt")
    git(lane, "commit", "-q", "-m", "human work")
    assert harvest(JobContext.load(Home(home), job_id)).clean_merge is True


def test_observe_mode_writes_a_report_and_no_branch(lane: Path, home: Path) -> None:
    job_id, wt = start_job(home, lane)
    (wt / "idea.txt").write_text("idea\n")
    result = harvest(JobContext.load(Home(home), job_id), make_branch=False)
    assert result.branch is None
    assert git(lane, "branch", "--list", "zen/review/*") == ""
    review = (home / "jobs" / job_id / "review.md").read_text()
    assert "observe mode" in review and "idea.txt" in review


def test_a_missing_worktree_records_harvest_failed(lane: Path, home: Path) -> None:
    job_id, wt = start_job(home, lane)
    subprocess.run(["rm", "-rf", str(wt)], check=True)
    with pytest.raises(ZenError, match="is gone"):
        harvest(JobContext.load(Home(home), job_id))
    failed = [e for e in JobStore(Home(home)).events(job_id) if e["type"] == "harvest.failed"]
    assert len(failed) == 1 and "is gone" in failed[0]["reason"]


def test_harvest_works_without_any_git_identity(lane: Path, home: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    job_id, wt = start_job(home, lane)
    for role in ("AUTHOR", "COMMITTER"):
        monkeypatch.delenv(f"GIT_{role}_NAME")
        monkeypatch.delenv(f"GIT_{role}_EMAIL")
    monkeypatch.setenv("EMAIL", "")
    (wt / "x.txt").write_text("x\n")
    result = harvest(JobContext.load(Home(home), job_id))
    assert git(lane, "log", "-1", "--format=%an <%ae>", result.commit) == "zen <zen@localhost>"


def test_remove_worktree_refuses_unharvested_work(lane: Path, home: Path) -> None:
    job_id, wt = start_job(home, lane)
    base = git(lane, "rev-parse", "main")
    review = f"zen/review/{job_id}"
    assert not zgit.has_unharvested_work(wt, None, base)  # fresh worktree: nothing to lose
    (wt / "precious.txt").write_text("work\n")
    assert zgit.has_unharvested_work(wt, None, base)
    with pytest.raises(GitError, match="not on a review branch"):
        zgit.remove_worktree(lane, wt, review, base)
    assert (wt / "precious.txt").exists()
    harvest(JobContext.load(Home(home), job_id))
    assert not zgit.has_unharvested_work(wt, review, base)
    # a commit after the harvest is unharvested work again
    git(wt, "add", "precious.txt")
    git(wt, "commit", "-q", "-m", "later")
    assert zgit.has_unharvested_work(wt, review, base)
    harvest(JobContext.load(Home(home), job_id))
    zgit.remove_worktree(lane, wt, review, base)
    assert not wt.exists()
    assert git(lane, "rev-parse", f"zen/{job_id}") and git(lane, "rev-parse", review)  # branches stay


def test_add_worktree_is_idempotent_and_refuses_a_bad_base(lane: Path, tmp_path: Path) -> None:
    wt = tmp_path / "wt"
    base = zgit.add_worktree(lane, wt, "zen/x", "main")
    assert base == git(lane, "rev-parse", "main")
    assert zgit.add_worktree(lane, wt, "zen/x", "main") == base  # a restart re-runs it
    assert (wt / ".zen-tmp" / ".gitignore").exists()
    with pytest.raises(GitError, match="does not resolve"):
        zgit.add_worktree(lane, tmp_path / "wt2", "zen/y", "no-such-branch")
    with pytest.raises(GitError, match="already exists"):
        zgit.add_worktree(lane, tmp_path / "wt3", "zen/x", "main")


def test_harvest_works_when_the_repo_ignores_zens_own_dirs(tmp_path: Path) -> None:
    """A user's .gitignore may list .zen/ already; the snapshot must still leave it out and work."""
    from tests.helpers import make_repo
    from zen.adapters import git as g

    repo = make_repo(tmp_path / "r", {".gitignore": ".zen/\n.zen-tmp/\n", "a.txt": "a\n"})
    wt = tmp_path / "wt"
    g.add_worktree(repo, wt, "zen/x", "main")
    (wt / "new.txt").write_text("new\n")
    (wt / ".zen" / "private").write_text("zen's\n")
    snap = g.snapshot_commit(wt, "snapshot")
    files = g.out(repo, "ls-tree", "-r", "--name-only", snap.commit).splitlines()
    assert "new.txt" in files and not any(f.startswith(".zen") for f in files)


def test_a_same_size_edit_in_the_same_second_as_checkout_is_harvested(tmp_path: Path) -> None:
    """git trusts its stat cache for files older than the index; an edit that keeps the size and
    lands in the same second as the checkout is caught only because the index is then "racy".
    The scratch index must keep the real index's mtime, or a harvest a second later misses it."""
    import time

    from tests.helpers import make_repo, wait_until
    from zen.adapters import git as g

    repo = make_repo(tmp_path / "r", {"a.txt": "hello\n"})
    for i in range(10):
        wt = tmp_path / f"wt{i}"
        g.add_worktree(repo, wt, f"zen/x{i}", "main")
        (wt / "a.txt").write_text("howdy\n")  # same size
        index = Path(g.out(wt, "rev-parse", "--path-format=absolute", "--git-path", "index"))
        if int((wt / "a.txt").stat().st_mtime) != int(index.stat().st_mtime):
            continue  # the second turned over between checkout and edit: try again
        second = int(time.time())
        wait_until(lambda s=second: int(time.time()) > s, timeout=3, interval=0.02, message="the next second")
        snap = g.snapshot_commit(wt, "snapshot")
        assert g.out(repo, "show", f"{snap.commit}:a.txt") == "howdy"
        return
    raise AssertionError("could not edit within the checkout's second in 10 tries")


def test_the_json_form_of_a_harvest_keeps_its_fields_and_what_harvest_done_records(lane: Path, home: Path) -> None:
    """`zen harvest --json` prints Harvest.to_json(): the same document as before it was typed."""
    job_id, wt = start_job(home, lane)
    (wt / "added.txt").write_text("new\n")
    result = harvest(JobContext.load(Home(home), job_id))
    data = json.loads(json.dumps(result.to_json()))
    assert list(data) == ["job", "branch", "commit", "head", "snapshot", "base", "base_commit", "base_tip",
                          "commits", "files", "insertions", "deletions", "diffstat", "clean_merge",
                          "conflicts", "predicted_conflicts", "lane", "worktree", "review", "reported"]
    assert data["job"] == job_id and data["files"] == 1 and data["predicted_conflicts"] == []
    done = [e for e in JobStore(Home(home)).events(job_id) if e["type"] == "harvest.done"][-1]
    for key in ("branch", "commit", "files", "insertions", "deletions", "clean_merge", "head", "base_commit",
                "snapshot"):
        assert done[key] == data[key], key
    assert result.brief() == {"branch": data["branch"], "commit": data["commit"], "files": 1}


def test_review_md_names_the_files_that_configure_agents_first(lane: Path, home: Path) -> None:
    """Finding M12: a harvest committed `.claude/` hooks and a project `.mcp.json` with nothing to
    flag them; once landed they run in every later session, unguarded. review.md names them."""
    job_id, wt = start_job(home, lane)
    (wt / ".claude").mkdir()
    (wt / ".claude" / "settings.json").write_text('{"hooks": {}}\n')
    (wt / ".mcp.json").write_text("{}\n")
    (wt / "src" / "app.py").write_text("print('changed')\n")
    result = harvest(JobContext.load(Home(home), job_id))
    assert result.agent_config == [".claude/settings.json", ".mcp.json"]
    review = Path(result.review).read_text()
    section = review.split("## Files that configure agents", 1)[1]
    assert "`.claude/settings.json`" in section and "`.mcp.json`" in section and "src/app.py" not in section.split("##")[0]
    # an ordinary harvest says nothing of the kind
    other, wt2 = start_job(home, lane, name="plain")
    (wt2 / "src" / "app.py").write_text("print('plain')\n")
    plain = harvest(JobContext.load(Home(home), other))
    assert plain.agent_config == [] and "configure agents" not in Path(plain.review).read_text()

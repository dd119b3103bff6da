"""zen pr (issue 37): the harvested work pushed to the lane's remote as the review branch, and a
pull request opened through the forge's CLI with review.md as its body; never merged."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from tests.helpers import git, one_line, zen
from tests.supervisor.util import dispatch_sim, events, wait_state
from zen.store.home import Home

# a stand-in for GitHub's CLI: it records how it was called and the body it was given, and answers
# with a request's address as gh does
FAKE_GH = """#!/bin/sh
printf '%s\\n' "$@" > "$ZEN_TEST_GH_ARGS"
while [ $# -gt 0 ]; do [ "$1" = --body-file ] && cp "$2" "$ZEN_TEST_GH_BODY"; shift; done
echo https://github.com/acme/app/pull/7
"""


def _bare(tmp_path: Path, lane: Path) -> Path:
    bare = tmp_path / "remote.git"
    subprocess.run(["git", "init", "-q", "--bare", str(bare)], check=True)
    git(lane, "remote", "add", "origin", str(bare))
    return bare


def test_pr_pushes_the_harvested_commit_and_opens_a_request_through_gh_never_merging(
        zh: Path, lane: Path, tmp_path: Path, sup, monkeypatch) -> None:
    bare = _bare(tmp_path, lane)
    bindir = tmp_path / "bin"
    bindir.mkdir()
    (bindir / "gh").write_text(FAKE_GH)
    (bindir / "gh").chmod(0o755)
    args, body = tmp_path / "gh-args", tmp_path / "gh-body"
    monkeypatch.setenv("PATH", f"{bindir}:{os.environ['PATH']}")
    monkeypatch.setenv("ZEN_TEST_GH_ARGS", str(args))
    monkeypatch.setenv("ZEN_TEST_GH_BODY", str(body))
    job = dispatch_sim(zh, tmp_path, "proposed", [{"write": {"path": "p.txt", "content": "p\n"}}, {"exit": 0}])
    wait_state(zh, job, "harvested", timeout=30)
    main_before = git(lane, "rev-parse", "main")

    r = zen("pr", job, "--json")
    assert r.returncode == 0, r.stderr
    said = json.loads(r.stdout)
    harvested = git(lane, "rev-parse", f"zen/review/{job}")
    assert git(bare, "rev-parse", f"refs/heads/zen/review/{job}") == harvested == said["commit"]
    called = args.read_text().split("\n")
    assert called[:2] == ["pr", "create"]
    assert called[called.index("--base") + 1] == "main" and called[called.index("--head") + 1] == f"zen/review/{job}"
    assert body.read_text() == Home(zh).job(job).review.read_text()      # review.md is the body
    assert said["forge"] == "gh" and said["url"] == "https://github.com/acme/app/pull/7"
    assert git(lane, "rev-parse", "main") == main_before                 # nothing merged anywhere
    assert git(bare, "for-each-ref", "--format=%(refname)") == f"refs/heads/zen/review/{job}"  # only that
    assert [e["type"] for e in events(zh, job)].count("pr.opened") == 1


def test_without_a_forge_cli_pr_pushes_and_says_where_to_open_it(zh: Path, lane: Path, tmp_path: Path, sup,
                                                                   monkeypatch) -> None:
    bare = _bare(tmp_path, lane)
    job = dispatch_sim(zh, tmp_path, "pushed", [{"write": {"path": "q.txt", "content": "q\n"}}, {"exit": 0}])
    wait_state(zh, job, "harvested", timeout=30)
    monkeypatch.setenv("PATH", "/usr/bin:/bin")           # no gh, no glab
    r = zen("pr", job)
    assert r.returncode == 0, r.stderr
    assert f"zen/review/{job}" in r.stdout and "no gh or glab" in r.stdout
    assert git(bare, "rev-parse", f"refs/heads/zen/review/{job}") == git(lane, "rev-parse", f"zen/review/{job}")
    r = zen("pr", job, "--remote", "nowhere")
    assert r.returncode == 1 and one_line(r.stderr) and "no remote 'nowhere'" in r.stderr

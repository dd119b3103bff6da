"""zen pr JOB: the job's harvested work as a pull request on the lane's forge (issue 37). Never a merge.

The harvested commit is pushed to the lane repository's remote (origin unless told) as the job's
review branch; then, when the forge's CLI is installed, `gh pr create` (GitHub) or `glab mr create`
(GitLab) opens the request with the job's review.md as its body, from that branch into the lane's
base. Without one it says the branch and, for a GitHub or GitLab remote, the compare page to open.
zen never merges: the forge's own review and merge stay the humans'. Recorded as `pr.opened`.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from zen.adapters import git as g
from zen.core.events import Actor
from zen.core.events import EventType as E
from zen.core.results import Result
from zen.errors import GitError, ZenError
from zen.orchestration.lanes import resolve_lane
from zen.orchestration.read.query import resolve_job
from zen.store.config import Config
from zen.store.home import Home
from zen.store.jobs import JobStore

FORGES = ("gh", "glab")
_HOSTED = re.compile(r"^(?:https?://|ssh://)?(?:[^@/]+@)?(github\.com|gitlab\.com)[:/](.+?)(?:\.git)?/?$")


@dataclass(frozen=True)
class Opened(Result):
    job: str
    remote: str
    branch: str
    base: str
    commit: str
    forge: str | None            # gh | glab | None (pushed only)
    url: str | None              # the request's address (the forge's answer), or the compare page
    seq: int


def compare_url(remote_url: str, base: str, branch: str) -> str | None:
    m = _HOSTED.match(remote_url.strip())
    if m is None:
        return None
    host, path = m.groups()
    if host == "github.com":
        return f"https://github.com/{path}/compare/{base}...{branch}?expand=1"
    return f"https://gitlab.com/{path}/-/merge_requests/new?merge_request[source_branch]={branch}" \
           f"&merge_request[target_branch]={base}"


def _forge_argv(forge: str, base: str, branch: str, title: str, body: Path) -> list[str]:
    if forge == "gh":
        return ["gh", "pr", "create", "--base", base, "--head", branch, "--title", title, "--body-file", str(body)]
    return ["glab", "mr", "create", "--target-branch", base, "--source-branch", branch, "--title", title,
            "--description", body.read_text(errors="replace"), "--yes"]


def open_pr(home: Home, ref: str, *, remote: str = "origin") -> Opened:
    store = JobStore(home)
    job_id = resolve_job(home, ref)
    snap = store.snapshot(job_id)
    if not snap.harvest_commit or not snap.review_branch:
        raise ZenError(f"job {job_id} has no harvested work to propose (zen harvest {job_id} makes it)")
    lane = resolve_lane(Config.load(home), store.task(job_id))
    repo = Path(lane.repo)
    try:
        remote_url = g.out(repo, "remote", "get-url", remote, what=f"read the remote {remote}")
    except GitError:
        raise ZenError(f"the lane's repository {repo} has no remote {remote!r} (git remote add {remote} URL, "
                       "or zen pr --remote NAME)") from None
    branch = snap.review_branch
    g.push(repo, remote, f"{snap.harvest_commit}:refs/heads/{branch}")
    forge = next((f for f in FORGES if shutil.which(f)), None)
    url = compare_url(remote_url, lane.base, branch)
    if forge is not None:
        body = store.paths(job_id).review
        title = f"{snap.name or job_id} (zen job {job_id})"
        r = subprocess.run(_forge_argv(forge, lane.base, branch, title, body), cwd=repo, capture_output=True,
                           text=True, timeout=120, stdin=subprocess.DEVNULL)
        if r.returncode != 0:
            said = (r.stderr or r.stdout).strip().splitlines()
            raise ZenError(f"pushed {branch}, but {forge} could not open the request: "
                           f"{said[-1] if said else f'exit {r.returncode}'}")
        found = re.findall(r"https?://\S+", r.stdout)
        url = found[-1] if found else url
    ev = store.append(job_id, E.PR_OPENED, actor=Actor.HUMAN, remote=remote, branch=branch, base=lane.base,
                      commit=snap.harvest_commit, forge=forge, url=url)
    return Opened(job_id, remote, branch, lane.base, snap.harvest_commit, forge, url, int(ev["seq"]))


__all__ = ["Opened", "compare_url", "open_pr"]

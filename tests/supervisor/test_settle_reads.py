"""The end of a job reads its timeline once and refreshes its snapshot once (issue 34).

A real home, a real lane and a real worktree the agent committed in; the supervisor loop driven
in-process through test_replay's scripted tmux and manual clock. When the agent's pane dies, the
supervisor records the exit, harvests (a real review branch), closes the session and publishes
the job's state: the reads of the whole timeline and the refreshes of state.json that takes are
counted by wrapping the store's readers (read_events, Follower.read from the start) and
JobStore.snapshot (a refresh that may write state.json; coord's read-only look at the job at
harvest, write=False, is not one).
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.supervisor.test_replay import Replay
from zen.core.events import EventType as E
from zen.observe import snapshot as metrics
from zen.orchestration.context import JobContext
from zen.orchestration.job.spawn import Launched, branch_name, session_name
from zen.store import events as ev_store
from zen.store.follow import Follower
from zen.store.jobs import JobStore


class WorktreeReplay(Replay):
    """Replay whose spawner makes the job's real worktree (the agent then commits a file in it)."""

    def __init__(self, home: Path, repo: Path) -> None:
        self.repo = repo
        super().__init__(home)

    def _launch(self, ctx: JobContext, how: str) -> Launched:
        wt = self.home.worktree(ctx.job_id)
        branch = branch_name(ctx.job_id)
        base = subprocess.run(["git", "-C", str(self.repo), "rev-parse", "HEAD"], check=True,
                              capture_output=True, text=True).stdout.strip()
        subprocess.run(["git", "-C", str(self.repo), "worktree", "add", "-q", "-b", branch, str(wt), base],
                       check=True, capture_output=True)
        ctx.append(E.WORKTREE_CREATED, path=str(wt), branch=branch, base_commit=base)
        self.starts.append((ctx.job_id, how))
        session = session_name(ctx.job_id)
        info = self.tmux.add(session, len(self.starts))
        ctx.paths.pane_log.touch()
        ctx.append(E.AGENT_SPAWNED, session=session, target=info.pane_id, pid=None, argv=["agent"],
                   socket="scripted")
        return Launched(session, info.pane_id, None)

    def commit_in(self, job: str) -> None:
        """What the agent does: a file made and committed in its worktree."""
        wt = self.home.worktree(job)
        (wt / "made.txt").write_text("made\n")
        subprocess.run(["git", "-C", str(wt), "add", "made.txt"], check=True)
        subprocess.run(["git", "-C", str(wt), "-c", "user.name=a", "-c", "user.email=a@b", "commit", "-qm", "made"],
                       check=True)


@pytest.fixture
def wr(lane: Path, home: Path) -> Iterator[WorktreeReplay]:
    yield WorktreeReplay(home, lane)


class Counts:
    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.timeline_reads = 0
        self.snapshots = 0
        self.on = False
        real_read, real_snapshot, real_follow = ev_store.read_events, JobStore.snapshot, Follower.read

        def read_events(path: Path, offset: int = 0) -> Iterator[dict[str, Any]]:
            if self.on and offset == 0 and path.name == "events.jsonl":
                self.timeline_reads += 1
            return real_read(path, offset)

        def snapshot(store: JobStore, job_id: str, *, write: bool = True) -> Any:
            if self.on and write:
                self.snapshots += 1
            return real_snapshot(store, job_id, write=write)

        def follow(f: Follower) -> list[dict[str, Any]]:
            if self.on and f.offset == 0 and Path(f.path).name == "events.jsonl":
                self.timeline_reads += 1
            return real_follow(f)

        monkeypatch.setattr(ev_store, "read_events", read_events)
        monkeypatch.setattr(Follower, "read", follow)
        monkeypatch.setattr(JobStore, "snapshot", snapshot)


def test_the_end_of_a_job_reads_its_timeline_once_and_refreshes_its_snapshot_once(
        wr: WorktreeReplay, monkeypatch: pytest.MonkeyPatch) -> None:
    counts = Counts(monkeypatch)
    job = wr.dispatch("ends")
    wr.tick()
    assert wr.state(job) == "working"
    wr.commit_in(job)
    wr.tmux.die(session_name(job), exit_code=0)
    counts.on = True
    wr.tick()
    counts.on = False
    types = wr.types(job)
    assert "agent.exited" in types and "harvest.done" in types, types
    assert wr.state(job) == "harvested"
    assert session_name(job) in wr.tmux.killed
    published = json.loads(wr.home.job(job).metrics.read_text())       # metrics.json from that one read
    assert published == metrics.rebuild(wr.home.job(job).dir, job).to_json()
    assert (counts.timeline_reads, counts.snapshots) == (1, 1), \
        f"the end read the timeline {counts.timeline_reads}x and refreshed the snapshot {counts.snapshots}x"

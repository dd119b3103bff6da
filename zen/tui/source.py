"""Reading a home into `JobView` rows, incrementally: each job's timeline is read from the byte it
was read up to, so a change costs the new lines only, whatever the length of the history.

Ended jobs start from their `state.json` (one small read each, no replay), live and queued ones
from a replay of their timeline, which also tells since when they are in their state.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from zen.core import states
from zen.core.model import JobSnapshot
from zen.guard import approvals as approval_files
from zen.orchestration.job.peek import last_line
from zen.orchestration.read.query import pending_tasks
from zen.orchestration.read.schedule import breaker_status
from zen.orchestration.read.status import supervisor_status
from zen.store.follow import Follower
from zen.store.home import Home
from zen.store.jobs import JobStore
from zen.tui.rows import JobView

TOKEN_KEYS = ("input_tokens", "output_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")


@dataclass
class _Tracked:
    snap: JobSnapshot
    timeline: Follower
    since: str | None
    line: str = ""


@dataclass(frozen=True)
class Header:
    home: str
    supervisor: str
    supervisor_running: bool
    kill: str | None               # the kill switch's note when engaged
    breaker_open: bool
    breaker: str


def short_path(path: Path) -> str:
    home = os.environ.get("HOME")
    text = str(path)
    if home and (text == home or text.startswith(home.rstrip("/") + "/")):
        return "~" + text[len(home.rstrip("/")):]
    return text


def view_of(snap: JobSnapshot, since: str | None, line: str, approvals: int = 0) -> JobView:
    usage = snap.usage or {}
    tokens = int(sum(usage.get(k, 0) for k in TOKEN_KEYS)) if any(k in usage for k in TOKEN_KEYS) else None
    cost = usage.get("cost_usd")
    return JobView(
        job=snap.job, name=snap.name or snap.job, state=snap.state.value, reason=snap.reason,
        agent=snap.agent or "", lane=snap.lane or "", created_at=snap.created_at, since=since,
        last_line=line, tokens=tokens, cost_usd=float(cost) if cost is not None else None,
        approvals=approvals, tmux_session=snap.tmux_session, worktree=snap.worktree,
        review_branch=snap.review_branch, base_commit=snap.base_commit, exit_code=snap.exit_code,
        seq=snap.seq, anomalies=snap.anomalies, anomaly=snap.anomaly)


class HomeSource:
    def __init__(self, home: Home) -> None:
        self.home = home
        self.store = JobStore(home)
        self._jobs: dict[str, _Tracked] = {}
        self._approvals: dict[str, int] = {}

    # -- jobs ------------------------------------------------------------------------------------
    def job_ids(self) -> list[str]:
        return self.store.ids()

    def _first_look(self, job_id: str) -> _Tracked:
        path = self.store.events_path(job_id)
        try:
            size = path.stat().st_size
        except OSError:
            size = 0
        cached = self.store.snapshot(job_id, write=False)
        if cached.state.final:
            # events after `size` are folded later; any the snapshot already holds are skipped by seq
            return _Tracked(cached, Follower(path, size), cached.ended_at or cached.updated_at,
                            last_line(self.store.dir(job_id)))
        t = _Tracked(JobSnapshot(job=job_id), Follower(path), None)
        self._fold(t, t.timeline.read())
        t.line = last_line(self.store.dir(job_id))
        return t

    @staticmethod
    def _fold(t: _Tracked, events: list[dict[str, Any]]) -> bool:
        moved = False
        for ev in events:
            if int(ev.get("seq") or 0) <= t.snap.seq:
                continue
            before = (t.snap.state, t.snap.reason)
            states.apply(t.snap, ev)
            moved = True
            if (t.snap.state, t.snap.reason) != before or t.since is None:
                t.since = str(ev.get("ts") or "") or t.since
        return moved

    def view(self, job_id: str, *, output: bool = False) -> JobView | None:
        """The job's row brought up to date (its last output line too when `output`)."""
        t = self._jobs.get(job_id)
        if t is None:
            if not self.store.exists(job_id):
                return None
            t = self._jobs[job_id] = self._first_look(job_id)
        else:
            self._fold(t, t.timeline.read())
            if output:
                t.line = last_line(self.store.dir(job_id))
        return view_of(t.snap, t.since, t.line, self._approvals.get(job_id, 0))

    def forget(self, job_id: str) -> None:
        self._jobs.pop(job_id, None)

    def all_views(self) -> list[JobView]:
        self.refresh_approvals()
        out = [v for job_id in self.job_ids() if (v := self.view(job_id)) is not None]
        known = {v.job for v in out}
        return out + [p for p in self.pending() if p.job not in known]

    # -- the rest of the home ----------------------------------------------------------------------
    def pending(self) -> list[JobView]:
        """Tasks still in spool/new (no job record yet)."""
        return [JobView(job=t.id, name=t.name, state="pending", agent=t.agent.value, lane=t.lane or t.repo or "",
                        created_at=t.created_at, since=t.created_at)
                for t in pending_tasks(self.home)]

    def refresh_approvals(self) -> set[str]:
        """Re-count pending approvals per job; the jobs whose count changed."""
        counts: dict[str, int] = {}
        folder = self.home.approvals_in("pending")
        try:
            names = [n for n in os.listdir(folder) if n.endswith(".yaml")]
        except OSError:
            names = []
        for name in names:
            try:
                record = approval_files.load((folder / name).read_text())
            except Exception:  # being written, or hand-edited beyond repair: not this view's to judge
                continue
            job = str(record.get("job") or "")
            if job:
                counts[job] = counts.get(job, 0) + 1
        changed = {j for j in set(counts) | set(self._approvals) if counts.get(j, 0) != self._approvals.get(j, 0)}
        self._approvals = counts
        return changed

    def approvals_of(self, job_id: str) -> int:
        return self._approvals.get(job_id, 0)

    def header(self) -> Header:
        sup = supervisor_status(self.home)
        kill = None
        if self.home.kill_file.exists():
            try:
                kill = self.home.kill_file.read_text().strip().replace("\n", "; ") or "engaged"
            except OSError:
                kill = "engaged"
        try:
            br = breaker_status(self.home)
            breaker = "breaker OPEN: automatic work held" if br["open"] else \
                f"breaker closed ({br['automatic_in_window']}/{br['limit']})"
            breaker_open = bool(br["open"])
        except Exception:  # zen.yaml mid-edit: say so rather than fail the view
            breaker, breaker_open = "breaker: unknown (zen.yaml unreadable)", False
        running = bool(sup.get("running"))
        supervisor = f"supervisor pid {sup.get('pid')}" if running else "supervisor NOT running"
        return Header(short_path(self.home.root), supervisor, running, kill, breaker_open, breaker)

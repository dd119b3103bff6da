"""`zen status --tmux`: "3 working · 1 needs you" for a tmux status line.

tmux runs it every `status-interval` seconds, so it reads only what it must: each job's
state.json and the timeline lines after it (an agent's hook may have appended a turn since),
the spool's listing, the pending approvals and the kill switch.
"""

from __future__ import annotations

from zen.store import spool
from zen.store.home import Home
from zen.store.jobs import JobStore
from zen.tui.rows import JobView, counts, segment
from zen.tui.source import HomeSource


def tmux_segment(home: Home) -> str:
    store = JobStore(home)
    source = HomeSource(home)
    source.refresh_approvals()
    views: list[JobView] = []
    for job_id in store.ids():
        try:
            snap = store.snapshot(job_id, write=False)
        except Exception:  # a record being created or damaged: the status bar is not the place to say
            continue
        views.append(JobView(job=job_id, name=snap.name, state=snap.state.value, reason=snap.reason,
                             approvals=source.approvals_of(job_id)))
    views += [JobView(job=p.stem, name=p.stem, state="pending") for p in spool.pending(home)]
    return segment(counts(views), kill=home.kill_file.exists())

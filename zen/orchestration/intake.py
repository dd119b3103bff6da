"""Intake: tasks from the spool become job records (DESIGN section 3).

    spool/new/<id>.yaml --claim (rename)--> spool/cur/<id>.yaml --record--> jobs/<id>/

The directory listing is the truth (watchdog events are only hints). A claim is one rename, so
two supervisors (or `zen cancel` of a pending task) never both take a task; recording is
idempotent, so a task claimed but not recorded before a crash is recorded on restart
(`unrecorded`). A task file that cannot be read is set aside by `quarantine` and never stops the
loop; the reliability issue (15) gives it a quarantine folder, a reason file and a
`task.rejected` event there.
"""

from __future__ import annotations

import contextlib
import logging
import os
from pathlib import Path

from zen.core.model import JobStatus
from zen.errors import InvalidTask
from zen.store import spool
from zen.store.home import Home
from zen.store.jobs import JobStore, load_task_text
from zen.store.layout import SPOOL_INVALID_SUFFIX

log = logging.getLogger(__name__)


class Intake:
    def __init__(self, home: Home, store: JobStore) -> None:
        self.home = home
        self.store = store

    def claim_new(self) -> list[str]:
        """Claim every task waiting in spool/new; the ids of those now queued."""
        queued = []
        for path in spool.pending(self.home):
            claimed = spool.claim(self.home, path)
            if claimed is not None and (job_id := self.record(claimed)) is not None:
                queued.append(job_id)
        return queued

    def unrecorded(self) -> list[Path]:
        """Tasks in spool/cur with no job record, or a record cut short before its first event."""
        return [p for p in spool.claimed(self.home)
                if not self.store.exists(p.stem) or not self.store.events(p.stem)]

    def record(self, path: Path) -> str | None:
        """The job record for a claimed task file; its id when the job is queued, else None."""
        try:
            task = load_task_text(path.read_text(), str(path))
        except (InvalidTask, OSError, UnicodeDecodeError) as exc:
            self.quarantine(path, str(exc))
            return None
        if self.store.create(task):
            log.info("job %s queued", task.id)
        snap = self.store.snapshot(task.id)
        return task.id if snap.state is JobStatus.queued else None

    def quarantine(self, path: Path, reason: str) -> None:
        log.error("spooled task %s is unusable and was set aside: %s", path.name, reason)
        with contextlib.suppress(OSError):
            os.replace(path, path.with_suffix(SPOOL_INVALID_SUFFIX))

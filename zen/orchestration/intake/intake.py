"""Intake: tasks from the spool become job records (DESIGN section 3).

    spool/new/<id>.yaml --claim (rename)--> spool/cur/<id>.yaml --record--> jobs/<id>/

The directory listing is the truth (watchdog events are only hints). A claim is one rename, so
two supervisors (or `zen cancel` of a pending task) never both take a task; recording is
idempotent, so a task claimed but not recorded before a crash is recorded on restart
(`unrecorded`). Nothing in the spool can stop the loop: an entry that is no regular file, too
big, not UTF-8, not a task of this format, whose id is not of zen's grammar or not its file's
name, or a duplicate, is moved to spool/quarantine/ with a reason file and a `task.rejected`
event in logs/control.jsonl (`zen status` and `zen queue` list it). Ids are checked against the
grammar before any path is built from them, so no entry can make zen write outside the home.
A claimed task whose job record exists but lost its timeline is quarantined too: it ran, or
began to, and must not run again.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path

from zen.core.events import EventType as E
from zen.core.ids import valid_id
from zen.core.model import JobStatus, Task
from zen.errors import InvalidTask, Rejected, ZenError
from zen.store import events as ev_store
from zen.store import spool
from zen.store.config import Config
from zen.store.faults import crash_point
from zen.store.home import Home
from zen.store.jobs import JobStore, load_task_text
from zen.store.layout import CONTROL_LOCK, EVENTS, EVENTS_LOCK, TASK

# room a task file has beside its prompt (limits.max_prompt_size)
ENTRY_MARGIN = 256 * 1024

log = logging.getLogger(__name__)


def _began(job_dir: Path) -> bool:
    """Whether a job directory without a timeline holds more than intake leaves before the first
    event (task.yaml, the temp file of its publish cut short by a crash, the events lock): then
    the job ran, or began to."""
    return any(p.name not in (TASK, EVENTS_LOCK, CONTROL_LOCK) and not p.name.startswith(f".{TASK}.")
               for p in job_dir.iterdir())


class Intake:
    def __init__(self, home: Home, store: JobStore) -> None:
        self.home = home
        self.store = store

    def claim_new(self, claimed_hook: Callable[[Task], object] | None = None) -> list[str]:
        """Claim every task waiting in spool/new; the ids of those now queued. An entry that is
        not a task is quarantined; nothing here raises. `claimed_hook(task)` is told of each task
        read from its claimed file before its record is written (the starter begins its worktree)."""
        queued = []
        for path in spool.entries(self.home):
            try:
                claimed = spool.claim(self.home, path)
            except Rejected as exc:
                self.quarantine(path, str(exc))
                continue
            except OSError as exc:
                log.warning("cannot claim %s this pass: %s", path.name, exc)
                continue
            if claimed is not None and (job_id := self.record(claimed, fresh=True, hook=claimed_hook)) is not None:
                queued.append(job_id)
        return queued

    def unrecorded(self) -> list[Path]:
        """Tasks in spool/cur with no job record, or a record cut short before its first event."""
        return [p for p in spool.claimed(self.home)
                if not valid_id(p.stem) or not self.store.exists(p.stem) or not self.store.events(p.stem)]

    def record(self, path: Path, *, fresh: bool = False, hook: Callable[[Task], object] | None = None) -> str | None:
        """The job record for a claimed task file (`fresh`: just claimed from spool/new); its id
        when the job is queued, else None (quarantined, or no longer queued). `hook`: claim_new's."""
        try:
            task, text = self._read(path, fresh)
        except (Rejected, InvalidTask) as exc:
            self.quarantine(path, str(exc))
            return None
        except OSError as exc:
            log.warning("cannot read %s this pass: %s", path.name, exc)
            return None
        if hook is not None:
            try:
                hook(task)
            except Exception:   # only a head start: the record matters, not the hook
                log.exception("job %s: the claim hook failed", task.id)
        try:
            if self.store.create(task, claimed=(path, text)):
                log.info("job %s queued", task.id)
            crash_point("intake.recorded")
            snap = self.store.snapshot(task.id)
        except (OSError, ZenError) as exc:  # a full disk: the claimed file stays, recorded on restart
            log.warning("job %s: record not complete: %s", task.id, exc)
            return None
        return task.id if snap.state is JobStatus.queued else None

    def _read(self, path: Path, fresh: bool) -> tuple[Task, str]:
        if not valid_id(path.stem):
            raise Rejected(f"{path.name}: the name is not a job id (like 20261129T101500Z-fix-login-3fa9.yaml)")
        text = spool.read_entry(path, self._max_bytes())
        task = load_task_text(text, path.name)
        if task.id != path.stem:
            raise Rejected(f"{path.name} holds the task {task.id}: a task file is named after its id")
        d = self.store.dir(task.id)
        if fresh and self.store.exists(task.id):
            raise Rejected(f"{path.name}: job {task.id} exists already (duplicate id)")
        if self.store.exists(task.id) and not (d / EVENTS).exists() and _began(d):
            raise Rejected(f"job {task.id} lost its timeline (events.jsonl): it ran, or began to, so it "
                                 "is not run again (zen doctor shows the record)")
        return task, text

    def _max_bytes(self) -> int:
        try:
            return Config.load(self.home).size("limits", "max_prompt_size") + ENTRY_MARGIN
        except (OSError, ZenError):
            return 1024 * 1024 + ENTRY_MARGIN

    def quarantine(self, path: Path, reason: str) -> None:
        """Set the entry aside (spool/quarantine/ with a reason file) and say so in the control log."""
        log.error("spool entry %s rejected: %s", path.name, reason)
        try:
            where = spool.quarantine(self.home, path, reason)
            ev_store.append_control(self.home, E.TASK_REJECTED, file=where.name, reason=reason)
        except OSError as exc:
            log.warning("cannot quarantine %s this pass: %s", path.name, exc)

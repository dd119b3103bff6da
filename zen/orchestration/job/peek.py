"""What a glance at a job shows besides its state: the last line its agent printed.

Read from the tail of `pane.log` (the agent's raw terminal output), so it costs one small read and
no tmux call: the live views and the notifier use it for every job they show or announce.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from zen.orchestration.job.control import strip_ansi
from zen.store.layout import PANE_LOG

TAIL_BYTES = 8192
MAX_CHARS = 200
# box drawing, block elements and the spinner/prompt glyphs full-screen agents draw with
_DECORATION = re.compile(r"[\u2300-\u23ff\u2500-\u259f\u25a0-\u25ff\u2800-\u28ff\u2190-\u21ff\u276f\u203a>›•·*│─]+")
_WORDY = re.compile(r"[A-Za-z0-9]{2,}")


def pane_log_path(job_dir: Path) -> Path:
    return job_dir / PANE_LOG


def last_line(job_dir: Path) -> str:
    """The last line of the agent's output that has words in it ("" when there is none)."""
    path = pane_log_path(job_dir)
    try:
        with path.open("rb") as f:
            f.seek(0, os.SEEK_END)
            size = f.tell()
            f.seek(max(0, size - TAIL_BYTES))
            data = f.read()
    except OSError:
        return ""
    text = strip_ansi(data.decode(errors="replace"))
    for line in reversed(text.splitlines()):
        clean = " ".join(_DECORATION.sub(" ", line).split())
        if _WORDY.search(clean):
            return clean[:MAX_CHARS]
    return ""

"""Text an agent supplied, made inert before zen types it into another agent's terminal (security
finding H6): printable text and newlines only, so it can never act as a key or a sequence."""

from __future__ import annotations

import re

# what an agent-supplied text may not hold when zen types it: the paste markers (which would end
# a bracketed paste early and let the rest run as keys), every C0 control but newline (\r is an
# Enter, ESC starts a sequence), DEL and the C1 controls (security finding H6)
_PASTE_MARKS = re.compile("\x1b\\[20[01]~")
_CONTROLS = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f]")


def inert_text(text: str) -> str:
    """`text` with nothing left that a terminal would take for a key or a sequence: only
    printable text and newlines."""
    return _CONTROLS.sub("", _PASTE_MARKS.sub("", text))


__all__ = ["inert_text"]

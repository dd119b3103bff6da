"""One error tree. Adapters translate foreign failures into these, with a sentence a user can act on.

The CLI funnel maps them to exit codes (DESIGN section 9): ZenError -> 1, UsageError -> 2,
GuardDenied -> 4; anything else is a bug -> 3 with a traceback in a log file.
"""

from __future__ import annotations

import errno


class ZenError(Exception):
    """An expected failure: the message is one sentence for the user."""

    exit_code = 1


class UsageError(ZenError):
    exit_code = 2


class NoHome(ZenError):
    pass


class NotFound(ZenError):
    pass


class Ambiguous(ZenError):
    pass


class InvalidTask(ZenError):
    pass


class GitError(ZenError):
    pass


class TmuxError(ZenError):
    pass


class Conflict(ZenError):
    """Compare-and-set or lock contention: someone else changed the thing first."""


class GuardDenied(ZenError):
    exit_code = 4


# errors of the disk itself (DESIGN 9: one sentence and exit 1, never a traceback): the command
# cannot do its work, but that is no bug of zen's
_DISK_ERRORS = {
    errno.ENOSPC: "no space left on the device holding {where} (free some space, then run it again; "
                  "nothing was left half-written)",
    errno.EDQUOT: "the disk quota is used up on {where} (free some space, then run it again; "
                  "nothing was left half-written)",
    errno.EIO: "input/output error on {where}: the disk or its filesystem is failing (check it, e.g. "
               "with dmesg, then run it again)",
    errno.EROFS: "{where} is on a read-only filesystem (remount it read-write to change anything)",
}


def disk_error(exc: BaseException | None, where: str = "the zen home") -> str | None:
    """One sentence for an OSError of the disk (full, failing, read-only) in `exc` or what it
    was raised from, else None."""
    seen = 0
    while exc is not None and seen < 10:
        if isinstance(exc, OSError) and exc.errno in _DISK_ERRORS:
            return _DISK_ERRORS[exc.errno].format(where=exc.filename or where)
        exc = exc.__cause__ or exc.__context__
        seen += 1
    return None

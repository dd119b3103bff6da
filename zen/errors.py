"""One error tree. Adapters translate foreign failures into these, with a sentence a user can act on.

The CLI funnel maps them to exit codes (DESIGN section 9): ZenError -> 1, UsageError -> 2,
GuardDenied -> 4; anything else is a bug -> 3 with a traceback in a log file.
"""

from __future__ import annotations


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

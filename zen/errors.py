"""One error tree. Adapters translate foreign failures into these, with a sentence a user can act on.

Every class says what kind of failure it is, once, as class attributes that the three doors read
(never the message):

- `kind`: a short stable name (`not-found`, `busy`, `kill-switch`, ...), unique in the tree; the
  MCP tools answer it as {"error": KIND, ...};
- `http_status`: what `zen serve` answers (zen/server/errors.py): a thing that is not there 404,
  bad input 422, a request that does not fit the state or lost a race 409, a refusal of the
  guardian 403, a switch that holds everything 423, a cluster that fails zen 502/503;
- `exit_code`: what the CLI exits with (DESIGN section 9): ZenError -> 1, UsageError -> 2,
  GuardDenied -> 4; anything else is a bug -> 3 with a traceback in a log file.

A subclass inherits its parent's status and exit code unless it sets its own; it always sets
its own kind (tests/test_architecture.py holds the kinds unique).
"""

from __future__ import annotations

import errno

TYPE_CHECKING = False
if TYPE_CHECKING:  # every lean start (the guard hook, the fast CLI) loads this module: stdlib alone
    from typing import Any


class ZenError(Exception):
    """An expected failure: the message is one sentence for the user."""

    kind = "error"
    http_status = 409
    exit_code = 1


class UsageError(ZenError):
    kind = "usage"
    http_status = 422
    exit_code = 2


# -- what is not there -----------------------------------------------------------------------

class NoHome(ZenError):
    kind = "no-home"
    http_status = 404


class HomeError(NoHome):
    """--home or $ZEN_HOME names a directory that is not a zen home."""

    kind = "not-a-home"


class NotFound(ZenError):
    kind = "not-found"
    http_status = 404


class LaneGone(NotFound):
    """The task's lane is not in zen.yaml any more."""

    kind = "lane-gone"


class Ambiguous(ZenError):
    kind = "ambiguous"


# -- bad input -------------------------------------------------------------------------------

class InvalidTask(ZenError):
    kind = "invalid-task"
    http_status = 422


class ExecutorError(InvalidTask, ValueError):
    """An executor (or a remote turn's spec) that cannot be read; a ValueError too, as it always was."""

    kind = "invalid-executor"


class Rejected(ZenError):
    """A spool entry that cannot be a task; the message is the reason."""

    kind = "rejected"
    http_status = 422


class PolicyError(ZenError):
    """A policy source is broken; the message names the file and the problem."""

    kind = "policy-invalid"
    http_status = 422


class PolicyRefused(ZenError):
    """The candidate policy does not compile; nothing was written."""

    kind = "policy-refused"
    http_status = 422


# -- the state, or someone else, got there first --------------------------------------------

class Conflict(ZenError):
    """Compare-and-set or lock contention: someone else changed the thing first."""

    kind = "conflict"


class JobBusy(Conflict):
    """Another process held the job's control lock for all of CONTROL_WAIT_S."""

    kind = "busy"


class AlreadyRunning(Conflict):
    """A supervisor already holds the home's supervisor lock."""

    kind = "already-running"


class RevisionMismatch(Conflict):
    """agent_control's compare-and-set failed: the job moved on; `current` is its revision now."""

    kind = "revision-mismatch"

    def __init__(self, job: str, expected: int, current: int) -> None:
        super().__init__(f"job {job} is at revision {current}, not {expected}: read its status and "
                         "decide again")
        self.job = job
        self.expected = expected
        self.current = current


class LeaseConflict(Conflict):
    """Another live job holds the path; `lease` is its lease."""

    kind = "lease-held"

    def __init__(self, sentence: str, lease: dict[str, Any]) -> None:
        super().__init__(sentence)
        self.lease = lease


class LeaseError(ZenError):
    """A lease request that cannot be met as asked (bad path, bad mode)."""

    kind = "invalid-lease"
    http_status = 422


class AmbiguousLease(LeaseError):
    """A prefix of a lease id that names more than one lease."""

    kind = "ambiguous-lease"
    http_status = 409


class LeaseNotFound(LeaseError):
    """No lease has that id, or the job holds none on those paths."""

    kind = "no-lease"
    http_status = 404


class LandRefused(ZenError):
    """The work cannot be landed as it is (conflicts, nothing to land, a live agent, ...)."""

    kind = "land-refused"


class RecoveryRefused(ZenError):
    """Another recovery holds the lease, or there is nothing to recover."""

    kind = "recovery-refused"


class SpawnError(ZenError):
    """A start failed: the job is recorded as failed with this sentence as the reason."""

    kind = "spawn-failed"


# -- the tools zen drives ----------------------------------------------------------------------

class GitError(ZenError):
    kind = "git"


class NotARepository(GitError):
    """The path is not (or no longer) the top of a git repository or worktree."""

    kind = "not-a-repository"


class TmuxError(ZenError):
    kind = "tmux"


class RemoteError(ZenError):
    """A remote turn cannot be started or followed: the sentence says why."""

    kind = "remote"


class RayError(ZenError):
    """The cluster answered, but not as asked (a bad request, an internal error)."""

    kind = "ray"
    http_status = 502


class RayUnreachable(RayError):
    """Nothing answers at the address (the cluster is down, or the address is wrong)."""

    kind = "ray-unreachable"
    http_status = 503


class AlreadySubmitted(RayError):
    """A job with this submission id exists: it was submitted before (perhaps by a supervisor
    that crashed before it could record the answer)."""

    kind = "already-submitted"
    http_status = 409


class DefaultsMissing(ZenError):
    """zen's own package lacks a default it ships (a broken or partial install)."""

    kind = "defaults-missing"
    http_status = 500


# -- refusals ----------------------------------------------------------------------------------

class GuardDenied(ZenError):
    kind = "guard-denied"
    http_status = 403
    exit_code = 4


class GateError(ZenError):
    """The gate refused or could not make the call; one sentence."""

    kind = "gate-refused"
    http_status = 403


class Refused(ZenError):
    """A team request the rules turn down (cap, depth, ownership, breaker)."""

    kind = "refused"
    http_status = 403


class KillSwitchEngaged(Refused):
    """The kill switch holds every domain at observe: no agent may start anything until a human
    releases it."""

    kind = "kill-switch"
    http_status = 423


class ApprovalError(ZenError):
    """An approval that cannot be decided as asked: it was decided already."""

    kind = "approval-decided"


class ApprovalNotFound(ApprovalError):
    """No approval is pending under that id."""

    kind = "no-approval"
    http_status = 404


class BadApprovalId(ApprovalError):
    """The text is not an approval id at all."""

    kind = "invalid-approval-id"
    http_status = 422


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

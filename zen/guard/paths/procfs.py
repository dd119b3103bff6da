"""/proc: what of other processes a read reaches (security-findings H9).

    proc_hit(path, text, recursive) -> the credential entry it reaches, else None

Every process's environment holds the secrets it was started with (the supervisor's holds every
API key zen has), so `environ` is denied under every pid, `self`, `thread-self` and their
`task/<tid>/` alike. Of the processes that are not the reader itself, `cmdline` (secrets passed as
arguments), `mem`, `root` and `cwd` (their view of the filesystem, zen's home included), and `fd` /
`map_files` (the files they hold open) are denied as well. A recursive read or a glob over a
process's directory (`grep -r KEY /proc/1`, `cat /proc/*/environ`) reaches its environ.

`path` is the resolved path (symlinks followed, so /proc/self is a number: the pid of the process
that resolved it, which is this one), `text` the word as written (the lexical view: thread-self,
$$ unknown). Either one reaching a private file is a hit.

Lean on purpose (imported by the hook): stdlib only.
"""

from __future__ import annotations

import os
import posixpath
from typing import TYPE_CHECKING, Any

from zen.guard.shell.words import FOUND, UNK

if TYPE_CHECKING:
    from zen.guard.analyse import Analyser

ENTRY = "/proc/*/environ"
SELF = frozenset({"self", "thread-self"})
PRIVATE = frozenset({"cmdline", "mem", "root", "cwd", "fd", "map_files"})
# below these, a path leaves /proc for the process's own view of the filesystem
_VIEWS = frozenset({"root", "cwd"})


def proc_hit(path: str | None, text: str, recursive: bool) -> str | None:
    for p in (path, _lexical(text)):
        if p is not None and (p == "/proc" or p.startswith("/proc/")):
            hit = _one(p, recursive)
            if hit is not None:
                return hit
    return None


def _lexical(text: str) -> str | None:
    if not text.startswith("/proc"):
        return None
    out = posixpath.normpath(text.replace(UNK, "0").replace(FOUND, "*"))
    return "/" + out.lstrip("/")


def _one(path: str, recursive: bool) -> str | None:
    comps = path.split("/")[2:]             # after "", "proc"
    if not comps or not comps[0]:
        return ENTRY if recursive else None      # all of /proc
    pid = comps[0]
    if "*" in pid or "?" in pid or "[" in pid:
        return ENTRY                        # a glob over every process
    if not (pid.isdigit() or pid in SELF):
        return None                         # /proc/cpuinfo, /proc/sys/..., /proc/net/...
    own = pid in SELF or pid == str(os.getpid())
    rest = comps[1:]
    if rest[:1] == ["task"]:
        if len(rest) < 2 or not rest[1] or "*" in rest[1]:
            return ENTRY if (recursive or len(rest) > 2 or "*" in "".join(rest[1:2])) else None
        rest = rest[2:]
    if not rest:
        return ENTRY if recursive else None     # the process's directory itself (ls is fine)
    leaf = rest[0]
    if "*" in leaf or "?" in leaf or "[" in leaf:
        return ENTRY
    if leaf == "environ":
        return ENTRY
    if leaf in _VIEWS and (len(rest) > 1 or recursive):
        return f"/proc/*/{leaf}"            # through its root or cwd: paths the guardian cannot place
    if leaf in PRIVATE and not own:
        return f"/proc/*/{leaf}"
    return None


# Signals (security-findings H8): a process is the agent's to signal only when it is its job's own.
PY_SIGNAL_CALLS = frozenset({"os.kill", "os.killpg", "signal.pthread_kill", "os.pidfd_open"})
HOW = "signal only your own processes: `kill %1` or `kill $!` for a job you started"


def own_process(an: Analyser, pid: int, what: str) -> None:
    """Deny unless `pid` is a process of this job (its environment names the job)."""
    if pid <= 0:
        an.deny("proc.signal", f"{what} signals a whole process group (or every process), zen's own "
                f"included; {HOW}")
    if pid == 1:
        an.deny("proc.signal", f"{what} signals init; {HOW}")
    job = an.ctx.job_id
    if not job or an.ctx.read is None:
        an.deny("proc.signal", f"{what}: the guardian cannot tell whose process {pid} is; {HOW}")
    try:
        environ = an.ctx.read(f"/proc/{pid}/environ")
    except OSError:
        environ = None
    if environ is None or f"ZEN_JOB_ID={job}".encode() not in environ.split(b"\0"):
        an.deny("proc.signal", f"{what}: process {pid} is not one of this job's (zen's supervisor, its "
                f"guardian, the dashboard and other jobs' agents are never an agent's to signal); {HOW}")


def py_signal(an: Analyser, fn: str, values: list[Any], where: str) -> None:
    """Inline Python's os.kill(pid, sig) / os.killpg(pgid, sig): the same rule as `kill`."""
    an.ro(f"{where}: {fn}()")
    if not an.ctx.agent:
        return
    if fn == "os.pidfd_open":
        return
    pid = values[0] if values else None
    sig = values[1] if len(values) > 1 else None
    if sig == 0 and fn == "os.kill":
        return
    if not isinstance(pid, int) or isinstance(pid, bool):
        an.deny("proc.signal", f"{where}: {fn}() signals a process the guardian cannot resolve; {HOW}")
    if fn == "os.killpg":
        an.deny("proc.signal", f"{where}: {fn}() signals a whole process group; {HOW}")
    own_process(an, pid, f"{where}: {fn}()")

"""Signals: an agent may signal only its own processes (security-findings H8).

Every process of a job runs with the job's ZEN_JOB_ID in its environment (the pane's shell
exports it, and children inherit it), and no process outside the job has that value. So:

    kill %1 / %% / %name     a job spec of the agent's own shell: allowed
    kill $!, kill $(jobs -p) the agent's own background jobs: allowed
    kill PID                 allowed only when /proc/PID/environ says ZEN_JOB_ID=<this job>
                             (read at decision time); an unknown pid (`$(pgrep ...)`, `$pid`,
                             a pid the guardian cannot read) is denied
    kill 0, kill -- -PGID, kill -1   process groups and "every process": denied
    kill -0 ... / kill -l    no signal is sent (an existence probe, the list of names): allowed
    pkill, killall, killall5, skill, snice, fuser -k   by name or by file: denied to an agent
                             (they reach the supervisor, the guardian, other jobs' agents)

tmux kill-server / kill-session on zen's server are denied by mux.py (zen's server is never an
agent's). A human (a check with no job context) keeps every signal.

`py_signal` is the same rule for inline Python's os.kill / os.killpg / signal.pthread_kill
(called by the Python scan with the call's static argument values).

Lean on purpose (imported by the hook with the first kill): stdlib + zen.guard.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from zen.guard.paths.procfs import HOW as _HOW
from zen.guard.paths.procfs import own_process
from zen.guard.shell.words import Cmd, State, Word

if TYPE_CHECKING:
    from zen.guard.analyse import Analyser

BY_NAME = frozenset({"pkill", "killall", "killall5", "skill", "snice"})
# the agent's own shell's background jobs, however spelled: its last one, or all of them
OWN_LAST_JOB = frozenset({"$!", '"$!"', "${!}", '"${!}"', "$(jobs -p)", '"$(jobs -p)"', "`jobs -p`"})
_SIGNAL_VALUE = frozenset({"-s", "--signal", "-n"})
_NO_SIGNAL = frozenset({"0", "SIG0", "EXIT", "SIGEXIT"})


def kill(an: Analyser, name: str, args: list[Word], st: State, cmd: Cmd | None, depth: int) -> None:
    if name == "fuser":
        if not any(not a.known or a.text == "--kill" or (a.text.startswith("-") and not a.text.startswith("--")
                                                          and "k" in a.text[1:]) for a in args):
            for a in args:
                if not a.text.startswith("-"):
                    an.read_word(a, st)
            return                      # lists who uses a file: read-only
        an.ro("`fuser -k`")
        if an.ctx.agent:
            an.deny("proc.signal", f"`fuser -k` kills every process using a file, zen's own included; {_HOW}")
        return
    an.ro(f"`{name}`")
    an.need("system_commands", "approval.system-command", f"`{name}` affects other processes")
    if not an.ctx.agent:
        return
    if name in BY_NAME:
        an.deny("proc.signal", f"`{name}` signals processes by name, and those include zen's own and "
                f"other jobs' agents; {_HOW}")
    _kill(an, args, st)


def _kill(an: Analyser, args: list[Word], st: State) -> None:
    signal: str | None = "TERM"
    chosen = False                      # after a signal option, bash reads -N as a process group
    targets: list[Word] = []
    i = 0
    while i < len(args):
        a = args[i]
        t = a.text
        if targets or not a.known or not t.startswith("-") or t == "-" or (chosen and t[1:].isdigit()):
            targets.append(a)
        elif t == "--":
            targets.extend(args[i + 1:])
            break
        elif t in ("-l", "-L", "--list", "--table") or t.startswith("--list="):
            return                      # prints signal names
        elif t in _SIGNAL_VALUE:
            nxt = args[i + 1] if i + 1 < len(args) else None
            signal = nxt.text.upper() if nxt is not None and nxt.known else None
            chosen = True
            i += 1
        elif t.startswith("--signal="):
            signal, chosen = t.split("=", 1)[1].upper(), True
        elif t[1:].isalnum():
            signal, chosen = t[1:].upper(), True    # -9, -KILL, -SIGKILL
        else:
            targets.append(a)
        i += 1
    if signal in _NO_SIGNAL:
        return                          # kill -0: asks whether the process exists, sends nothing
    for w in targets:
        _target(an, w, st)


def _target(an: Analyser, w: Word, st: State) -> None:
    if w.raw in OWN_LAST_JOB and ("jobs" not in w.raw or not (
            "jobs" in st.funcs or "jobs" in an.aliases or "enable" in an.text)):
        return                          # `jobs` is the builtin unless the command redefines it
    t = w.text
    if not w.known:
        an.deny("proc.signal", f"`kill {w.raw}`: a process only known at run time may be anyone's; {_HOW}")
    if t.startswith("%"):
        return                          # a job of the agent's own shell
    if t.lstrip("-").isdigit():
        own_process(an, int(t), f"`kill {w.raw}`")
        return
    an.deny("proc.signal", f"`kill {w.raw}`: not a process the guardian can place; {_HOW}")

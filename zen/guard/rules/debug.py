"""Debuggers: gdb, lldb and pdb run commands of their own (`shell`, `!`, `pipe`, `python`, `call`,
`print f()`), attach to other processes (the supervisor, another agent) and run the program they
debug. A debugger command the guardian cannot judge is denied: only a small read-only set
(backtraces, info, quit, settings of the display) passes, `run` / `start` judge the program and
its arguments as a command, and attaching to a running process, command files and commands on
stdin are denied.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from zen.guard.shell.words import Cmd, State, Word

if TYPE_CHECKING:
    from zen.guard.analyse import Analyser

# debugger commands that only read (the inferior's memory is not a command line: `print f()` and
# `call` run code in it, so they are not here)
SAFE_COMMANDS = frozenset({"bt", "backtrace", "where", "info registers", "info threads", "info frame",
                           "info sharedlibrary", "info locals", "info args", "thread apply all bt",
                           "thread apply all backtrace", "bt full", "quit", "q", "kill", "detach",
                           "set pagination off", "set confirm off", "set print pretty on",
                           "set width 0", "set height 0", "thread backtrace all", "image list",
                           "frame variable", "register read", "continue", "c", "process kill"})
RUNS = frozenset({"run", "r", "start", "starti", "process launch"})
_GDB_EVAL = ("-ex", "-eval-command", "-iex", "-init-eval-command")
_GDB_FILES = ("-x", "-command", "-ix", "-init-command", "-cd", "-directory", "-d", "-s", "-symbols", "-e",
              "-exec", "-se", "-c", "-core", "-tty", "-t", "-data-directory", "-D", "-l", "-b")
_GDB_ATTACH = ("-p", "-pid")


def gdb(an: Analyser, name: str, args: list[Word], st: State, cmd: Cmd | None, depth: int) -> None:
    an.ro(f"`{name}`")
    _no_stdin_commands(an, name, cmd)
    runs = False
    pos: list[Word] = []
    i = 0
    while i < len(args):
        a = args[i]
        t = a.text
        if not a.known:
            an.deny("opaque.exec", f"`{name}` with an argument only known at run time")
        if t == "--args":
            pos.extend(args[i + 1:])
            break
        if t.startswith("-") and len(t) > 1:
            opt, eq, value = t.lstrip("-").partition("=")
            full = _gdb_option("-" + opt)
            if full in _GDB_EVAL or full in _GDB_FILES or full in _GDB_ATTACH:
                if not eq:
                    value = args[i + 1].text if i + 1 < len(args) else ""
                    i += 1
                if full in _GDB_EVAL:
                    runs |= _debugger_command(an, name, value)
                elif full in ("-x", "-command", "-ix", "-init-command"):
                    an.deny("opaque.exec", f"`{name} {t}` runs the commands of a file")
                elif full in _GDB_ATTACH:
                    _attach(an, name)
            i += 1
            continue
        pos.append(a)
        i += 1
    if len(pos) >= 2 and "--args" not in [a.text for a in args] and pos[1].text.isdigit():
        _attach(an, name)                     # gdb PROGRAM PID
    if runs and pos:
        an.leaf(pos, st, None, depth + 1)
    for p in pos[:1]:
        an.read_word(p, st)


def lldb(an: Analyser, name: str, args: list[Word], st: State, cmd: Cmd | None, depth: int) -> None:
    an.ro(f"`{name}`")
    _no_stdin_commands(an, name, cmd)
    runs = False
    pos: list[Word] = []
    i = 0
    while i < len(args):
        a = args[i]
        t = a.text
        if not a.known:
            an.deny("opaque.exec", f"`{name}` with an argument only known at run time")
        if t == "--":
            pos.extend(args[i + 1:])
            break
        opt, eq, value = t.partition("=")
        if opt in ("-o", "--one-line", "-O", "--one-line-before-file", "-k", "--one-line-on-crash"):
            if not eq:
                value = args[i + 1].text if i + 1 < len(args) else ""
                i += 1
            runs |= _debugger_command(an, name, value)
        elif opt in ("-s", "--source", "-S", "--source-before-file", "-K", "--source-on-crash"):
            an.deny("opaque.exec", f"`{name} {opt}` runs the commands of a file")
        elif opt in ("-p", "--attach-pid", "-n", "--attach-name", "-w", "--wait-for"):
            _attach(an, name)
        elif t.startswith("-"):
            pass
        else:
            pos.append(a)
        i += 1
    if runs and pos:
        an.leaf(pos, st, None, depth + 1)
    for p in pos[:1]:
        an.read_word(p, st)


def pdb(an: Analyser, name: str, args: list[Word], st: State, cmd: Cmd | None, depth: int) -> None:
    """`python -m pdb [-c CMD] script`: pdb's commands (`!stmt`) are Python the guardian cannot see."""
    _no_stdin_commands(an, "pdb", cmd)
    if any(a.text in ("-c", "--command") or a.text.startswith("--command=") for a in args):
        an.deny("opaque.exec", "`pdb -c` runs debugger commands (any Python)")
    an.ro("`python -m pdb`")
    for a in args:
        if not a.text.startswith("-"):
            an.read_word(a, st)


def _gdb_option(opt: str) -> str:
    """gdb reads long options with one or two dashes and takes unique prefixes of them."""
    names = (*_GDB_EVAL, *_GDB_FILES, *_GDB_ATTACH, "-batch", "-nx", "-nh", "-quiet", "-args")
    if opt in names:
        return opt
    found = [n for n in names if n.startswith(opt) and len(opt) > 2]
    return found[0] if len(found) == 1 else opt


def _debugger_command(an: Analyser, name: str, text: str) -> bool:
    """Judge one debugger command; True when it runs the program."""
    command = " ".join(text.split())
    if command in RUNS or command.split(" ", 1)[0] in RUNS:
        return True
    if command in SAFE_COMMANDS or not command:
        return False
    an.deny("opaque.exec", f"`{name}` command {command[:40]!r} can run anything (shell, python, a call "
            "into the program); only backtraces, info and run pass")


def _attach(an: Analyser, name: str) -> None:
    an.deny("priv.attach", f"`{name}` attaching to a running process reaches into it (the supervisor, "
            "another agent); debug a program you start instead")


def _no_stdin_commands(an: Analyser, name: str, cmd: Cmd | None) -> None:
    if cmd is not None and cmd.stdin in ("pipe", "heredoc", "herestring"):
        an.deny("opaque.exec", f"`{name}` reads debugger commands from its input, which can run anything")

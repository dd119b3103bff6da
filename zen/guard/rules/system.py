"""The system: privilege changes, power, disk tools, processes, scheduling, umask, and shell
builtins that only take data.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from zen.guard.shell.words import Cmd, State, Word

if TYPE_CHECKING:
    from zen.guard.analyse import Analyser


def priv(an: Analyser, name: str, args: list[Word], st: State, cmd: Cmd | None, depth: int) -> None:
    an.deny("priv.escalation", f"`{name}` changes privileges; agents never do, not even as a probe")


def power(an: Analyser, name: str, args: list[Word], st: State, cmd: Cmd | None, depth: int) -> None:
    an.deny("system.power", f"`{name}` stops the machine")


def disk(an: Analyser, name: str, args: list[Word], st: State, cmd: Cmd | None, depth: int) -> None:
    if name in ("losetup", "fsck", "e2fsck", "hdparm", "badblocks") and all(
            a.text.startswith("-") for a in args) and args:
        return
    an.deny("disk.destructive", f"`{name}` rewrites disks or filesystems")


def system(an: Analyser, name: str, args: list[Word], st: State, cmd: Cmd | None, depth: int) -> None:
    an.ro(f"`{name}`")
    if name == "crontab" and not any(a.text == "-l" for a in args):
        an.deny("system.persistence", "`crontab` schedules commands that run outside the job")
    if (name == "at" and not any(a.text in ("-l", "-c") for a in args)) or name == "batch":
        an.deny("system.persistence", f"`{name}` schedules commands that run outside the job")
    an.need("system_commands", "approval.system-command", f"`{name}` affects other processes")


# ps options whose next word is a value (a format, a pid list, a user), never BSD option letters
_PS_VALUE = frozenset({"-o", "-O", "-p", "-q", "-u", "-U", "-g", "-G", "-C", "-t", "-s", "--format",
                       "--pid", "--ppid", "--quick-pid", "--user", "--User", "--group", "--Group", "--sort",
                       "--tty", "--sid", "--cols", "--columns", "--rows", "--lines", "--width", "-k"})


def ps(an: Analyser, name: str, args: list[Word], st: State, cmd: Cmd | None, depth: int) -> None:
    """ps with BSD's `e` (ps e, ps auxe, ps eww) prints every process's environment; `-e` (every
    process) does not, and neither does a value (`ps -o pid,etime,cmd`, `ps -p 42`)."""
    value = False
    for a in args:
        if not a.known:
            an.deny("creds.env-dump", "ps with options only known at run time may print environments")
        t = a.text
        if value:
            value = False
            if "environ" in t:
                an.deny("creds.env-dump", f"`ps ... {t}` prints the environment of processes, secrets included")
            continue
        if t in _PS_VALUE:
            value = True
            continue
        if (not t.startswith("-") and "e" in t) or t in ("-E", "--environment") or ((
                t.startswith("-o") or t.startswith("-O") or t.startswith("--format")) and "environ" in t):
            an.deny("creds.env-dump", f"`ps {t}` prints the environment of processes, secrets included")


def umask(an: Analyser, name: str, args: list[Word], st: State, cmd: Cmd | None, depth: int) -> None:
    for a in args:
        if re.fullmatch(r"[0-7]{1,4}", a.text) and not int(a.text, 8) & 0o002:
            an.deny("perm.world-writable", f"`umask {a.text}` makes every new file world-writable")
        if not a.known:
            an.deny("perm.unresolved", "`umask` with a value only known at run time")


def data(an: Analyser, name: str, args: list[Word], st: State, cmd: Cmd | None, depth: int) -> None:
    if name in ("kill", "pkill", "killall", "umask", "shift", "enable", "hash") or (
            name == "date" and any(a.text in ("-s", "--set") for a in args)):
        an.ro(f"`{name}`")
    if name in ("getent",) and args and args[0].text in ("shadow", "gshadow"):
        an.deny("creds.read", "reads the shadow password database")
    flags = "".join(a.text[1:] for a in args if a.known and a.text.startswith("-"))
    if name == "hash" and "p" in flags:
        an.deny("shell.unresolved-command", "`hash -p` makes a name run another program")
    if name == "enable" and "f" in flags:
        an.deny("opaque.exec", "`enable -f` loads a builtin from a shared object (code the guardian cannot see)")

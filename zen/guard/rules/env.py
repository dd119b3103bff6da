"""The environment and secrets: printing variables, dumping the environment, and commands
that print stored credentials (policy credential_commands).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from zen.guard.shell.options import flag_present, split_opts, val
from zen.guard.shell.words import Cmd, State, Word, is_secret_name

if TYPE_CHECKING:
    from zen.guard.analyse import Analyser


def printer(an: Analyser, name: str, args: list[Word], st: State, cmd: Cmd | None, depth: int) -> None:
    for a in args:
        if a.secret and not a.raw.lstrip("\"").startswith("${#"):
            an.deny("creds.secret-echo", f"`{name}` prints a secret-looking variable ({a.raw})")
    if name == "printf":
        opts, _ = split_opts(args, "v")
        v = val(opts, "-v")
        if v is not None and not v.known:
            an.deny("shell.unresolved", "printf -v into a variable named at run time")


def printenv(an: Analyser, name: str, args: list[Word], st: State, cmd: Cmd | None, depth: int) -> None:
    names = [a for a in args if not a.text.startswith("-")]
    if not names:
        an.deny("creds.env-dump", "`printenv` prints the whole environment, secrets included")
    for a in names:
        if not a.known or is_secret_name(a.text):
            an.deny("creds.secret-echo", f"`printenv {a.raw}` prints a secret-looking variable")


def set_builtin(an: Analyser, name: str, args: list[Word], st: State, cmd: Cmd | None, depth: int) -> None:
    if not args:
        an.deny("creds.env-dump", "`set` without arguments prints every variable")


def export(an: Analyser, name: str, args: list[Word], st: State, cmd: Cmd | None, depth: int) -> None:
    names = [a for a in args if not a.text.startswith("-")]
    if not names:
        an.deny("creds.env-dump", f"`{name}` without names prints the environment")


def cred_command(an: Analyser, name: str, args: list[Word]) -> None:
    entries = an.policy.credential_commands.get(name)
    if not entries:
        return
    texts = [a.text for a in args]
    posw = [t for t in texts if not t.startswith("-")]
    for prefix, flags in entries:
        if prefix and posw[:len(prefix)] != prefix and texts[:len(prefix)] != prefix:
            continue
        if flags and not any(flag_present(texts, fl) for fl in flags):
            continue
        an.deny("creds.command", f"`{name} {' '.join(prefix)}` prints credentials")

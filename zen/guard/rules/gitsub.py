"""One git subcommand as the git rules see it (zen/guard/rules/git.py and its neighbours): its
options (long ones expanded as git reads a unique prefix, short clusters split where a letter
takes a value), its positional words and paths, its state and depth.
"""

from __future__ import annotations

from zen.guard.rules.gitopts import expand
from zen.guard.shell.words import State, Word

# short options that take a value (attached or next): -bNAME, -cNAME, -ofix, -mMSG, ...
SHORT_VALUES = {"checkout": "bB", "switch": "cC", "branch": "u", "clean": "e", "push": "o", "restore": "s",
                "stash": "m", "commit": "mFCct", "tag": "mFu", "clone": "bocuj", "rebase": "xsX",
                "worktree": "bB", "fetch": "j", "pull": "jsX", "merge": "msX", "cherry-pick": "mX",
                "revert": "mX", "am": "pC", "format-patch": "o", "notes": "mFCc", "reset": "", "grep": "efABCm"}


class Sub:
    """One git subcommand as its handler sees it."""

    __slots__ = ("args", "depth", "flags", "name", "pos", "ptexts", "st")

    def __init__(self, name: str, args: list[Word], st: State, depth: int) -> None:
        self.name = name
        # long options as git reads them: a unique prefix is the option (--har is --hard)
        args = [Word(expand(name, a.text), a.raw) if a.known and a.text.startswith("--") and a.text != "--"
                else a for a in args]
        self.args = args
        self.st = st
        self.depth = depth
        # words after `--` are paths, however much they look like options
        end = next((k for k, a in enumerate(args) if a.known and a.text == "--"), len(args))
        self.flags = [a.text for a in args[:end] if a.text.startswith("-") and a.text != "--"]
        self.pos = [a for a in args[:end] if not a.text.startswith("-")] + list(args[end + 1:])
        self.ptexts = [a.text for a in self.pos]

    def short(self, letter: str) -> bool:
        """`letter` in a short option cluster (-fd), before any letter that takes the rest of the
        cluster as its value (`checkout -bfix` is -b fix, not -f)."""
        return any(letter in short_letters(self.name, f) for f in self.flags)


def short_letters(sub: str, flag: str) -> str:
    """The option letters of a short cluster, up to and including the first that takes a value."""
    if not flag.startswith("-") or flag.startswith("--"):
        return ""
    takes = SHORT_VALUES.get(sub, "")
    out = ""
    for c in flag[1:]:
        out += c
        if c in takes:
            break
    return out


def _values(s: Sub, opts: tuple[str, ...]) -> list[Word]:
    return [s.args[k + 1] for k, a in enumerate(s.args[:-1]) if a.text in opts]

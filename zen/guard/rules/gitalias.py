"""git aliases: an alias runs what it stands for, so a git command whose name is an alias is
judged as that (`git c -fdx` with alias.c=clean is `git clean -fdx`; alias.x='!rm -rf ~' runs the
shell). Aliases come from the command itself (`git config alias.c ...`, `git -c alias.c=...`
earlier in it) and from the git configuration on disk: the repository's (through the worktree's
.git file), ~/.gitconfig and ~/.config/git/config. git ignores an alias named like one of its own
commands, and so does this.
"""

from __future__ import annotations

import posixpath
import re
from typing import TYPE_CHECKING

from zen.guard.rules.gitopts import GIT_COMMANDS
from zen.guard.shell.options import sq
from zen.guard.shell.words import State, Word

if TYPE_CHECKING:
    from zen.guard.analyse import Analyser

_SECTION = re.compile(r'^\s*\[\s*([A-Za-z0-9.-]+)(?:\s+"[^"]*")?\s*\]')
_ENTRY = re.compile(r"^\s*([A-Za-z0-9-]+)\s*=\s*(.*)$")
MAX_ALIAS_DEPTH = 5


def record(an: Analyser, name: str, value: str) -> None:
    """An alias the command defines (for the git commands after it)."""
    an.memo.setdefault("git.aliases", {})[name.lower()] = value


def run_alias(an: Analyser, sub: str, args: list[Word], st: State, depth: int) -> bool:
    """Judge `git SUB ARGS` as the alias SUB stands for; False when SUB is no alias."""
    if sub in GIT_COMMANDS or sub.startswith("-"):
        return False
    value = an.memo.get("git.aliases", {}).get(sub.lower())
    if value is None:
        value = _disk_aliases(an).get(sub.lower())
    if value is None:
        return False
    if depth > MAX_ALIAS_DEPTH:
        an.deny("git.config-smuggle", f"`git {sub}`: aliases nested too deep to follow")
    tail = " ".join(sq(a.text) for a in args)
    if value.lstrip().startswith("!"):
        an.walk(value.lstrip()[1:] + (" " + tail if tail else ""), st.copy(vars={}), depth + 1)
    else:
        an.walk("git " + value + (" " + tail if tail else ""), st.copy(vars={}), depth + 1)
    return True


def _disk_aliases(an: Analyser) -> dict[str, str]:
    cached = an.memo.get("git.disk-aliases")
    if cached is not None:
        return dict(cached)
    found: dict[str, str] = {}
    for path in _config_files(an):
        text = _read(an, path)
        if text:
            found.update(aliases_of(text))
    an.memo["git.disk-aliases"] = found
    return found


def _config_files(an: Analyser) -> list[str]:
    files = []
    if an.user_home:
        files += [an.user_home + "/.gitconfig", an.user_home + "/.config/git/config"]
    root = an.worktree or an.cwd
    dotgit = _read(an, root + "/.git")
    if dotgit and dotgit.startswith("gitdir:"):           # a linked worktree: .git is a file
        gitdir = posixpath.normpath(posixpath.join(root, dotgit.split(":", 1)[1].strip()))
        common = (_read(an, gitdir + "/commondir") or ".").strip()
        files += [posixpath.normpath(posixpath.join(gitdir, common)) + "/config", gitdir + "/config.worktree"]
    else:
        files.append(root + "/.git/config")
    return files


def _read(an: Analyser, path: str) -> str | None:
    if an.ctx.read is None:
        return None
    try:
        head = an.ctx.read(path)
    except OSError:
        return None
    return head.decode("utf-8", "replace") if head else None


def aliases_of(text: str) -> dict[str, str]:
    """The [alias] entries of a git config file (names lower-cased, as git compares them)."""
    out: dict[str, str] = {}
    section = ""
    for line in text.splitlines():
        m = _SECTION.match(line)
        if m:
            section = m.group(1).lower()
            continue
        e = _ENTRY.match(line)
        if e and section == "alias":
            value = e.group(2).strip()
            if len(value) >= 2 and value[0] == value[-1] == '"':
                value = value[1:-1].replace('\\"', '"').replace("\\\\", "\\")
            out[e.group(1).lower()] = value
    return out

"""Option parsing for the rule handlers: how programs read their argv (pure helpers).

`split_opts` separates options (with their values) from positional words the way getopt does:
bundled short options (-xvf), attached values (-ofile, --out=file), `--` ends options, and
`stop_first` ends them at the first positional (a wrapper: what follows is the command).

Lean on purpose: imported by the hook (stdlib + zen.guard.shell.words).
"""

from __future__ import annotations

import re

from zen.guard.shell.words import Word, lit


def bundled(flag: str, letters: str) -> bool:
    """A short option cluster (-xdf) containing any of `letters`."""
    return len(flag) > 1 and flag[0] == "-" and flag[1] != "-" and any(c in flag[1:] for c in letters)


def split_opts(args: list[Word], short_val: str = "", long_val: frozenset[str] | set[str] = frozenset(),
               stop_first: bool = False) -> tuple[list[tuple[str, Word | None]], list[Word]]:
    """Options (with their values) and positional words. `stop_first`: the first positional
    ends option parsing (wrappers: what follows is the command)."""
    opts: list[tuple[str, Word | None]] = []
    pos: list[Word] = []
    i = 0
    while i < len(args):
        w = args[i]
        t = w.text
        if t == "--" and w.known:
            pos.extend(args[i + 1:])
            break
        if w.known and t.startswith("--") and len(t) > 2:
            name, eq, val = t.partition("=")
            if eq:
                opts.append((name, lit(val)))
            elif name in long_val and i + 1 < len(args):
                opts.append((name, args[i + 1]))
                i += 1
            else:
                opts.append((name, None))
        elif w.known and t.startswith("-") and len(t) > 1:
            j = 1
            while j < len(t):
                c = t[j]
                if c in short_val:
                    if j + 1 < len(t):
                        opts.append(("-" + c, lit(t[j + 1:])))
                    elif i + 1 < len(args):
                        opts.append(("-" + c, args[i + 1]))
                        i += 1
                    else:
                        opts.append(("-" + c, None))
                    break
                opts.append(("-" + c, None))
                j += 1
        else:
            pos.append(w)
            if stop_first:
                pos.extend(args[i + 1:])
                break
        i += 1
    return opts, pos


def has(opts: list[tuple[str, Word | None]], *names: str) -> bool:
    return any(o in names for o, _ in opts)


def val(opts: list[tuple[str, Word | None]], *names: str) -> Word | None:
    for o, v in opts:
        if o in names:
            return v
    return None


def complete_long(flag: str, options: tuple[str, ...] | frozenset[str]) -> str:
    """--name[=value] with name completed to the one long option it is a unique prefix of (as
    getopt_long and argp read it); unchanged when it is exact, ambiguous or unknown."""
    if not flag.startswith("--") or len(flag) <= 2:
        return flag
    name, eq, value = flag[2:].partition("=")
    if name in options:
        return flag
    found = [o for o in options if o.startswith(name)]
    return f"--{found[0]}{eq}{value}" if len(found) == 1 else flag


def flag_present(texts: list[str], flag: str) -> bool:
    """`flag` is among `texts` (also as --flag=value, or bundled in a short cluster like -xf)."""
    for t in texts:
        if t == flag or t.startswith(flag + "="):
            return True
        if len(flag) == 2 and flag[0] == "-" and flag[1] != "-" and bundled(t, flag[1]) and \
                not t.startswith("--"):
            return True
    return False


def sq(s: str) -> str:
    """`s` single-quoted for bash."""
    return "'" + s.replace("'", "'\\''") + "'"


def remote(text: str) -> bool:
    """An rsync/scp operand on another host (host:path)."""
    head = text.split("/", 1)[0]
    return ":" in head and not text.startswith(("/", ".", "~"))


def is_num_flag(w: Word) -> bool:
    """-5 (nice's old form of -n 5)."""
    return w.known and len(w.text) > 1 and w.text[0] == "-" and w.text[1:].isdigit()


def is_mode_word(w: Word) -> bool:
    """A chmod mode: octal or symbolic clauses (u+x,go-w)."""
    return w.known and bool(re.fullmatch(r"([0-7]{1,5}|([ugoa]*[-+=][rwxXstugo]*)(,[ugoa]*[-+=][rwxXstugo]*)*)", w.text)) \
        and not w.text.startswith("--")


def quoted_after(prog: str, pos: int) -> str | None:
    """The double-quoted string argument that starts at `pos` (awk's system("...")), else None."""
    m = re.match(r"\s*\"((?:[^\"\\]|\\.)*)\"\s*\)", prog[pos:])
    if m:
        return m.group(1).replace('\\"', '"')
    return None

"""Commands built from found or piped items: find (-delete, -exec, -fprint), xargs, parallel.

What find or a pipe feeds in is a FOUND stand-in below the start directory, so `find . -name
'*.o' -delete` stays in the tree while `find ~ -delete` does not.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from zen.guard.paths.resolve import glob_hits_dot, norm
from zen.guard.shell.options import split_opts, sq, val
from zen.guard.shell.words import FOUND, UNK, Cmd, State, Word, lit
from zen.store.layout import WORKTREE_PRIVATE

if TYPE_CHECKING:
    from zen.guard.analyse import Analyser


def find(an: Analyser, name: str, args: list[Word], st: State, cmd: Cmd | None, depth: int) -> None:
    i = 0
    while (i < len(args) and args[i].known and args[i].text in ("-H", "-L", "-P", "-O0", "-O1", "-O2", "-O3")) \
            or (i < len(args) and args[i].text.startswith("-D") and args[i].known):
        i += 2 if args[i].text == "-D" else 1
    starts: list[Word] = []
    while i < len(args) and not (args[i].known and (args[i].text.startswith("-") or args[i].text in ("(", "!", ")", ","))):
        starts.append(args[i])
        i += 1
    expr = args[i:]
    if not starts:
        starts = [lit(".")]
    texts = [w.text for w in expr]
    filtered = any(t in ("-name", "-iname", "-path", "-ipath", "-wholename", "-iwholename", "-regex",
                         "-iregex", "-newer", "-type", "-mtime", "-mmin", "-size", "-empty", "-user",
                         "-perm", "-links") for t in texts)
    nameonly = [expr[k + 1].text for k, t in enumerate(texts[:-1]) if t in ("-name", "-iname")]
    for s in starts:
        an.read_word(s, st)
    found = []
    for s in starts:
        if filtered and not any(glob_hits_dot(p, ".git") or glob_hits_dot(p, WORKTREE_PRIVATE)
                                or p in (".git", WORKTREE_PRIVATE, ".claude")
                                for p in nameonly) and ("-type" not in texts or "-name" in texts or "-iname" in texts
                                                        or "-path" in texts):
            found.append(Word(s.text.rstrip("/") + "/" + FOUND, s.raw, glob=True))
        else:
            found.append(s)
    k = 0
    while k < len(expr):
        t = expr[k].text
        if t == "-delete":
            an.ro("`find -delete`")
            for fw in found:
                an.delete_word(fw, st, "`find -delete` deletes")
        elif t in ("-exec", "-execdir", "-ok", "-okdir"):
            j = k + 1
            sub: list[Word] = []
            while j < len(expr) and expr[j].text not in (";", "+"):
                sub.append(expr[j])
                j += 1
            for fw in found:
                replaced = [Word(w.text.replace("{}", fw.text), w.raw, glob=fw.glob or w.glob)
                            if "{}" in w.text else w for w in sub]
                if t.endswith("dir"):
                    replaced = [Word(w.text.replace(fw.text, "./" + FOUND), w.raw, glob=True)
                                if fw.text in w.text else w for w in replaced]
                    sub_st = st.copy(cwds=(None,)) if not fw.glob else st.copy(
                        cwds=(norm(fw.text.rsplit("/", 1)[0], st.cwd),))
                    an.leaf(replaced, sub_st, None, depth + 1)
                else:
                    an.leaf(replaced, st, None, depth + 1)
            k = j
        elif t in ("-fprint", "-fprint0", "-fprintf", "-fls"):
            an.ro(f"`find {t}`")
            if k + 1 < len(expr):
                an.write_word(expr[k + 1], st, f"`find {t}` writes")
        k += 1


def stdin_items(an: Analyser, cmd: Cmd | None, st: State) -> Word:
    """What xargs/parallel read from stdin, as a stand-in word."""
    prod = cmd.piped_from if cmd is not None else None
    if isinstance(prod, Cmd) and prod.words:
        pname = prod.words[0].text.rsplit("/", 1)[-1]
        pargs = prod.words[1:]
        if pname == "find":
            starts = [w for w in pargs if not w.text.startswith("-") and w.text not in ("(", "!", ")")]
            starts = starts[:1] or [lit(".")]
            s = starts[0]
            if s.known:
                return Word(s.text.rstrip("/") + "/" + FOUND, s.raw, glob=True)
        if pname in ("echo", "printf") and all(w.known for w in pargs) and len(pargs) == 1:
            return pargs[0]
        if pname in ("ls", "grep", "rg", "fd") and prod.state.cwd is not None and all(
                w.known and (w.text.startswith("-") or ("/" not in w.text and w.text not in ("..", "."))) for w in pargs):
            return Word(FOUND, FOUND, glob=True)
        if pname == "git" and [w.text for w in pargs[:1]] == ["ls-files"]:
            return Word(FOUND, FOUND, glob=True)
    return Word(UNK, "<stdin>")


_XARGS_VALUE = "adEILnPsJRS"            # options that take a value (GNU and BSD)
_XARGS_OPTIONAL = "eil"                 # options whose value is only attached (-i{}, -l5, -eEOF)
_XARGS_VALUE_LONG = frozenset({"--arg-file", "--delimiter", "--max-lines", "--max-args", "--max-procs",
                               "--max-chars", "--process-slot-var"})


def xargs(an: Analyser, name: str, args: list[Word], st: State, cmd: Cmd | None, depth: int) -> None:
    """xargs [options] [COMMAND [ARGS]]: COMMAND runs with the items of stdin (or -a FILE) as
    arguments, or in place of a replacement string (-I R, -i[R], --replace[=R], BSD -J R)."""
    opts, pos = _xargs_options(an, args)
    item = stdin_items(an, cmd, st)
    af = opts.get("-a")
    if af is not None:
        an.read_word(af, st)
        item = Word(UNK, "<file>")
    repl = next((opts[k] for k in ("-I", "-i", "-J") if k in opts), None)
    if not pos:
        pos = [lit("echo")]
    if repl is not None:
        r = repl.text or "{}"
        sub = [Word(w.text.replace(r, item.text), w.raw, glob=item.glob) if r in w.text else w for w in pos]
    else:
        sub = [*pos, item]
    an.leaf(sub, st, None, depth + 1)


def _xargs_options(an: Analyser, args: list[Word]) -> tuple[dict[str, Word], list[Word]]:
    """{option: value} (long forms folded into their letters) and the command words."""
    opts: dict[str, Word] = {}
    i = 0
    while i < len(args):
        a = args[i]
        t = a.text
        if not a.known:
            an.deny("shell.unresolved-command", "xargs with an option only known at run time")
        if t == "--":
            i += 1
            break
        if not t.startswith("-") or t == "-":
            break
        if t.startswith("--"):
            opt, eq, value = t.partition("=")
            if opt in _XARGS_VALUE_LONG and not eq:
                value = args[i + 1].text if i + 1 < len(args) else ""
                i += 1
            key = {"--arg-file": "-a", "--replace": "-i", "--eof": "-e"}.get(opt, opt)
            opts[key] = lit(value if (eq or opt in _XARGS_VALUE_LONG) else "")
        else:
            for k, c in enumerate(t[1:]):
                rest = t[k + 2:]
                if c in _XARGS_VALUE:
                    value = rest or (args[i + 1].text if i + 1 < len(args) else "")
                    if not rest:
                        i += 1
                    opts["-" + c] = lit(value)
                    break
                if c in _XARGS_OPTIONAL:
                    opts["-" + c] = lit(rest)
                    break
                opts["-" + c] = lit("")
        i += 1
    return opts, args[i:]


def parallel(an: Analyser, name: str, args: list[Word], st: State, cmd: Cmd | None, depth: int) -> None:
    texts = [a.text for a in args]
    seps = [k for k, t in enumerate(texts) if t in (":::", "::::", ":::+", "::::+")]
    head = args[:seps[0]] if seps else args
    values: list[Word] = []
    for k in seps:
        j = k + 1
        while j < len(args) and args[j].text not in (":::", "::::", ":::+", "::::+"):
            values.append(args[j] if texts[k].startswith(":::") and not texts[k].startswith("::::") else Word(UNK))
            j += 1
    if not seps:
        values = [stdin_items(an, cmd, st)]
    opts, pos = split_opts(head, "jSIdaEn", frozenset({"--jobs", "--sshlogin", "--delimiter",
                                                       "--arg-file", "--env", "--joblog",
                                                       "--results", "--workdir", "--tmpdir"}), stop_first=True)
    if val(opts, "-S", "--sshlogin") is not None:
        st = State((None,))
    if not pos:
        for v in values:
            an.walk(v.text, st.copy(vars={}), depth + 1)
        return
    # parallel joins its command words with spaces and runs the line through the shell
    template = " ".join(p.text if p.known else UNK for p in pos)
    if "{" not in template:
        template += " {}"
    for v in values or [Word(UNK)]:
        if not v.known:
            an.deny("shell.unresolved", "parallel runs commands built from input only known at run time")
        quoted = sq(v.text)
        text = re.sub(r"\{[^}]*\}", lambda _m: quoted, template)  # noqa: B023 (called at once)
        an.walk(text, st.copy(vars={}), depth + 1)

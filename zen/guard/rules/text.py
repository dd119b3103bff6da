"""Text tools and editors: sed, awk, vi/emacs/nano and pagers, sort, uniq, yq, grep.

In-place rewrites are writes; sed's `e`/`s///e` and awk's system()/pipes run commands and are
judged as commands; `w FILE` and print > FILE are writes.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from zen.guard.scan import code as codescan
from zen.guard.shell.options import has, quoted_after, split_opts, val
from zen.guard.shell.words import UNK, Cmd, State, Word, is_secret_name, lit

if TYPE_CHECKING:
    from zen.guard.analyse import Analyser


def sed(an: Analyser, name: str, args: list[Word], st: State, cmd: Cmd | None, depth: int) -> None:
    inplace = False
    scripts: list[str] = []
    files: list[Word] = []
    i = 0
    opts_done = False
    while i < len(args):
        a = args[i]
        t = a.text
        if not opts_done and a.known and t.startswith("-") and len(t) > 1:
            if t == "--":
                opts_done = True
            elif t in ("-e", "--expression"):
                if i + 1 < len(args):
                    scripts.append(args[i + 1].text)
                i += 1
            elif t.startswith("--expression="):
                scripts.append(t.split("=", 1)[1])
            elif t in ("-f", "--file"):
                i += 1
                scripts.append(UNK)
            elif t.startswith("--in-place") or (t.startswith("-i") and not t.startswith("--")):
                inplace = True
            elif t.startswith("--"):
                pass
            else:
                body = t[1:]
                if "i" in body:
                    inplace = True
                if "e" in body and body.endswith("e") and i + 1 < len(args):
                    scripts.append(args[i + 1].text)
                    i += 1
                if "f" in body:
                    scripts.append(UNK)
                    i += 1
        elif not scripts and not any(x.text in ("-e", "--expression") for x in args[:i]):
            scripts.append(t)
        else:
            files.append(a)
        i += 1
    for s in scripts:
        if UNK in s:
            if inplace:
                continue
            continue
        for c, arg in codescan.sed_commands(s):
            if c == "e":
                if arg:
                    an.walk(arg, st.copy(vars={}), depth + 1)
                else:
                    an.deny("opaque.exec", "sed `e` runs pattern space as a command")
            elif c in "wW" and arg:
                if arg not in ("/dev/stdout", "/dev/stderr"):
                    an.ro("`sed w`")
                    an.write_word(lit(arg), st, "sed `w` writes")
            elif c == "s" and arg:
                flags = arg
                if "e" in flags.split("w", 1)[0]:
                    an.deny("opaque.exec", "sed s///e runs the result as a command")
                if "w" in flags:
                    wf = flags.split("w", 1)[1].strip()
                    if wf and wf not in ("/dev/stdout", "/dev/stderr"):
                        an.ro("`sed w`")
                        an.write_word(lit(wf), st, "sed `w` writes")
            elif c in "rR" and arg:
                an.read_word(lit(arg), st)
    for f in files:
        if inplace:
            an.ro("`sed -i`")
            an.write_word(f, st, "`sed -i` rewrites")
        else:
            an.read_word(f, st)


def awk(an: Analyser, name: str, args: list[Word], st: State, cmd: Cmd | None, depth: int) -> None:
    opts, pos = split_opts(args, "fvFW", frozenset({"--file", "--assign", "--field-separator",
                                                    "--source", "--include", "--load"}))
    progs = []
    if val(opts, "-f", "--file") is not None:
        an.ro(f"`{name} -f`")
        return
    src = val(opts, "--source")
    if src is not None:
        progs.append(src.text)
    elif pos:
        progs.append(pos[0].text)
        pos = pos[1:]
    for prog in progs:
        if UNK in prog:
            an.deny("opaque.exec", "awk program only known at run time")
        awk_program(an, prog, st, depth)
    for p in pos:
        if "=" in p.text and not p.text.startswith("/"):
            continue
        an.read_word(p, st)


def awk_program(an: Analyser, prog: str, st: State, depth: int) -> None:
    for m in re.finditer(r"\bENVIRON\b\s*(\[\s*(?:\"(\w+)\")?)?", prog):
        if m.group(2) is None:
            an.deny("creds.env-dump", "awk reads ENVIRON by a name known only at run time (or all of it)")
        if is_secret_name(m.group(2)):
            an.deny("creds.secret-echo", f"awk reads the secret-looking variable {m.group(2)}")
    for m in re.finditer(r"\bsystem\s*\(", prog):
        s = quoted_after(prog, m.end())
        if s is None:
            an.deny("opaque.exec", "awk system() with a command built at run time")
        an.ro("awk system()")
        an.walk(s, st.copy(vars={}), depth + 1)
    for m in re.finditer(r"(\"(?:[^\"\\]|\\.)*\")\s*\|\s*getline|\|\s*&?\s*(\"(?:[^\"\\]|\\.)*\"|[A-Za-z_]\w*)",
                         prog):
        body = m.group(1) or m.group(2)
        if body is None or not body.startswith('"'):
            an.deny("opaque.exec", "awk pipes to a command built at run time")
        an.ro("an awk pipe")
        an.walk(body[1:-1].replace('\\"', '"'), st.copy(vars={}), depth + 1)
    for m in re.finditer(r"(?<![<>=!])>{1,2}\s*(\"(?:[^\"\\]|\\.)*\"|[A-Za-z_$][\w$]*)", prog):
        body = m.group(1)
        if not body.startswith('"'):
            # `a > b` may be a comparison inside a condition; only print/printf redirect
            head = prog[:m.start()]
            if re.search(r"\bprintf?\b[^;{}]*$", head):
                an.deny("fs.unresolved-target", "awk prints into a file named at run time")
            continue
        if re.search(r"\bprintf?\b[^;{}]*$", prog[:m.start()]):
            an.ro("awk print >")
            an.write_word(lit(body[1:-1]), st, "awk writes")


def editor(an: Analyser, name: str, args: list[Word], st: State, cmd: Cmd | None, depth: int) -> None:
    for k, a in enumerate(args):
        t = a.text
        cmdtext = t[1:] if t.startswith("+") else (args[k + 1].text if t in ("-c", "--cmd", "-S", "--eval",
                                                                         "-l", "--load") and k + 1 < len(args) else "")
        if t in ("-S", "-l", "--load", "-x", "--script", "--batch", "-es", "-Es") or "!" in cmdtext or \
                "system(" in cmdtext or "shell" in cmdtext.lower() or not a.known:
            an.deny("opaque.exec", f"`{name}` with a command or script argument can run anything")
    if name in ("less", "more", "most", "man"):
        for a in args:
            if not a.text.startswith(("-", "+")):
                an.read_word(a, st)
        return
    an.ro(f"`{name}`")
    for a in args:
        if not a.text.startswith(("-", "+")):
            an.read_word(a, st)
            an.write_word(a, st, f"`{name}` edits")


def sort(an: Analyser, name: str, args: list[Word], st: State, cmd: Cmd | None, depth: int) -> None:
    opts, pos = split_opts(args, "ktSoT", frozenset({"--key", "--field-separator", "--buffer-size",
                                                     "--output", "--temporary-directory",
                                                     "--compress-program", "--files0-from"}))
    o = val(opts, "-o", "--output")
    if o is not None:
        an.ro("`sort -o`")
        an.write_word(o, st, "`sort -o` writes")
    if val(opts, "--compress-program") is not None:
        an.deny("opaque.exec", "`sort --compress-program` runs a program")
    for p in pos:
        an.read_word(p, st)


def uniq(an: Analyser, name: str, args: list[Word], st: State, cmd: Cmd | None, depth: int) -> None:
    _, pos = split_opts(args, "fsw", frozenset({"--skip-fields", "--skip-chars", "--check-chars",
                                                 "--group", "--all-repeated"}))
    if pos:
        an.read_word(pos[0], st)
    if len(pos) > 1:
        an.ro("`uniq IN OUT`")
        an.write_word(pos[1], st, "`uniq` writes")


def yq(an: Analyser, name: str, args: list[Word], st: State, cmd: Cmd | None, depth: int) -> None:
    opts, pos = split_opts(args, "", frozenset())
    if has(opts, "-i", "--inplace"):
        an.ro("`yq -i`")
        for p in pos[1:]:
            an.write_word(p, st, "`yq -i` rewrites")
    for p in pos[1:]:
        an.read_word(p, st)


def jq(an: Analyser, name: str, args: list[Word], st: State, cmd: Cmd | None, depth: int) -> None:
    """jq's `env` and `$ENV` are the environment: all of it, or a secret-looking variable of it,
    is denied; the files it reads get the read rules."""
    opts, pos = split_opts(args, "f", frozenset({"--from-file", "--arg", "--argjson", "--slurpfile",
                                                 "--rawfile", "--indent", "--tab"}))
    program = None if val(opts, "-f", "--from-file") is not None else (pos[0].text if pos else None)
    if program is not None:
        for m in re.finditer(r"(?:(?<![.\w$])env\b|\$ENV\b)(\s*(?:\.\s*(\w+)|\[\s*\"(\w+)\"))?", program):
            var = m.group(2) or m.group(3)
            if var is None:
                an.deny("creds.env-dump", "jq's env / $ENV is the whole environment")
            if is_secret_name(var):
                an.deny("creds.secret-echo", f"jq reads the secret-looking variable {var}")
    for p in pos[1:] if program is not None else pos:
        an.read_word(p, st)
    for o, v in opts:
        if o in ("-f", "--from-file", "--slurpfile", "--rawfile") and v is not None:
            an.read_word(v, st)


def grep(an: Analyser, name: str, args: list[Word], st: State, cmd: Cmd | None, depth: int) -> None:
    opts, pos = split_opts(args, "efABCmdDt" if name != "rg" else "efABCmgtTMj", frozenset({
        "--regexp", "--file", "--after-context", "--before-context", "--context", "--max-count",
        "--include", "--exclude", "--exclude-dir", "--glob", "--type", "--type-not", "--label",
        "--color", "--colour", "--binary-files", "--devices", "--directories", "--pre",
        "--max-depth", "--threads", "--sort", "--sortr", "--replace", "--encoding"}))
    if val(opts, "--pre") is not None:
        an.deny("opaque.exec", "`rg --pre` runs a program on every file")
    pattern_given = has(opts, "-e", "--regexp", "-f", "--file")
    files = pos if pattern_given else pos[1:]
    rec = has(opts, "-r", "-R", "--recursive", "--dereference-recursive") or name in ("rg", "ag", "ack")
    for f in (val(opts, "-f", "--file"),):
        if f is not None:
            an.read_word(f, st)
    for p in files:
        an.read_word(p, st, recursive=rec)

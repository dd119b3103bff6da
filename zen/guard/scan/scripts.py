"""Write, then run: files a command writes, and what running a file would do.

The analyser remembers every file the command writes, with its text when the guardian can see it
(`echo ... > x.sh`, a heredoc into `cat > x.sh`, `tee` of such text) and as unknown when it cannot
(a download with `curl -o` / `wget`, an extraction, a redirect of another program's output).
Running a file (`./x`, `sh x`, `bash x`, `. x`, `python x`, `node x`, ... and `sh < x`) is then
judged by its text:

- written by this command, text known: the text is judged as the code it is (bash, Python,
  JS/Ruby/Perl/PHP by the interpreter or the shebang);
- written by this command, text unknown (downloaded, extracted, generated): denied, the guardian
  cannot know what runs (download-and-run in any form);
- on disk in the worktree (written in an earlier turn, or part of the repository): its text as it
  is now, judged exactly as strictly as inline code (write one turn, run the next is the same as
  running it inline): a command name, a target, a host or code only known at run time denies.
  A file the guardian cannot judge (too long to read whole, unreadable, in a language it does
  not read) needs a human's approval, and is denied where approvals do not apply (observe, the
  kill switch); a compiled program is run as itself.

A mixin of Analyser (analyse.py).

Lean on purpose: imported by the hook (stdlib + zen.guard only; Python's ast loads only when a
Python file is judged).
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from typing import Any, NoReturn

from zen.guard.api import APPROVAL, READ_LIMIT, Context, Decision
from zen.guard.paths.resolve import Target, norm, under
from zen.guard.scan import code as codescan
from zen.guard.shell.words import UNK, Cmd, State, Word, decode_ansi_c, lit

_isdir = os.path.isdir

INTERPRETERS = {"sh": "sh", "bash": "sh", "dash": "sh", "ash": "sh", "ksh": "sh", "mksh": "sh", "busybox": "sh",
                "python": "python", "python3": "python", "python2": "python", "pypy": "python",
                "pypy3": "python", "node": "js", "nodejs": "js", "deno": "js", "bun": "js", "tsx": "js",
                "ts-node": "js", "ruby": "ruby", "perl": "perl", "php": "php"}


class ScriptRuns:
    """Files the command writes and files it runs (Analyser supplies the verbs and the context)."""

    ctx: Context
    script_argv: list[str | None] | None = None     # sys.argv of the Python file being judged
    py_file: str | None = None                      # the Python file being judged (its imports)
    st: State
    env: dict[str, str]
    memo: dict[str, Any]
    observe: bool
    pending: Decision | None
    roots: list[str]
    written: dict[str, str | None]
    trees: list[str]
    depth: int
    # supplied by Analyser and PathChecks (annotations only: a stub here would win the MRO)
    deny: Callable[[str, str], NoReturn]
    targets: Callable[..., list[Target] | None]
    walk: Callable[[str, State, int], None]
    ro: Callable[[str], None]
    write_word: Callable[..., None]
    read_word: Callable[..., None]

    # -- what the command writes ---------------------------------------------------------------
    def record_write(self, t: Target, content: str | None, append: bool = False) -> None:
        name = t.path.rsplit("/", 1)[-1]
        if name in ("sitecustomize.py", "usercustomize.py") or name.endswith(".pth"):
            self._startup_code(name, content)
        if t.children:
            self.trees.append(t.path)
        elif append:
            before = self.written.get(t.path, None) if t.path in self.written else None
            self.written[t.path] = before + content if before is not None and content is not None else None
        else:
            self.written[t.path] = content

    def literal_paths(self, text: str, where: str) -> None:
        """A string in code that names a path of zen's home (judged as a write there: the scan
        cannot tell what the code does with it) or of a credential store (judged as a read)."""
        if "/" not in text:
            return
        home = getattr(self, "home", None)
        if home and home + "/" in text:
            for m in re.finditer(re.escape(home) + r"/[^\s'\";|&<>()]*", text):
                self.write_word(lit(m.group(0)), self.st, f"{where}: a string names")
        user = getattr(self, "user_home", None)
        for m in re.finditer(r"(?:^|(?<=[\s'\"=:]))~/[^\s'\";|&<>()]+", text):
            if user:
                self.read_word(lit(user + m.group(0)[1:]), self.st)

    def _startup_code(self, name: str, content: str | None) -> None:
        """sitecustomize.py, usercustomize.py and a .pth file's `import` lines run in every Python
        that starts with their folder on its path (a virtualenv's site-packages): judged now, as
        the code they are, since nothing names them when they run."""
        where = f"writes {name} (Python runs it at every start)"
        if content is None or UNK in content:
            self.deny("opaque.exec", f"{where} with text the guardian cannot see")
        if name.endswith(".pth"):
            content = "\n".join(line for line in content.splitlines() if line.startswith(("import ", "import\t")))
        self.judge_text(content, "python", self.st, where)

    def unknown_tree(self, w: Word, st: State) -> None:
        """Everything below `w` now holds files whose text the guardian cannot see (an extraction,
        a clone)."""
        for t in self.targets(w, st) or []:
            self.trees.append(t.path)

    def _written(self, path: str) -> tuple[bool, str | None]:
        """(this command writes `path`, its text when known)."""
        if path in self.written:
            return True, self.written[path]
        return any(under(path, d) for d in self.trees), None

    # -- running a file ---------------------------------------------------------------------------
    def run_file(self, w: Word, st: State, lang: str | None, via: str, args: list[Word] | None = None) -> None:
        """`via` runs the file `w` (as `lang`, else as its shebang says) with the arguments `args`
        (None: not known, as for `source` of a file in a script)."""
        if not w.known:
            self.deny("opaque.exec", f"{via} runs a file only known at run time ({w.raw})")
        for t in self.targets(w, st, follow_last=True) or []:
            if t.children:
                continue
            known, text = self._written(t.path)
            if known:
                if text is None:
                    self.deny("opaque.exec", f"{via} runs {w.raw}, which this command writes with text the "
                              "guardian cannot see (a download, an extraction, another program's output)")
                self.judge_text(text, lang, st, f"{via} ({w.raw}, written by this command)",
                                argv=_argv(w, args))
            elif self.ctx.read is not None and any(under(t.path, r) for r in self.roots):
                saved, self.py_file = self.py_file, t.path
                try:
                    self._judge_disk(t.path, w, st, lang, via, _argv(w, args))
                finally:
                    self.py_file = saved

    def local_module(self, module: str, level: int, where: str, optional: bool = False, run: bool = False,
                     st: State | None = None, args: list[Word] | None = None) -> bool:
        """Python imports (or `python -m` runs, `run`) `module`: a file of it in the worktree (the
        script's folder, else the working directory, as sys.path[0]) is judged as strictly as
        inline code, with every package __init__.py on the way. True when one was found."""
        st = st or self.st
        if self.ctx.read is None or not (module or level):
            return False
        base = self.py_file.rsplit("/", 1)[0] if self.py_file else st.cwd
        if base is None:
            self.deny("opaque.exec", f"{where}: imports {module} from a folder only known at run time")
        for _ in range(max(level - 1, 0)):
            base = base.rsplit("/", 1)[0] or "/"
        bases = [base] if level else [base, *self._python_path(st)]
        found = False
        for b in dict.fromkeys(bases):
            if any(under(b, r) for r in self.roots):
                found = self._module_in(b, module, where, run, args) or found
        return found

    def _python_path(self, st: State) -> list[str]:
        """The worktree's folders on sys.path besides the first: $PYTHONPATH (assigned by the
        command or in the environment) and sys.path.insert/append of a literal in the code."""
        cmd = getattr(self, "cmd", None)
        assigned = dict(cmd.assigns).get("PYTHONPATH") if cmd is not None else None
        value = assigned.text if assigned is not None else st.vars.get("PYTHONPATH") or self.env.get("PYTHONPATH", "")
        if value is None or UNK in value:
            self.deny("opaque.exec", "Python imports from a $PYTHONPATH only known at run time")
        out = []
        for entry in [*value.split(":"), *self.memo.get("pysyspath", [])]:
            folder = norm(entry or ".", st.cwd) if entry.startswith("/") or st.cwd else None
            if folder is not None:
                out.append(folder)
        return out

    def _module_in(self, base: str, module: str, where: str, run: bool, args: list[Word] | None) -> bool:
        parts = [p for p in module.split(".") if p]
        found = False
        folder = base
        for k, part in enumerate(parts):
            last = k == len(parts) - 1
            names = [f"{folder}/{part}/__init__.py"] + ([f"{folder}/{part}.py"] if last else []) + (
                [f"{folder}/{part}/__main__.py"] if last and run else [])
            hit = False
            for path in names:
                if self._judge_module(path, where, args if run and path.endswith(("__main__.py", part + ".py")) else None):
                    hit = found = True
            if not hit and not self._is_dir(f"{folder}/{part}"):
                break
            folder = f"{folder}/{part}"
        return found

    def _is_dir(self, path: str) -> bool:
        return self.ctx.realpath is not None and _isdir(path)

    def _judge_module(self, path: str, where: str, args: list[Word] | None) -> bool:
        seen = self.memo.setdefault("pymodules", set())
        if path in seen:
            return True
        kind, text = self.file_text(lit(path), self.st)
        if kind == "none":
            return False
        seen.add(path)
        if len(seen) > 24:
            self.unjudged(f"{where}: imports more of the project's own modules than the guardian reads")
            return True
        short = path.rsplit("/", 1)[-1]
        if kind == "unknown" or text is None:
            if self._written(path)[0]:
                self.deny("opaque.exec", f"{where}: imports {short}, which this command writes with text the "
                          "guardian cannot see")
            self.unjudged(f"{where}: imports {short}, which the guardian cannot read whole")
            return True
        saved = self.py_file
        self.py_file = path
        try:
            self.judge_text(text, "python", self.st, f"{where} (imports {short})",
                            argv=_argv(lit(path), args) if args is not None else None)
        finally:
            self.py_file = saved
        return True

    def file_text(self, w: Word, st: State) -> tuple[str, str | None]:
        """What the guardian can see of file `w`: ("written", text) when this command writes it
        with known text, ("unknown", None) when with unknown text, ("disk", text) for a file in the
        worktree as it is, ("none", None) when there is none (or it cannot be read: "unknown")."""
        ts = self.targets(w, st, follow_last=True) if w.known else None
        if not ts or len(ts) != 1 or ts[0].children:
            return "unknown", None
        path = ts[0].path
        known, text = self._written(path)
        if known:
            return ("written", text) if text is not None else ("unknown", None)
        if self.ctx.read is None:
            return "none", None
        try:
            head = self.ctx.read(path)
        except OSError:
            return "unknown", None
        if head is None:
            return "none", None
        if len(head) > READ_LIMIT or b"\x00" in head[:4096]:
            return "unknown", None
        return "disk", head.decode("utf-8", "replace")

    def run_lines(self, lines: list[str], st: State, where: str) -> None:
        """Shell lines a build tool runs (make recipes, npm scripts), as strictly as inline code."""
        for line in lines:
            self.judge_text(line, "sh", st, where)

    def unjudged(self, reason: str, rule: str = "approval.unjudged") -> None:
        """Code that will run and that the guardian cannot judge (or a process that outlives the
        job): a human's approval, denied where approvals do not apply (observe, the kill switch)."""
        if self.observe:
            self.deny("opaque.exec" if rule == "approval.unjudged" else "level.observe",
                      f"{reason}; at observe level (or under the kill switch) it is denied")
        if self.pending is None:
            self.pending = Decision(APPROVAL, rule, f"{reason}: a human decides")

    def _judge_disk(self, path: str, w: Word, st: State, lang: str | None, via: str,
                    argv: list[str | None] | None) -> None:
        try:
            head = self.ctx.read(path) if self.ctx.read is not None else None
        except OSError:
            self.unjudged(f"{via} runs {w.raw}, which the guardian cannot read")
            return
        if head is None or b"\x00" in head[:4096] or head.startswith(b"\x7fELF"):
            return                       # not there (it fails), or a compiled program
        if len(head) > READ_LIMIT:
            self.unjudged(f"{via} runs {w.raw}, too long ({READ_LIMIT // 1024} KiB+) to judge")
            return
        self.judge_text(head.decode("utf-8", "replace"), lang, st, f"{via} ({w.raw})", disk=True, argv=argv)

    def judge_text(self, text: str, lang: str | None, st: State, where: str, disk: bool = False,
                   argv: list[str | None] | None = None) -> None:
        """Judge `text` as the code `lang` (None: by its shebang; a text file without one is a shell
        script, as the kernel and bash run it), as strictly as inline code. `disk`: a file as it is
        on disk, whose language the guardian may not read (then a human decides). `argv`: the
        script's name and arguments ($0 $1 ..., sys.argv; None inside: only known at run time)."""
        if UNK in text:
            self.deny("opaque.exec", f"{where}: its text is only known at run time")
        if lang is None:
            lang = shebang_lang(text)
        if lang is None:
            if disk:
                self.unjudged(f"{where}: a script in a language the guardian does not read")
                return
            self.deny("opaque.exec", f"{where}: a script in a language the guardian does not read")
        self._judge(text, lang, st, where, argv)

    def _judge(self, text: str, lang: str, st: State, where: str, argv: list[str | None] | None = None) -> None:
        if lang == "sh":
            positional: dict[str, str | None] = {}
            if argv is not None:      # $0 .. $9 (unset ones are empty) and $#
                positional = {str(i): argv[i] if i < len(argv) else "" for i in range(10)}
                positional["#"] = str(len(argv) - 1)
                text = _spread_args(text, argv[1:])
            self.walk(text, st.copy(vars=positional), self.depth + 1)
        elif lang == "python":
            # lean hook path: ast loads only when a Python file or inline code is judged
            from zen.guard.scan import python as pyscan

            saved, self.script_argv = self.script_argv, argv
            try:
                pyscan.scan_python(self, text, where)
            finally:
                self.script_argv = saved
        elif lang in ("js", "ruby", "perl", "php"):
            codescan.scan_script(self, lang, text, where)
        else:
            self.deny("opaque.exec", f"{where}: code the guardian cannot check")


def _spread_args(text: str, args: list[str | None]) -> str:
    """The script with "$@" / $* spelled as the arguments it runs with, when every argument is a
    plain word (letters, digits, ./-_=:,@%+): nothing is quoted, so no quote the replacement adds
    can change how the rest of the script parses. Unchanged otherwise (then "$@" is only known
    at run time), and where a backslash precedes the expansion."""
    if "$@" not in text and "$*" not in text and "${@}" not in text and "${*}" not in text:
        return text
    if any(a is None or not re.fullmatch(r"[\w./=:,@%+-]+", a) for a in args):
        return text
    words = " ".join(a for a in args if a is not None)

    def one(m: re.Match[str]) -> str:
        return f'"{words}"' if m.group(0).startswith('"') and "*" in m.group(0) else words
    return re.sub(r'(?<![\\$])(?:"\$(?:@|\{@\})"|\$(?:@|\{@\})|"\$(?:\*|\{\*\})"|\$(?:\*|\{\*\}))', one, text)


def _argv(w: Word, args: list[Word] | None) -> list[str | None] | None:
    if args is None:
        return None
    return [w.text, *(a.text if a.known and not a.glob else None for a in args)]


def shebang_lang(text: str) -> str | None:
    """The language a script's first line names (#!/bin/sh, #!/usr/bin/env python3, ...); a text
    file without a shebang runs as a shell script."""
    if not text.startswith("#!"):
        return "sh"
    words = text[2:].split("\n", 1)[0].split()
    if not words:
        return "sh"
    prog = words[0].rsplit("/", 1)[-1]
    if prog == "env":
        rest = [w for w in words[1:] if not w.startswith("-") and "=" not in w]
        prog = rest[0].rsplit("/", 1)[-1] if rest else ""
    if prog.startswith("python"):
        return "python"
    return INTERPRETERS.get(prog)


def output_text(cmd: Cmd | None) -> str | None:
    """What a simple command prints, when the guardian can see it: echo and printf of known
    words, cat of a heredoc or here-string. None otherwise."""
    if cmd is None or not cmd.words or not all(w.known for w in cmd.words):
        return None
    name = cmd.words[0].text.rsplit("/", 1)[-1]
    args = [w.text for w in cmd.words[1:]]
    if name == "echo":
        newline, escapes = "\n", False
        while args and args[0] in ("-n", "-e", "-E", "-ne", "-en"):
            newline = "" if "n" in args[0] else newline
            escapes = "e" in args[0] or escapes
            args = args[1:]
        text = " ".join(args)
        return (decode_ansi_c(text) if escapes else text) + newline
    if name == "printf" and args:
        fmt = decode_ansi_c(args[0])
        if "%" not in fmt:
            return fmt
        if fmt.count("%") == fmt.count("%s") + fmt.count("%b") and len(args) > 1:
            out = fmt
            for a in args[1:]:
                out = out.replace("%s", a, 1).replace("%b", decode_ansi_c(a), 1)
            return out
        return None
    if name == "cat" and not [a for a in args if a != "-"] and cmd.stdin in ("heredoc", "herestring"):
        text = cmd.stdin_text or ""
        return text + ("\n" if cmd.stdin == "herestring" else "")
    return None


def stdin_text(cmd: Cmd | None) -> str | None:
    """The text a command reads on stdin, when the guardian can see it."""
    if cmd is None:
        return None
    if cmd.stdin in ("heredoc", "herestring"):
        return cmd.stdin_text
    if cmd.stdin == "pipe" and isinstance(cmd.piped_from, Cmd):
        return output_text(cmd.piped_from)
    return None


__all__ = ["ScriptRuns", "output_text", "shebang_lang", "stdin_text"]

"""The shell walker's other half: simple commands and their words, as bash would expand them.

`Expander` turns a `command` node into a `Cmd` (words after quote removal, ANSI-C decoding,
brace, tilde and parameter expansion of what is known statically; its redirects, heredoc and
here-string text) and works out what the command changes for the walker (`cd`, assignments,
`read`, `ln -s`). Its words come from WordExpander (wordexp.py). Walker (walk.py) adds the
statements and supplies `nested` and `_seq`, which run the command substitutions found inside
words.

Lean on purpose: runs inside the PreToolUse hook (stdlib only).
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable
from typing import Any

from zen.guard.shell.wordexp import WordExpander, _Buf, _locale_strings
from zen.guard.shell.words import (
    MAX_CWDS,
    UNK,
    UNMARK_T,
    Cmd,
    State,
    Word,
    dq_unescape,
    join,
    link_pairs,
)

_SYMBOLIC_CP = re.compile(r"^(--symbolic-link|-[A-Za-z]*s[A-Za-z]*)$").match
_STACK_INDEX = re.compile(r"^[+-][0-9]+$").match
_CHANGES_DIR = re.compile(r"(^|[^\w.-])(cd|pushd|popd)($|[^\w.-])").search


class Expander(WordExpander):
    """Simple commands (their words: WordExpander); the walker (shell.Walker) supplies the statements."""

    sink: Callable[[Cmd], None]
    home: str | None
    env: dict[str, str]
    src: bytes
    visited: set[int]
    _stdin: tuple[str, Cmd | str | None, str | None] | None
    _last: Cmd | None

    # -- simple commands -------------------------------------------------------------------------
    def _emit(self, cmd: Cmd) -> None:
        self._last = cmd
        self.sink(cmd)

    def _assignment(self, node: Any, st: State) -> tuple[str, Word]:
        name_node = node.child_by_field_name("name")
        value = node.child_by_field_name("value")
        name = self.text(name_node) if name_node is not None else ""
        if name_node is not None and name_node.type == "subscript":
            self.nested(name_node, st)
            name = self.text(name_node.child_by_field_name("name") or name_node)
        if value is None:
            return name, Word("", "")
        if value.type == "array":
            self.nested(value, st)
            return name, Word(UNK, self.text(value))
        words = self.word(value, st, assignment=True)
        if len(words) != 1:
            return name, Word(UNK, self.text(value))
        return name, words[0]

    def _command(self, node: Any, st: State, outer_redirects: list[Any]) -> tuple[State, State]:
        self.visited.add(node.id)
        assigns: list[tuple[str, Word]] = []
        redirects = list(outer_redirects)
        arg_nodes: list[Any] = []
        name_node = None
        for c in node.children:
            t = c.type
            if t == "variable_assignment" and name_node is None:
                assigns.append(self._assignment(c, st))
            elif t == "command_name":
                name_node = c
                arg_nodes.append(c)
            elif t in ("file_redirect", "heredoc_redirect", "herestring_redirect"):
                redirects.append(c)
            elif t == "comment":
                continue
            else:
                arg_nodes.append(c)
        # tree-sitter hangs words that follow a redirect (`echo > f hi`) on the redirect as extra
        # destinations: they are arguments of the command.
        for r in redirects:
            if r.type == "file_redirect":
                dests = [c for i, c in enumerate(r.children) if r.field_name_for_child(i) == "destination"]
                arg_nodes.extend(dests[1:])
        arg_nodes.sort(key=lambda n: n.start_byte)
        words: list[Word] = []
        group: list[Any] = []
        for n in arg_nodes:   # adjacent nodes with no space between them are one word
            if group and group[-1].end_byte != n.start_byte:
                words.extend(self._group_word(group, st))
                group = []
            group.append(n)
        if group:
            words.extend(self._group_word(group, st))
        cmd = Cmd("simple", words, st, self.text(node))
        cmd.assigns = assigns
        self._apply_redirects(cmd, redirects, st)
        if cmd.stdin is None and self._stdin is not None:
            cmd.stdin, cmd.piped_from, cmd.stdin_text = self._stdin
        self._emit(cmd)
        return self._effect(cmd, st)

    def _group_word(self, group: list[Any], st: State) -> list[Word]:
        buf = _Buf()
        for n in _locale_strings(group):
            if n.type == "command_name":
                for c in _locale_strings(n.children):
                    self._piece(c, st, buf, False)
            else:
                self._piece(n, st, buf, False)
        raw = self.src[group[0].start_byte:group[-1].end_byte].decode("utf-8", "surrogateescape")
        return self._finish(buf, st, raw)

    def _apply_redirects(self, cmd: Cmd, redirects: list[Any], st: State) -> None:
        for r in redirects:
            if r.type == "file_redirect":
                op = ""
                dest = None
                for i, c in enumerate(r.children):
                    field = r.field_name_for_child(i)
                    if field == "destination":
                        if dest is None:
                            dest = c
                    elif not c.is_named:
                        op = c.type
                if dest is None:       # `>&-` closes a descriptor
                    continue
                ws = self.word(dest, st)
                target = ws[0] if len(ws) == 1 else Word(UNK, self.text(dest))
                if op in (">&", "<&") and (dest.type == "number" or target.text in ("-",) or
                                           target.text.isdigit()):
                    continue           # descriptor duplication, not a file
                if op in ("<",):
                    cmd.reads.append(target)
                    cmd.stdin = "file"
                elif op in (">", ">>", ">|", "&>", "&>>", ">&", "<>"):
                    cmd.writes.append((target, op in (">>", "&>>")))
                    if op == "<>":
                        cmd.reads.append(target)
                else:
                    cmd.writes.append((Word(UNK, self.text(r)), False))
            elif r.type == "herestring_redirect":
                parts = [c for c in r.named_children]
                texts: list[str] = []
                for p in parts:
                    ws = self.word(p, st)
                    texts.extend(w.text for w in ws)
                    cmd.stdin_secret |= any(w.secret for w in ws)
                cmd.stdin = "herestring"
                cmd.stdin_text = " ".join(texts)
            elif r.type == "heredoc_redirect":
                cmd.stdin = "heredoc"
                cmd.stdin_text = self._heredoc_text(r, st, cmd)
                for c in r.named_children:
                    if c.type == "file_redirect":
                        self._apply_redirects(cmd, [c], st)

    def _heredoc_text(self, r: Any, st: State, cmd: Cmd) -> str:
        start = r.child_by_field_name("start") or next(
            (c for c in r.children if c.type == "heredoc_start"), None)
        body = next((c for c in r.children if c.type == "heredoc_body"), None)
        if body is None:
            return ""
        delim = self.text(start) if start is not None else ""
        quoted = any(q in delim for q in "'\"\\")
        strip_tabs = any(c.type == "<<-" for c in r.children)
        if quoted:
            text = self.text(body)
        else:
            # An unquoted heredoc expands $var, $(cmd) and `cmd` in its body.
            pieces: list[str] = []
            secret = False
            pos = body.start_byte
            for c in body.children:
                if c.start_byte > pos:
                    pieces.append(dq_unescape(self.src[pos:c.start_byte].decode("utf-8", "surrogateescape")))
                if c.type == "heredoc_content" or not c.is_named:
                    pieces.append(dq_unescape(self.text(c)))
                else:
                    buf = _Buf()
                    self._piece(c, st, buf, True)
                    pieces.append("".join(buf.parts).translate(UNMARK_T))
                    secret |= buf.secret
                pos = c.end_byte
            if body.end_byte > pos:
                pieces.append(dq_unescape(self.src[pos:body.end_byte].decode("utf-8", "surrogateescape")))
            text = "".join(pieces)
            cmd.stdin_secret |= secret
        if strip_tabs:
            text = "\n".join(line.lstrip("\t") for line in text.split("\n"))
        return text

    def _effect(self, cmd: Cmd, st: State) -> tuple[State, State]:
        """How a simple command changes what the walker knows (cd, assignments, read, ...)."""
        words = cmd.words
        if not words:
            new = st.set_vars((n, w.text if w.known else None) for n, w in cmd.assigns)
            return new, new
        while len(words) > 1 and words[0].text in ("builtin", "command") and not (
                words[0].text == "command" and any(w.text in ("-v", "-V") for w in words[1:2])):
            words = [w for w in words[1:] if not (w.text == "-p" and w is words[1])] or words[1:]
        name = words[0].text
        args = words[1:]
        if name == "pushd" and any(not a.known or _STACK_INDEX(a.text) for a in args):
            new = st.copy(cwds=(None,))    # pushd +N / -N rotates the directory stack
            return new, join(st, new)
        if name in ("cd", "pushd"):
            return self._cd(args, st, dict(cmd.assigns))
        if name == "popd":
            new = st.copy(cwds=(None,))
            return new, join(st, new)
        if name in st.funcs:
            new = State((None,), {}, dict(st.links), st.funcs, None, True)
            return new, new
        if name == "eval" and (any(not a.known for a in args) or
                               _CHANGES_DIR(" ".join(a.text for a in args))):
            new = st.copy(cwds=(None,), vars={}, opaque=True)   # eval'd text may cd anywhere
            return new, new
        if name in ("source", ".", "eval"):
            new = st.copy(vars={}, opaque=True)
            return new, new
        if name in ("read", "mapfile", "readarray", "getopts", "let", "printf", "export",
                    "declare", "typeset", "local", "readonly"):
            names = {"REPLY", "MAPFILE", "OPTARG", "OPTIND"}
            for a in args:
                if a.known:
                    names.add(a.text.split("=", 1)[0].split("[", 1)[0])
            if name == "printf" and not any(a.text == "-v" for a in args):
                return st, st
            new = st.set_vars((n, None) for n in names)
            return new, new
        if name == "ln" or (name == "cp" and any(_SYMBOLIC_CP(a.text) for a in args if a.known)):
            return self._ln(args, st)
        return st, st

    def _cd(self, args: list[Word], st: State, assigns: dict[str, Word]) -> tuple[State, State]:
        targets = [a for a in args if not (a.known and a.text.startswith("-") and a.text != "-")]
        if not targets:
            home = self.lookup("HOME", st)
            new_cwds: tuple[str | None, ...] = (home,) if home else (None,)
        else:
            t = targets[0]
            if t.known and t.text == "-":
                new_cwds = (st.oldpwd,)
            elif not t.known or t.glob:
                new_cwds = (None,)
            elif t.text.startswith("/"):
                new_cwds = (posixpath.normpath(t.text),)
            else:
                new_cwds = self._cd_relative(t.text, st, assigns)
        new = st.copy(cwds=new_cwds, oldpwd=st.cwd)
        return new, join(st, new)   # cd may fail and leave the cwd where it was

    def _cd_relative(self, target: str, st: State, assigns: dict[str, Word]) -> tuple[str | None, ...]:
        """Where `cd target` may land: each directory of $CDPATH that may hold it (bash tries them
        in order, then the current directory), unless the target starts with . or .."""
        bases: list[str | None] = list(st.cwds)
        first = target.split("/", 1)[0]
        if first not in (".", ".."):
            known, cdpath = self._cdpath(st, assigns)
            if not known:
                return (None,)
            for entry in (cdpath or "").split(":") if cdpath else ():
                if entry.startswith("/"):
                    bases.insert(0, entry)
                else:
                    bases[:0] = [None if c is None else posixpath.join(c, entry or ".") for c in st.cwds]
        out: list[str | None] = []
        for base in bases:
            cwd = None if base is None else posixpath.normpath(posixpath.join(base, target))
            if cwd not in out:
                out.append(cwd)
        return (None,) if None in out or len(out) > MAX_CWDS else tuple(out)

    def _cdpath(self, st: State, assigns: dict[str, Word]) -> tuple[bool, str | None]:
        """(known, value) of $CDPATH for a cd: its own prefix assignment, the script's, the env."""
        if "CDPATH" in assigns:
            w = assigns["CDPATH"]
            return w.known, w.text if w.known else None
        if "CDPATH" in st.vars:
            value = st.vars["CDPATH"]
            return value is not None, value
        if st.opaque:
            return False, None
        return True, self.env.get("CDPATH")

    def _ln(self, args: list[Word], st: State) -> tuple[State, State]:
        """Symbolic links made by `ln -s` (every form: TARGET LINK, TARGET... DIR, -t DIR, -r) or
        `cp -s`: later paths through them are followed (`ln -s / r && rm -rf r/etc`)."""
        pairs = link_pairs(args, st.cwd)
        if not pairs:
            return st, st
        links = dict(st.links)
        links.update(pairs)
        new = st.copy(links=links)
        return new, new

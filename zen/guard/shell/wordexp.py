"""One word of a shell command as bash would expand it (the shell walker's third part).

`WordExpander.word` gives the words a node expands to: quote removal, ANSI-C and locale strings,
brace and tilde expansion, parameter expansion of what is known statically (unknown parts become
UNK marks, secrets are flagged), `$IFS` splitting and the static value of a command
substitution that prints a known text. Expander (expand.py) builds simple commands from these
words; Walker (walk.py) supplies `_substitution`, which runs the substitutions found inside them.

Lean on purpose: runs inside the PreToolUse hook (stdlib only).
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable
from typing import Any

from zen.guard.shell.words import (
    MARK,
    MARK_ALL,
    MARK_NOGLOB,
    UNK,
    UNMARK,
    UNMARK_T,
    Cmd,
    State,
    Word,
    brace_expand,
    decode_ansi_c,
    dq_unescape,
    is_secret_name,
)

_INDIRECT = re.compile(r"^\$\{!\w+(\[(?![@*]\])[^]]*\])?(\}|[:#%/^,-])").match   # not ${!prefix*}, ${!arr[@]}
_NO_VALUE = re.compile(r"^\$\{(#\w+|\w+:?\+)").match
_ASSIGNMENT_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=")
_BRACE_AFTER = re.compile(rb"\{[^\s;&|()<>]*")


def _locale_strings(nodes: list[Any]) -> list[Any]:
    """`nodes` without the `$` of each `$"..."`: a locale string is its double-quoted text, and
    tree-sitter-bash gives it as a `$` token then a string (`rm -rf $"/"` is not "$/")."""
    out: list[Any] = []
    for i, n in enumerate(nodes):
        nxt = nodes[i + 1] if i + 1 < len(nodes) else None
        if (not n.is_named and n.type == "$" and nxt is not None and nxt.start_byte == n.end_byte
                and (nxt.type == "string" or (nxt.type == "concatenation" and nxt.children
                                              and nxt.children[0].type == "string"))):
            continue
        out.append(n)
    return out


class _Buf:
    __slots__ = ("parts", "procsub", "quoted", "secret", "subst")

    def __init__(self) -> None:
        self.parts: list[str] = []
        self.secret = False
        self.subst = False
        self.procsub = False
        self.quoted = False


class WordExpander:
    """Words as bash would expand them; the walker (shell.Walker) supplies the substitutions."""

    sink: Callable[[Cmd], None]
    home: str | None
    env: dict[str, str]
    src: bytes
    visited: set[int]

    def nested(self, node: Any, st: State) -> None:
        """Run every command/process substitution inside `node` (Walker)."""
        raise NotImplementedError

    def _substitution(self, node: Any, st: State) -> None:
        """Run one $(...), `...`, <(...) or >(...) (Walker)."""
        raise NotImplementedError

    def text(self, node: Any) -> str:
        return self.src[node.start_byte:node.end_byte].decode("utf-8", "surrogateescape")

    # -- words -----------------------------------------------------------------------------------
    def lookup(self, name: str, st: State) -> str | None:
        if name in st.vars:
            return st.vars[name]
        if st.opaque:
            return None
        if name == "PWD":
            return st.cwd
        if name == "OLDPWD":
            return st.oldpwd
        if name == "HOME":
            return self.home
        return self.env.get(name)

    def word(self, node: Any, st: State, assignment: bool = False) -> list[Word]:
        buf = _Buf()
        self._piece(node, st, buf, False)
        return self._finish(buf, st, self.text(node), assignment)

    def _finish(self, buf: _Buf, st: State, raw: str, assignment: bool = False) -> list[Word]:
        marked = "".join(buf.parts)
        if not marked and not buf.quoted:
            return []           # an unquoted expansion to nothing disappears
        variants = brace_expand(marked) if ("{" in marked and not assignment) else [marked]
        out = []
        for m in variants:
            if m.startswith("~") or (assignment and "~" in m):
                m = self._tilde(m, st, assignment)
            elif "~" in m and (named := _ASSIGNMENT_WORD.match(m)):
                # bash expands ~ after the = of an argument shaped like an assignment, as in
                # an assignment: `dd of=~/.bashrc` writes the home's .bashrc
                m = m[:named.end()] + self._tilde(m[named.end():], st, True)
            glob = "*" in m or "?" in m or "[" in m
            out.append(Word(m.translate(UNMARK_T), raw, glob, buf.secret, buf.subst, buf.procsub))
        return out

    def _brace_follows(self, node: Any) -> bool:
        """Braces straight after `$NAME`: bash expands them first (`$V{a,}` is `$Va $V`)."""
        after = _BRACE_AFTER.match(self.src, node.end_byte)
        return after is not None and len(brace_expand(after.group().decode("utf-8", "surrogateescape"))) > 1

    def _tilde(self, m: str, st: State, assignment: bool) -> str:
        def one(seg: str) -> str:
            if not seg.startswith("~"):
                return seg
            end = seg.find("/")
            user = seg[1:] if end < 0 else seg[1:end]
            rest = "" if end < 0 else seg[end:]
            if any(ch in UNMARK or ch == UNK for ch in user):
                return seg
            if user == "":
                home = self.lookup("HOME", st)
            elif user == "+":
                home = st.cwd
            elif user == "-":
                home = st.oldpwd
            else:
                home = None
            return (home.translate(MARK_ALL) if home is not None else UNK) + rest
        if assignment:   # VAR=~/a:~/b expands after = and each :
            return ":".join(one(s) for s in m.split(":"))
        return one(m)

    def _piece(self, node: Any, st: State, buf: _Buf, quoted: bool) -> None:
        t = node.type
        if not node.is_named:
            text = self.text(node)
            buf.parts.append(dq_unescape(text).translate(MARK_ALL) if quoted else text)
            return
        if t == "word":
            self._unquoted(self.text(node), buf, quoted)
        elif t == "raw_string":
            buf.quoted = True
            buf.parts.append(self.text(node)[1:-1].translate(MARK_ALL))
        elif t == "string":
            buf.quoted = True
            self._string(node, st, buf)
        elif t == "ansi_c_string":
            buf.quoted = True
            buf.parts.append(decode_ansi_c(self.text(node)[2:-1]).translate(MARK_ALL))
        elif t == "translated_string":
            buf.quoted = True
            for c in node.named_children:
                self._piece(c, st, buf, True)
        elif t == "concatenation":
            for c in _locale_strings(node.children):
                self._piece(c, st, buf, quoted)
        elif t == "simple_expansion":
            names = [c for c in node.named_children]
            name = self.text(names[0]) if names else ""
            if not quoted and self._brace_follows(node):
                buf.parts.append(UNK)    # $V{a,b} is $Va $Vb: braces expand before variables
            elif names and (names[0].type == "variable_name" or name.isdigit() or name == "#"):
                self._var(name, st, buf, quoted)
            else:
                buf.parts.append(UNK)    # $1 $@ $? $$ ...
        elif t == "expansion":
            self._expansion(node, st, buf, quoted)
        elif t == "command_substitution":
            self._command_substitution(node, st, buf, quoted)
        elif t == "process_substitution":
            self._substitution(node, st)
            buf.procsub = True
            buf.parts.append("/dev/fd/63")
        elif t in ("number", "extglob_pattern", "regex", "brace_expression", "variable_name",
                   "special_variable_name", "test_operator", "file_descriptor", "heredoc_content",
                   "string_content"):
            if quoted:
                buf.parts.append(dq_unescape(self.text(node)).translate(MARK_ALL))
            else:
                self._unquoted(self.text(node), buf, False)
        else:
            self.nested(node, st)
            buf.parts.append(UNK)

    def _unquoted(self, raw: str, buf: _Buf, quoted: bool) -> None:
        if quoted:
            buf.parts.append(raw.translate(MARK_ALL))
            return
        if "\\" not in raw:
            buf.parts.append(raw)
            return
        out: list[str] = []
        i, n = 0, len(raw)
        while i < n:
            c = raw[i]
            if c == "\\" and i + 1 < n:
                nxt = raw[i + 1]
                if nxt != "\n":
                    out.append(MARK.get(nxt, nxt))
                    buf.quoted = True
                i += 2
            else:
                out.append(c)
                i += 1
        buf.parts.append("".join(out))

    def _string(self, node: Any, st: State, buf: _Buf) -> None:
        kids = node.children
        start = node.start_byte + 1
        end = node.end_byte - 1
        pos = start
        for c in kids:
            if not c.is_named and c.type == '"' and (c.start_byte == node.start_byte or
                                                     c.end_byte == node.end_byte):
                continue
            if c.start_byte > pos:
                gap = self.src[pos:c.start_byte].decode("utf-8", "surrogateescape")
                buf.parts.append(dq_unescape(gap).translate(MARK_ALL))
            if c.type in ("command_substitution", "arithmetic_expansion"):
                text = self.text(c)
                lead = len(text) - len(text.lstrip())
                if lead:   # tree-sitter folds the blank before `$(` into the node
                    buf.parts.append(text[:lead])
            self._piece(c, st, buf, True)
            pos = max(pos, c.end_byte)
        if end > pos:
            gap = self.src[pos:end].decode("utf-8", "surrogateescape")
            buf.parts.append(dq_unescape(gap).translate(MARK_ALL))

    def _var(self, name: str, st: State, buf: _Buf, quoted: bool) -> None:
        if is_secret_name(name):
            buf.secret = True
        self._append_value(buf, self.lookup(name, st), quoted, st)

    def _append_value(self, buf: _Buf, value: str | None, quoted: bool, st: State) -> None:
        """An expansion's static value as part of a word (UNK when unknown)."""
        if value is None:
            buf.parts.append(UNK)
        elif quoted:
            buf.parts.append(value.translate(MARK_ALL))
        elif any(c in value for c in self._ifs(st)):
            buf.parts.append(UNK)      # word splitting would cut it: give up on the word
        else:
            buf.parts.append(value.translate(MARK_NOGLOB))

    def _ifs(self, st: State) -> str:
        """The characters unquoted expansions are split on ($IFS; all of them when unknown)."""
        if "IFS" in st.vars:
            value = st.vars["IFS"]
            return value if value is not None else "".join(map(chr, range(32, 127))) + " \t\n"
        return " \t\n" if st.opaque is False else "".join(map(chr, range(32, 127))) + " \t\n"

    def _expansion(self, node: Any, st: State, buf: _Buf, quoted: bool) -> None:
        named = node.named_children
        anon = [c.type for c in node.children if not c.is_named]
        text = self.text(node)
        if _INDIRECT(text):
            buf.secret = True           # ${!name}: the value of a variable named at run time
        elif not _NO_VALUE(text):       # ${#X} and ${X:+word} print no part of X
            for c in named:
                if c.type == "variable_name" and is_secret_name(self.text(c)):
                    buf.secret = True
                if c.type == "subscript":
                    n = c.child_by_field_name("name")
                    if n is not None and is_secret_name(self.text(n)):
                        buf.secret = True
        if len(named) == 1 and named[0].type == "variable_name" and anon == ["${", "}"]:
            self._var(self.text(named[0]), st, buf, quoted)
            return
        for c in named:
            self.nested(c, st)
        buf.parts.append(UNK)

    def _command_substitution(self, node: Any, st: State, buf: _Buf, quoted: bool) -> None:
        buf.subst = True
        self._substitution(node, st)
        self._append_value(buf, self._static_substitution(node, st), quoted, st)

    def _static_substitution(self, node: Any, st: State) -> str | None:
        """$(pwd), $(dirname X), $(basename X), $(echo X): values bash would compute for sure."""
        inner = [c for c in node.named_children if c.type != "comment"]
        if len(inner) != 1 or inner[0].type != "command":
            return None
        cmd = inner[0]
        parts: list[Word] = []
        sink, self.sink = self.sink, lambda c: None
        saved_visited = set(self.visited)
        try:
            for c in cmd.children:
                if c.type == "command_name":
                    for cc in c.children:
                        parts.extend(self.word(cc, st))
                elif c.is_named and c.type not in ("variable_assignment", "file_redirect",
                                                   "heredoc_redirect", "herestring_redirect"):
                    parts.extend(self.word(c, st))
                elif c.type != "command_name" and c.is_named:
                    return None
        finally:
            self.sink = sink
            self.visited = saved_visited | self.visited
        if not parts or not all(p.known and not p.glob for p in parts):
            return None
        name, args = parts[0].text, [p.text for p in parts[1:]]
        if name == "pwd" and not args:
            return st.cwd
        if name == "dirname" and len(args) == 1:
            return posixpath.dirname(args[0].rstrip("/")) or ("/" if args[0].startswith("/") else ".")
        if name == "basename" and len(args) == 1:
            return posixpath.basename(args[0].rstrip("/"))
        if name == "echo" and not any(a.startswith("-") for a in args):
            return " ".join(args)
        return None

"""Bash, statically: parse with tree-sitter-bash and walk every command the way bash would run it.

The walker is a small abstract interpreter. It expands words as bash does (quote removal, ANSI-C
decoding, brace, tilde and parameter expansion of what is known statically) and tracks the
working directory and literal variables across `cd`, assignments, lists, loops and branches.
Whatever it cannot know is marked with UNK; the analyser treats UNK in a dangerous slot (the
program name, a delete target, a URL host, ...) as a reason to deny.

Every simple command it meets is handed to a sink as a `Cmd`, in execution order. After the walk
it checks that every `command` node of the tree was visited: a construct this walker does not
understand cannot hide a command (fail closed).

Lean on purpose: this runs inside the PreToolUse hook (stdlib + tree-sitter only).
"""

from __future__ import annotations

import posixpath
from collections.abc import Callable, Iterable
from typing import Any

UNK = "\x00"        # a character whose value cannot be known statically
FOUND = "\x01"      # a path component standing for "whatever find/xargs feeds in"

# Quoted characters that would otherwise be special to brace/glob/tilde expansion are carried
# through expansion as private-use stand-ins, then mapped back.
_MARK = {"{": "\ue000", "}": "\ue001", ",": "\ue002", "*": "\ue003", "?": "\ue004", "[": "\ue005",
         "~": "\ue006"}
_UNMARK = {v: k for k, v in _MARK.items()}
_MARK_ALL = str.maketrans(_MARK)
_MARK_NOGLOB = str.maketrans({k: v for k, v in _MARK.items() if k in "{},~"})
_UNMARK_T = str.maketrans(_UNMARK)

MAX_DEPTH = 6          # nested shells (bash -c "bash -c ...") before we give up and deny
MAX_CWDS = 4           # possible working directories tracked at once
MAX_BRACE = 256        # words one brace expression may produce
MAX_LOOP_VALUES = 16   # for-loop values walked one by one

_SECRET_TOKENS = frozenset({
    "KEY", "APIKEY", "TOKEN", "SECRET", "SECRETS", "PASSWORD", "PASSWD", "PASS", "PASSPHRASE",
    "CREDENTIAL", "CREDENTIALS", "CREDS", "AUTH", "PRIVATE", "SESSION", "COOKIE", "DSN", "PAT",
    "SIGNATURE", "SALT", "BEARER", "JWT", "OTP",
})
_NOT_SECRET = frozenset({"PWD", "OLDPWD", "KEYMAP", "SSH_AUTH_SOCK", "XAUTHORITY", "PASS_MAX_DAYS"})


def is_secret_name(name: str) -> bool:
    """A variable whose name says it holds a secret (API_KEY, GITHUB_TOKEN, DB_PASSWORD, ...)."""
    upper = name.upper()
    if upper in _NOT_SECRET:
        return False
    parts = [p for p in upper.replace("-", "_").split("_") if p]
    if any(p in _SECRET_TOKENS for p in parts):
        return True
    return upper in ("DATABASE_URL", "REDIS_URL", "MONGO_URL", "MONGODB_URI", "AMQP_URL")


class ShellError(Exception):
    """The script cannot be analysed with confidence: the caller denies with this rule."""

    def __init__(self, rule: str, reason: str) -> None:
        super().__init__(reason)
        self.rule = rule
        self.reason = reason


class Word:
    """One argument after expansion. `text` holds UNK where the value is unknown."""

    __slots__ = ("glob", "procsub", "raw", "secret", "subst", "text")

    def __init__(self, text: str, raw: str = "", glob: bool = False, secret: bool = False,
                 subst: bool = False, procsub: bool = False) -> None:
        self.text = text
        self.raw = raw or text
        self.glob = glob
        self.secret = secret
        self.subst = subst
        self.procsub = procsub

    @property
    def known(self) -> bool:
        return UNK not in self.text

    def __repr__(self) -> str:
        return f"Word({self.text!r})"


def lit(text: str) -> Word:
    return Word(text, text)


class State:
    """What the walker knows at one point of the script (copied on change, never mutated)."""

    __slots__ = ("cwds", "funcs", "links", "oldpwd", "opaque", "vars")

    def __init__(self, cwds: tuple[str | None, ...], vars: dict[str, str | None] | None = None,
                 links: dict[str, str] | None = None, funcs: frozenset[str] = frozenset(),
                 oldpwd: str | None = None, opaque: bool = False) -> None:
        self.cwds = cwds
        self.vars = vars or {}
        self.links = links or {}
        self.funcs = funcs
        self.oldpwd = oldpwd
        self.opaque = opaque

    def copy(self, **changes: Any) -> State:
        new = State(self.cwds, self.vars, self.links, self.funcs, self.oldpwd, self.opaque)
        for k, v in changes.items():
            setattr(new, k, v)
        return new

    @property
    def cwd(self) -> str | None:
        """The working directory when only one is possible, else None."""
        return self.cwds[0] if len(self.cwds) == 1 else None

    def set_vars(self, pairs: Iterable[tuple[str, str | None]]) -> State:
        merged = dict(self.vars)
        merged.update(pairs)
        return self.copy(vars=merged)


_ABSENT = object()


def join(*states: State) -> State:
    """The state after one of several paths: what differs becomes unknown."""
    first = states[0]
    if all(s is first for s in states):
        return first
    cwds: list[str | None] = []
    for s in states:
        for c in s.cwds:
            if c not in cwds:
                cwds.append(c)
    if None in cwds or len(cwds) > MAX_CWDS:
        cwds = [None]
    keys: set[str] = set()
    for s in states:
        keys.update(s.vars)
    merged: dict[str, str | None] = {}
    for k in keys:
        values = {s.vars.get(k, _ABSENT) for s in states}  # type: ignore[arg-type]
        merged[k] = values.pop() if len(values) == 1 else None  # type: ignore[assignment]
        if merged[k] is _ABSENT:
            merged[k] = None
    links: dict[str, str] = {}
    funcs: frozenset[str] = frozenset()
    for s in states:
        links.update(s.links)
        funcs |= s.funcs
    oldpwds = {s.oldpwd for s in states}
    return State(tuple(cwds), merged, links, funcs, oldpwds.pop() if len(oldpwds) == 1 else None,
                 any(s.opaque for s in states))


class Cmd:
    """One simple command as bash would run it."""

    __slots__ = ("assigns", "kind", "piped_from", "reads", "src", "state", "stdin", "stdin_text",
                 "words", "writes")

    def __init__(self, kind: str, words: list[Word], state: State, src: str) -> None:
        self.kind = kind                  # simple | declaration | unset | test | assign | redirect
        self.words = words
        self.state = state
        self.src = src
        self.assigns: list[tuple[str, Word]] = []
        self.writes: list[tuple[Word, bool]] = []   # output redirect targets, (word, append)
        self.reads: list[Word] = []                 # `< file` sources
        self.stdin: str | None = None               # pipe | heredoc | herestring | file | None
        self.stdin_text: str | None = None          # heredoc / here-string text (UNK if dynamic)
        self.piped_from: Cmd | str | None = None    # the producer of a pipe ("complex" if unknown)

    @property
    def name(self) -> str:
        return self.words[0].text if self.words else ""

    def __repr__(self) -> str:
        return f"Cmd({self.kind}, {[w.text for w in self.words]!r}, cwds={self.state.cwds})"


# --------------------------------------------------------------------------------------------
# parsing

_PARSER: Any = None


def _parser() -> Any:
    global _PARSER
    if _PARSER is None:
        import tree_sitter
        import tree_sitter_bash

        lang = tree_sitter.Language(tree_sitter_bash.language())
        query = tree_sitter.Query(lang, "(command) @c")
        _PARSER = (tree_sitter.Parser(lang), tree_sitter.QueryCursor(query))
    return _PARSER


def parse(src: str) -> Any:
    """The tree of `src`; ShellError when bash would not accept it (or tree-sitter cannot tell)."""
    p, _ = _parser()
    tree = p.parse(src.encode("utf-8", "surrogateescape"))
    if tree.root_node.has_error:
        raise ShellError("shell.parse", "the command does not parse as bash (unterminated quote, "
                         "bracket or heredoc?)")
    return tree


def command_node_ids(tree: Any) -> set[int]:
    _, cursor = _parser()
    caps = cursor.captures(tree.root_node)
    return {n.id for n in caps.get("c", ())}


# --------------------------------------------------------------------------------------------
# small decoders

def decode_ansi_c(body: str) -> str:
    """The value of $'...' (body without the quotes)."""
    out: list[str] = []
    i, n = 0, len(body)
    simple = {"a": "\a", "b": "\b", "e": "\x1b", "E": "\x1b", "f": "\f", "n": "\n", "r": "\r",
              "t": "\t", "v": "\v", "\\": "\\", "'": "'", '"': '"', "?": "?"}
    while i < n:
        c = body[i]
        if c != "\\" or i + 1 >= n:
            out.append(c)
            i += 1
            continue
        d = body[i + 1]
        if d in simple:
            out.append(simple[d])
            i += 2
        elif d == "x":
            j = i + 2
            while j < n and j < i + 4 and body[j] in "0123456789abcdefABCDEF":
                j += 1
            out.append(chr(int(body[i + 2:j], 16)) if j > i + 2 else "\\x")
            i = j
        elif d in "uU":
            width = 4 if d == "u" else 8
            j = i + 2
            while j < n and j < i + 2 + width and body[j] in "0123456789abcdefABCDEF":
                j += 1
            try:
                out.append(chr(int(body[i + 2:j], 16)) if j > i + 2 else "\\" + d)
            except (ValueError, OverflowError):
                out.append(UNK)
            i = j
        elif d in "01234567":
            j = i + 1
            while j < n and j < i + 4 and body[j] in "01234567":
                j += 1
            out.append(chr(int(body[i + 1:j], 8) & 0xFF))
            i = j
        elif d == "c" and i + 2 < n:
            out.append(chr(ord(body[i + 2]) & 0x1F))
            i += 3
        else:
            out.append("\\" + d)
            i += 2
    return "".join(out)


def _dq_unescape(s: str) -> str:
    """Backslash removal inside double quotes: only before $ ` " \\ and newline."""
    if "\\" not in s:
        return s
    out: list[str] = []
    i, n = 0, len(s)
    while i < n:
        c = s[i]
        if c == "\\" and i + 1 < n and s[i + 1] in '$`"\\\n':
            if s[i + 1] != "\n":
                out.append(s[i + 1])
            i += 2
        else:
            out.append(c)
            i += 1
    return "".join(out)


def brace_expand(s: str) -> list[str]:
    """Bash brace expansion over a marked string (quoted braces are already stand-ins)."""
    results = [s]
    done: list[str] = []
    while results:
        cur = results.pop()
        expanded = _brace_once(cur)
        if expanded is None:
            done.append(cur)
        else:
            results.extend(reversed(expanded))
        if len(done) + len(results) > MAX_BRACE:
            return [UNK]
    return done


def _brace_once(s: str) -> list[str] | None:
    start = 0
    while True:
        i = s.find("{", start)
        if i < 0:
            return None
        depth, j, commas = 0, i, []
        close = -1
        while j < len(s):
            c = s[j]
            if c == "{":
                depth += 1
            elif c == "}":
                depth -= 1
                if depth == 0:
                    close = j
                    break
            elif c == "," and depth == 1:
                commas.append(j)
            j += 1
        if close < 0:
            return None
        pre, body, post = s[:i], s[i + 1:close], s[close + 1:]
        if commas:
            parts, last = [], i + 1
            for c in commas:
                parts.append(s[last:c])
                last = c + 1
            parts.append(s[last:close])
            return [pre + p + post for p in parts]
        seq = _brace_seq(body)
        if seq is not None:
            return [pre + p + post for p in seq]
        start = i + 1


def _brace_seq(body: str) -> list[str] | None:
    parts = body.split("..")
    if len(parts) not in (2, 3):
        return None
    a, b = parts[0], parts[1]
    try:
        step = abs(int(parts[2])) if len(parts) == 3 else 1
    except ValueError:
        return None
    step = step or 1
    try:
        x, y = int(a), int(b)
        if abs(y - x) // step > MAX_BRACE:
            return [UNK]
        rng = range(x, y + 1, step) if x <= y else range(x, y - 1, -step)
        return [str(v) for v in rng]
    except ValueError:
        pass
    if len(a) == 1 and len(b) == 1:
        x, y = ord(a), ord(b)
        rng = range(x, y + 1, step) if x <= y else range(x, y - 1, -step)
        return [chr(v) for v in rng]
    return None


# --------------------------------------------------------------------------------------------
# the walker

_STATEMENTS = frozenset({
    "command", "list", "pipeline", "subshell", "compound_statement", "redirected_statement",
    "if_statement", "while_statement", "for_statement", "c_style_for_statement", "case_statement",
    "function_definition", "negated_command", "declaration_command", "unset_command",
    "variable_assignment", "variable_assignments", "test_command",
})


class _Buf:
    __slots__ = ("parts", "procsub", "quoted", "secret", "subst")

    def __init__(self) -> None:
        self.parts: list[str] = []
        self.secret = False
        self.subst = False
        self.procsub = False
        self.quoted = False


class Walker:
    """Walks one script, emitting every simple command to `sink` with the state it runs in."""

    def __init__(self, sink: Callable[[Cmd], None], home: str | None, env: dict[str, str],
                 depth: int = 0) -> None:
        self.sink = sink
        self.home = home
        self.env = env
        self.depth = depth
        self.src = b""
        self.visited: set[int] = set()
        self._stdin: tuple[str, Cmd | str | None, str | None] | None = None
        self._last: Cmd | None = None

    # -- entry -------------------------------------------------------------------------------
    def script(self, src: str, st: State) -> State:
        if self.depth > MAX_DEPTH:
            raise ShellError("shell.depth", f"shells nested more than {MAX_DEPTH} deep")
        tree = parse(src)
        self.src = src.encode("utf-8", "surrogateescape")
        _, out = self._seq(tree.root_node, st)
        missed = command_node_ids(tree) - self.visited
        if missed:
            raise ShellError("shell.unsupported", "the command uses a construct the guardian "
                             "cannot follow, so it cannot see every command in it")
        return out

    def text(self, node: Any) -> str:
        return self.src[node.start_byte:node.end_byte].decode("utf-8", "surrogateescape")

    # -- statements ------------------------------------------------------------------------------
    def run(self, node: Any, st: State) -> tuple[State, State]:
        handler = getattr(self, "_s_" + node.type, None)
        if handler is None:
            return self._s_generic(node, st)
        result: tuple[State, State] = handler(node, st)
        return result

    def _seq(self, node: Any, st: State, kids: list[Any] | None = None) -> tuple[State, State]:
        kids = node.children if kids is None else kids
        ok = cur = st
        for i, child in enumerate(kids):
            if not child.is_named or child.type == "comment":
                continue
            if child.type == "file_redirect":   # $(< file): bash reads the file
                cmd = Cmd("redirect", [], cur, self.text(child))
                self._apply_redirects(cmd, [child], cur)
                self._emit(cmd)
                continue
            if child.type not in _STATEMENTS:
                self.nested(child, cur)
                continue
            background = i + 1 < len(kids) and kids[i + 1].type == "&"
            o, a = self.run(child, cur)
            if background:   # `cmd &` runs in a subshell: its cd and assignments do not stick
                o, a = cur, cur
            ok, cur = o, a
        return ok, cur

    def _s_program(self, node: Any, st: State) -> tuple[State, State]:
        return self._seq(node, st)

    _s_compound_statement = _s_program
    _s_do_group = _s_program

    def _s_subshell(self, node: Any, st: State) -> tuple[State, State]:
        self._seq(node, st)
        return st, st

    def _s_list(self, node: Any, st: State) -> tuple[State, State]:
        kids = [c for c in node.children if c.type != "comment"]
        left, op, right = kids[0], kids[1].type, kids[-1]
        lo, la = self.run(left, st)
        if op == "&&":
            ro, ra = self.run(right, lo)
            return ro, join(la, ra)
        ro, ra = self.run(right, la)
        return join(lo, ro), join(la, ra)

    def _s_pipeline(self, node: Any, st: State) -> tuple[State, State]:
        stages = self._stages(node)
        self._run_stages(stages, st, self._stdin)
        return st, st

    def _stages(self, node: Any) -> list[Any]:
        out: list[Any] = []
        for c in node.children:
            if c.type == "pipeline":
                out.extend(self._stages(c))
            elif c.is_named and c.type != "comment":
                out.append(c)
        return out

    def _run_stages(self, stages: list[Any], st: State, first_stdin: Any,
                    producer: Cmd | str | None = None) -> None:
        saved = self._stdin
        try:
            for i, stage in enumerate(stages):
                if i == 0 and producer is None:
                    self._stdin = first_stdin
                else:
                    prev = producer if i == 0 else self._stage_producer
                    self._stdin = ("pipe", prev, None)
                self._last = None
                if stage.type in _STATEMENTS:
                    self.run(stage, st)
                else:
                    self.nested(stage, st)
                last = self._last
                self._stage_producer = last if (last is not None and stage.type in
                                                ("command", "redirected_statement")) else "complex"
        finally:
            self._stdin = saved

    _stage_producer: Cmd | str | None = None

    def _s_negated_command(self, node: Any, st: State) -> tuple[State, State]:
        _, a = self._seq(node, st)
        return a, a

    def _s_redirected_statement(self, node: Any, st: State) -> tuple[State, State]:
        body = node.child_by_field_name("body")
        redirects: list[Any] = []
        continuation: list[tuple[str, Any]] = []
        for i, c in enumerate(node.children):
            if node.field_name_for_child(i) == "redirect" or c.type.endswith("_redirect"):
                if body is not None and c.id == body.id:
                    continue
                redirects.append(c)
                if c.type == "heredoc_redirect":
                    continuation.extend(self._heredoc_continuation(c))
        if body is None:   # only redirects, e.g. `> file`
            cmd = Cmd("redirect", [], st, self.text(node))
            self._apply_redirects(cmd, redirects, st)
            self._emit(cmd)
            return st, st
        if body.type == "command":
            ok, any_ = self._command(body, st, redirects)
        else:
            cmd = Cmd("redirect", [], st, self.text(node))
            self._apply_redirects(cmd, redirects, st)
            self._emit(cmd)
            saved = self._stdin
            if cmd.stdin is not None:
                self._stdin = (cmd.stdin, cmd, cmd.stdin_text)
            try:
                ok, any_ = self.run(body, st)
            finally:
                self._stdin = saved
        producer = self._last
        for kind, cont in continuation:
            if kind == "pipe":
                self._run_stages(cont, st, None, producer=producer if producer else "complex")
                ok = any_ = st
            elif kind == "&&":
                ro, ra = self.run(cont, ok)
                ok, any_ = ro, join(any_, ra)
            else:
                ro, ra = self.run(cont, any_)
                ok, any_ = join(ok, ro), join(any_, ra)
        return ok, any_

    def _heredoc_continuation(self, hd: Any) -> list[tuple[str, Any]]:
        out: list[tuple[str, Any]] = []
        op = None
        for i, c in enumerate(hd.children):
            field = hd.field_name_for_child(i)
            if c.type == "pipeline":
                out.append(("pipe", self._stages(c)))
            elif field == "operator":
                op = c.type
            elif field == "right":
                out.append((op or "&&", c))
        return out

    def _s_command(self, node: Any, st: State) -> tuple[State, State]:
        return self._command(node, st, [])

    def _s_variable_assignment(self, node: Any, st: State) -> tuple[State, State]:
        pairs = [self._assignment(node, st)]
        cmd = Cmd("assign", [], st, self.text(node))
        cmd.assigns = [(n, w) for n, w in pairs]
        self._emit(cmd)
        new = st.set_vars((n, w.text if w.known else None) for n, w in pairs)
        return new, new

    def _s_variable_assignments(self, node: Any, st: State) -> tuple[State, State]:
        pairs = [self._assignment(c, st) for c in node.named_children
                 if c.type == "variable_assignment"]
        cmd = Cmd("assign", [], st, self.text(node))
        cmd.assigns = pairs
        self._emit(cmd)
        new = st.set_vars((n, w.text if w.known else None) for n, w in pairs)
        return new, new

    def _s_declaration_command(self, node: Any, st: State) -> tuple[State, State]:
        words: list[Word] = []
        pairs: list[tuple[str, Word]] = []
        for c in node.children:
            if not c.is_named:
                words.append(lit(self.text(c)))
            elif c.type == "variable_assignment":
                name, value = self._assignment(c, st)
                pairs.append((name, value))
                words.append(Word(f"{name}={value.text}", self.text(c), secret=value.secret,
                                  subst=value.subst))
            elif c.type == "variable_name":
                words.append(lit(self.text(c)))
            else:
                words.extend(self.word(c, st))
        cmd = Cmd("declaration", words, st, self.text(node))
        cmd.assigns = pairs
        self._emit(cmd)
        new = st.set_vars((n, w.text if w.known else None) for n, w in pairs)
        return new, new

    def _s_unset_command(self, node: Any, st: State) -> tuple[State, State]:
        words = [lit("unset")]
        names: list[str] = []
        for c in node.named_children:
            ws = self.word(c, st)
            words.extend(ws)
            names.extend(w.text for w in ws if w.known and not w.text.startswith("-"))
        self._emit(Cmd("unset", words, st, self.text(node)))
        new = st.set_vars((n, "") for n in names)
        return new, new

    def _s_test_command(self, node: Any, st: State) -> tuple[State, State]:
        self.nested(node, st)
        self._emit(Cmd("test", [lit("[[")], st, self.text(node)))
        return st, st

    def _s_function_definition(self, node: Any, st: State) -> tuple[State, State]:
        name_node = node.child_by_field_name("name")
        body = node.child_by_field_name("body")
        # The body runs later, from wherever the function is called: assume nothing about it.
        inner = State((None,), {}, dict(st.links), st.funcs, None, True)
        if body is not None:
            self.run(body, inner)
        new = st.copy(funcs=st.funcs | {self.text(name_node)} if name_node is not None else st.funcs)
        return new, new

    def _conditional(self, kids: list[Any], st: State, start_kw: str, body_kw: str
                     ) -> tuple[list[Any], list[Any]]:
        """Split `if COND; then BODY` style children into condition and body statements."""
        cond: list[Any] = []
        body: list[Any] = []
        target = None
        for c in kids:
            if c.type == start_kw:
                target = cond
                continue
            if c.type == body_kw:
                target = body
                continue
            if c.type in ("elif_clause", "else_clause", "fi"):
                target = None
                continue
            if target is not None:
                target.append(c)
        return cond, body

    def _s_if_statement(self, node: Any, st: State) -> tuple[State, State]:
        kids = node.children
        cond, body = self._conditional(kids, st, "if", "then")
        co, ca = self._seq(node, st, cond)
        bo, ba = self._seq(node, co, body)
        oks, anys = [bo], [ba]
        fallthrough = ca
        has_else = False
        for c in kids:
            if c.type == "elif_clause":
                ec, eb = self._conditional(c.children, fallthrough, "elif", "then")
                eo, ea = self._seq(c, fallthrough, ec)
                bo2, ba2 = self._seq(c, eo, eb)
                oks.append(bo2)
                anys.append(ba2)
                fallthrough = join(fallthrough, ea)
            elif c.type == "else_clause":
                has_else = True
                bo3, ba3 = self._seq(c, fallthrough)
                oks.append(bo3)
                anys.append(ba3)
        if not has_else:
            oks.append(fallthrough)
            anys.append(fallthrough)
        return join(*oks), join(*anys)

    def _s_while_statement(self, node: Any, st: State) -> tuple[State, State]:
        cond_nodes = [c for i, c in enumerate(node.children)
                      if node.field_name_for_child(i) == "condition"]
        body = node.child_by_field_name("body")
        cur = st
        exit_state = st
        for _ in range(2):   # twice: a second pass with what the first changed reaches a fixpoint
            co, ca = self._seq(node, cur, cond_nodes)
            _, ba = self.run(body, co) if body is not None else (co, co)
            exit_state = join(exit_state, ca)
            nxt = join(cur, ba)
            if nxt is cur:
                break
            cur = nxt
        out = join(exit_state, cur)
        return out, out

    def _s_for_statement(self, node: Any, st: State) -> tuple[State, State]:
        var = node.child_by_field_name("variable")
        body = node.child_by_field_name("body")
        name = self.text(var) if var is not None else ""
        values: list[Word] = []
        has_values = False
        for i, c in enumerate(node.children):
            if node.field_name_for_child(i) == "value":
                has_values = True
                values.extend(self.word(c, st))
        if body is None:
            return st, st
        if has_values and len(values) <= MAX_LOOP_VALUES and all(v.known for v in values):
            outs = [st]
            for v in values:
                _, a = self.run(body, st.set_vars([(name, v.text)]))
                outs.append(a)
            out = join(*outs)
            return out, out
        out = join(st, self._loop(body, st.set_vars([(name, None)])))
        return out, out

    def _s_c_style_for_statement(self, node: Any, st: State) -> tuple[State, State]:
        body = node.child_by_field_name("body")
        names = [self.text(c.child_by_field_name("name")) for c in node.named_children
                 if c.type == "variable_assignment" and c.child_by_field_name("name") is not None]
        for c in node.named_children:
            if body is None or c.id != body.id:
                self.nested(c, st)
        cur = st.set_vars((n, None) for n in names)
        out = join(st, self._loop(body, cur) if body is not None else cur)
        return out, out

    def _loop(self, body: Any, cur: State) -> State:
        """A loop body run until its state stops changing (twice at most): what a variable or
        cwd may be after any number of iterations."""
        for _ in range(2):
            _, a = self.run(body, cur)
            nxt = join(cur, a)
            if nxt is cur:
                break
            cur = nxt
        return cur

    def _s_case_statement(self, node: Any, st: State) -> tuple[State, State]:
        value = node.child_by_field_name("value")
        if value is not None:
            self.word(value, st)
        outs = [st]
        for item in node.named_children:
            if item.type != "case_item":
                continue
            stmts = []
            for i, c in enumerate(item.children):
                if item.field_name_for_child(i) == "value":
                    self.nested(c, st)
                elif c.is_named and c.type in _STATEMENTS:
                    stmts.append(c)
            _, a = self._seq(item, st, stmts)
            outs.append(a)
        out = join(*outs)
        return out, out

    def _s_generic(self, node: Any, st: State) -> tuple[State, State]:
        self._seq(node, st)
        return st, st

    # -- nested substitutions -------------------------------------------------------------------
    def nested(self, node: Any, st: State) -> None:
        """Run every command/process substitution (and stray statement) inside `node`."""
        stack = [node]
        while stack:
            n = stack.pop()
            t = n.type
            if t in ("command_substitution", "process_substitution"):
                self._substitution(n, st)
                continue
            if t in _STATEMENTS and n is not node:
                self.run(n, st)
                continue
            stack.extend(reversed(n.children))

    def _substitution(self, node: Any, st: State) -> None:
        saved = self._stdin, self._last
        self._stdin = ("pipe", "complex", None) if self.text(node).startswith(">(") else None
        try:
            self._seq(node, st)
        finally:
            self._stdin, self._last = saved

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
        for n in group:
            if n.type == "command_name":
                for c in n.children:
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
                texts = []
                for p in parts:
                    texts.extend(w.text for w in self.word(p, st))
                cmd.stdin = "herestring"
                cmd.stdin_text = " ".join(texts)
            elif r.type == "heredoc_redirect":
                cmd.stdin = "heredoc"
                cmd.stdin_text = self._heredoc_text(r, st)
                for c in r.named_children:
                    if c.type == "file_redirect":
                        self._apply_redirects(cmd, [c], st)

    def _heredoc_text(self, r: Any, st: State) -> str:
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
            pos = body.start_byte
            for c in body.children:
                if c.start_byte > pos:
                    pieces.append(_dq_unescape(self.src[pos:c.start_byte].decode("utf-8", "surrogateescape")))
                if c.type == "heredoc_content" or not c.is_named:
                    pieces.append(_dq_unescape(self.text(c)))
                else:
                    buf = _Buf()
                    self._piece(c, st, buf, True)
                    pieces.append("".join(buf.parts).translate(_UNMARK_T))
                pos = c.end_byte
            if body.end_byte > pos:
                pieces.append(_dq_unescape(self.src[pos:body.end_byte].decode("utf-8", "surrogateescape")))
            text = "".join(pieces)
        if strip_tabs:
            text = "\n".join(line.lstrip("\t") for line in text.split("\n"))
        return text

    def _effect(self, cmd: Cmd, st: State) -> tuple[State, State]:
        """How a simple command changes what the walker knows (cd, assignments, read, ...)."""
        words = cmd.words
        if not words:
            new = st.set_vars((n, w.text if w.known else None) for n, w in cmd.assigns)
            return new, new
        name = words[0].text
        args = words[1:]
        if name in ("cd", "pushd"):
            return self._cd(args, st)
        if name == "popd":
            new = st.copy(cwds=(None,))
            return new, join(st, new)
        if name in st.funcs:
            new = State((None,), {}, dict(st.links), st.funcs, None, True)
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
        if name == "ln":
            return self._ln(args, st)
        return st, st

    def _cd(self, args: list[Word], st: State) -> tuple[State, State]:
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
            else:
                new_cwds = tuple(
                    posixpath.normpath(posixpath.join(c, t.text)) if c is not None or t.text.startswith("/")
                    else None
                    for c in st.cwds)
                if t.text.startswith("/"):
                    new_cwds = (posixpath.normpath(t.text),)
        new = st.copy(cwds=new_cwds, oldpwd=st.cwd)
        return new, join(st, new)   # cd may fail and leave the cwd where it was

    def _ln(self, args: list[Word], st: State) -> tuple[State, State]:
        symbolic = False
        pos: list[Word] = []
        target_dir = None
        it = iter(args)
        for a in it:
            if a.known and a.text.startswith("-") and len(a.text) > 1 and not pos:
                if a.text in ("-t", "--target-directory"):
                    target_dir = next(it, None)
                elif a.text.startswith("--target-directory="):
                    target_dir = lit(a.text.split("=", 1)[1])
                elif a.text == "--symbolic" or (not a.text.startswith("--") and "s" in a.text):
                    symbolic = True
                continue
            pos.append(a)
        cwd = st.cwd
        if not symbolic or cwd is None or target_dir is not None or not 1 <= len(pos) <= 2:
            return st, st
        if not all(p.known and not p.glob for p in pos):
            return st, st
        target = pos[0].text
        link = pos[1].text if len(pos) == 2 else posixpath.basename(target.rstrip("/"))
        link_abs = posixpath.normpath(posixpath.join(cwd, link))
        target_abs = posixpath.normpath(posixpath.join(posixpath.dirname(link_abs), target))
        links = dict(st.links)
        links[link_abs] = target_abs
        new = st.copy(links=links)
        return new, new

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
            glob = any(c in m for c in "*?[")
            out.append(Word(m.translate(_UNMARK_T), raw, glob, buf.secret, buf.subst, buf.procsub))
        return out

    def _tilde(self, m: str, st: State, assignment: bool) -> str:
        def one(seg: str) -> str:
            if not seg.startswith("~"):
                return seg
            end = seg.find("/")
            user = seg[1:] if end < 0 else seg[1:end]
            rest = "" if end < 0 else seg[end:]
            if any(ch in _UNMARK or ch == UNK for ch in user):
                return seg
            if user == "":
                home = self.lookup("HOME", st)
            elif user == "+":
                home = st.cwd
            elif user == "-":
                home = st.oldpwd
            else:
                home = None
            return (home.translate(_MARK_ALL) if home is not None else UNK) + rest
        if assignment:   # VAR=~/a:~/b expands after = and each :
            return ":".join(one(s) for s in m.split(":"))
        return one(m)

    def _piece(self, node: Any, st: State, buf: _Buf, quoted: bool) -> None:
        t = node.type
        if not node.is_named:
            text = self.text(node)
            buf.parts.append(_dq_unescape(text).translate(_MARK_ALL) if quoted else text)
            return
        if t == "word":
            self._unquoted(self.text(node), buf, quoted)
        elif t == "raw_string":
            buf.quoted = True
            buf.parts.append(self.text(node)[1:-1].translate(_MARK_ALL))
        elif t == "string":
            buf.quoted = True
            self._string(node, st, buf)
        elif t == "ansi_c_string":
            buf.quoted = True
            buf.parts.append(decode_ansi_c(self.text(node)[2:-1]).translate(_MARK_ALL))
        elif t == "translated_string":
            buf.quoted = True
            for c in node.named_children:
                self._piece(c, st, buf, True)
        elif t == "concatenation":
            for c in node.children:
                self._piece(c, st, buf, quoted)
        elif t == "simple_expansion":
            names = [c for c in node.named_children]
            name = self.text(names[0]) if names else ""
            if names and names[0].type == "variable_name":
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
                buf.parts.append(_dq_unescape(self.text(node)).translate(_MARK_ALL))
            else:
                self._unquoted(self.text(node), buf, False)
        else:
            self.nested(node, st)
            buf.parts.append(UNK)

    def _unquoted(self, raw: str, buf: _Buf, quoted: bool) -> None:
        if quoted:
            buf.parts.append(raw.translate(_MARK_ALL))
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
                    out.append(_MARK.get(nxt, nxt))
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
                buf.parts.append(_dq_unescape(gap).translate(_MARK_ALL))
            if c.type in ("command_substitution", "arithmetic_expansion"):
                text = self.text(c)
                lead = len(text) - len(text.lstrip())
                if lead:   # tree-sitter folds the blank before `$(` into the node
                    buf.parts.append(text[:lead])
            self._piece(c, st, buf, True)
            pos = max(pos, c.end_byte)
        if end > pos:
            gap = self.src[pos:end].decode("utf-8", "surrogateescape")
            buf.parts.append(_dq_unescape(gap).translate(_MARK_ALL))

    def _var(self, name: str, st: State, buf: _Buf, quoted: bool) -> None:
        if is_secret_name(name):
            buf.secret = True
        self._append_value(buf, self.lookup(name, st), quoted)

    @staticmethod
    def _append_value(buf: _Buf, value: str | None, quoted: bool) -> None:
        """An expansion's static value as part of a word (UNK when unknown)."""
        if value is None:
            buf.parts.append(UNK)
        elif quoted:
            buf.parts.append(value.translate(_MARK_ALL))
        elif any(c in value for c in " \t\n"):
            buf.parts.append(UNK)      # word splitting would cut it: give up on the word
        else:
            buf.parts.append(value.translate(_MARK_NOGLOB))

    def _expansion(self, node: Any, st: State, buf: _Buf, quoted: bool) -> None:
        named = node.named_children
        anon = [c.type for c in node.children if not c.is_named]
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
        self._append_value(buf, self._static_substitution(node, st), quoted)

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

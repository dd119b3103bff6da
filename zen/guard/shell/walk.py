"""Bash, statically: parse with tree-sitter-bash and walk every command the way bash would run it.

The walker is a small abstract interpreter. This module holds its statement half: lists,
pipelines, subshells, redirected statements, declarations and functions, which carry the working
directory and literal variables from one command to the next (`State`, joined where paths
meet); branches.py its branches and loops, parse.py the parser. expand.py is its other half: simple commands and their words (quote removal, ANSI-C
decoding, brace, tilde and parameter expansion of what is known statically, redirects, heredocs,
and what `cd`, assignments and `ln -s` change). Whatever it cannot know is marked with UNK; the
analyser treats UNK in a dangerous slot (the program name, a delete target, a URL host, ...) as a
reason to deny.

Every simple command it meets is handed to a sink as a `Cmd`, in execution order. After the walk
it checks that every `command` node of the tree was visited: a construct this walker does not
understand cannot hide a command (fail closed).

Lean on purpose: this runs inside the PreToolUse hook (stdlib + tree-sitter only).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from zen.guard.shell.branches import Branches
from zen.guard.shell.expand import Expander
from zen.guard.shell.parse import REDIRECTS, STATEMENTS, command_node_ids, parse
from zen.guard.shell.words import (
    MAX_DEPTH,
    Cmd,
    ShellError,
    State,
    Word,
    expand_command_braces,
    join,
    join_continuations,
    lit,
)


class Walker(Branches, Expander):
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
        self._tails: dict[int, list[Any]] = {}       # node id -> redirects that belong to it
        self._tail_states: dict[int, State] = {}     # node id -> the state it ran in

    # -- entry -------------------------------------------------------------------------------
    def script(self, src: str, st: State) -> State:
        if self.depth > MAX_DEPTH:
            raise ShellError("shell.depth", f"shells nested more than {MAX_DEPTH} deep")
        src = join_continuations(src)
        try:
            tree = parse(src)
        except ShellError:
            # `{rm,-rf,~}` is brace expansion in the command word, which tree-sitter reads as an
            # unclosed group: expand it as bash does and read the result
            rewritten = expand_command_braces(src)
            if rewritten == src:
                raise
            src = rewritten
            tree = parse(src)
        self.src = src.encode("utf-8", "surrogateescape")
        _, out = self._seq(tree.root_node, st)
        missed = command_node_ids(tree) - self.visited
        if missed:
            raise ShellError("shell.unsupported", "the command uses a construct the guardian "
                             "cannot follow, so it cannot see every command in it")
        return out

    # -- statements ------------------------------------------------------------------------------
    def run(self, node: Any, st: State) -> tuple[State, State]:
        if self._tails:
            moved = self._tails.pop(node.id, None)
            if moved is not None:        # redirects written after a list's last command: its own
                self._tail_states[node.id] = st
                return self._redirected(node, moved, st)
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
            if child.type not in STATEMENTS:
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
                if stage.type in STATEMENTS:
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
        if body.type in ("list", "pipeline"):
            # tree-sitter hangs the redirects written after a list's (or a pipeline's) last command
            # on the whole list; bash gives them to that command, which runs where the list has got
            # to: `cd / && echo x > etc/passwd` writes /etc/passwd
            tail = self._tail_of(body)
            self._tails[tail.id] = redirects
            try:
                ok, any_ = self.run(body, st)
            finally:
                self._tails.pop(tail.id, None)
            tail_st = self._tail_states.pop(tail.id, st)
            if any(kind == "pipe" for kind, _ in continuation):
                ok = any_ = join(ok, any_)
        else:
            ok, any_ = self._redirected(body, redirects, st)
            tail_st = st
            if any(kind == "pipe" for kind, _ in continuation):
                ok = any_ = st    # the command was a pipeline's first stage (a subshell)
        producer = self._last
        for kind, cont in continuation:
            if kind == "pipe":
                self._run_stages(cont, tail_st, None, producer=producer if producer else "complex")
            elif kind == "&&":
                ro, ra = self.run(cont, ok)
                ok, any_ = ro, join(any_, ra)
            else:
                ro, ra = self.run(cont, any_)
                ok, any_ = join(ok, ro), join(any_, ra)
        return ok, any_

    def _tail_of(self, node: Any) -> Any:
        """The last command of a list or pipeline (descending through nested ones)."""
        while node.type in ("list", "pipeline"):
            kids = [c for c in node.children if c.is_named and c.type != "comment"]
            if not kids:
                break
            node = kids[-1]
        return node

    def _redirected(self, body: Any, redirects: list[Any], st: State) -> tuple[State, State]:
        """Run `body` with `redirects` applied to it."""
        if body.type == "command":
            return self._command(body, st, redirects)
        cmd = Cmd("redirect", [], st, self.text(body))
        self._apply_redirects(cmd, redirects, st)
        self._emit(cmd)
        saved = self._stdin
        if cmd.stdin is not None:
            self._stdin = (cmd.stdin, cmd, cmd.stdin_text)
        try:
            return self.run(body, st)
        finally:
            self._stdin = saved

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
        if any(w.text.startswith("-") and "n" in w.text[1:] for w in words[1:]):
            # declare -n: a name that stands for another variable, whatever that holds later
            names = [n for n, _ in pairs] + [w.text for w in words[1:] if not w.text.startswith("-")]
            new = st.set_vars((n.split("=", 1)[0], None) for n in names)
            return new, new
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
        redirects = [c for c in node.children if c.type in REDIRECTS]
        if redirects:
            # `f() { ...; } > FILE` opens FILE at every call of f: judged as if opened here
            cmd = Cmd("redirect", [], st, self.text(node))
            self._apply_redirects(cmd, redirects, st)
            self._emit(cmd)
        if body is not None:
            self.run(body, inner)
        new = st.copy(funcs=st.funcs | {self.text(name_node)} if name_node is not None else st.funcs)
        return new, new

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
            if t in STATEMENTS and n is not node:
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


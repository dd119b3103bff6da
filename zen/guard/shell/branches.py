"""The shell walker's branches and loops: if/elif/else, while/until, for, C-style for and case.

Each runs its parts the way bash may and joins the states where the paths meet (a loop body
twice at most, until its state stops changing), so a later command sees every working directory
and value a variable may have. A mixin of Walker (walk.py), which supplies the statements.

Lean on purpose: this runs inside the PreToolUse hook (stdlib only).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from zen.guard.shell.parse import STATEMENTS
from zen.guard.shell.words import MAX_LOOP_VALUES, State, Word, join


class Branches:
    """Branches and loops (Walker supplies the statements and the words)."""

    # supplied by Walker and Expander (annotations only: a stub here would win the MRO)
    run: Callable[[Any, State], tuple[State, State]]
    _seq: Callable[..., tuple[State, State]]
    word: Callable[..., list[Word]]
    nested: Callable[[Any, State], None]
    text: Callable[[Any], str]

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
                elif c.is_named and c.type in STATEMENTS:
                    stmts.append(c)
            _, a = self._seq(item, st, stmts)
            outs.append(a)
        out = join(*outs)
        return out, out

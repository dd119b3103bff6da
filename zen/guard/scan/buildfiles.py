"""What `make TARGET` and `npm run NAME` would run, read from the Makefile and package.json
(pure functions over their text).

make: the recipe lines of the goals and of everything they depend on (the first target when
none is named), with `$(VAR)` / `${VAR}` expanded from the file's simple assignments, automatic
variables ($@ $< $^) filled in, and `$(shell ...)` kept as a command substitution; what cannot
be expanded becomes UNK. A variable the file does not set has make's own value: a command-line
`VAR=value`, then the environment, then make's built-in default (CC, RM, ...), else empty, as
make expands it. `include` makes the file's rules unknown.

npm / yarn / pnpm / bun: the script NAME with its pre and post scripts.
"""

from __future__ import annotations

import json
import re

from zen.guard.shell.words import UNK

_RULE = re.compile(r"^([^\s:#=][^:=]*?)\s*(::?)(?!=)\s*(.*)$")
_ASSIGN = re.compile(r"^(?:export\s+|override\s+)?([A-Za-z_.][A-Za-z0-9_.-]*)\s*([:+?!]?=|::=)\s*(.*)$")
_VAR = re.compile(r"\$\(([^()]*)\)|\$\{([^{}]*)\}|\$([@<^?*%+|])|\$\$")


# make's built-in variables (make -p), those recipes use
_BUILTIN_VARS = {"CC": "cc", "CXX": "g++", "CPP": "cc -E", "AR": "ar", "AS": "as", "LD": "ld", "RM": "rm -f",
                 "FC": "f77", "YACC": "yacc", "LEX": "lex", "ARFLAGS": "rv", "SHELL": "/bin/sh",
                 "MAKE": "make", "CURDIR": ".", "MAKEFLAGS": ""}


def make_recipes(text: str, goals: list[str], env: dict[str, str] | None = None,
                 overrides: dict[str, str] | None = None) -> list[str] | None:
    """The shell lines `make GOALS` runs, in order; None when the file cannot be read with
    confidence (an include)."""
    rules: dict[str, tuple[list[str], list[str]]] = {}
    variables: dict[str, str] = dict(_BUILTIN_VARS)
    for name in env or {}:   # the recipe's shell reads it from the environment (secret or not)
        variables[name] = "$${" + name + "}"
    order: list[str] = []
    current: list[str] | None = None
    lines = text.replace("\\\n", " ").splitlines()
    for line in lines:
        if line.startswith("\t"):
            if current is not None:
                current.append(line[1:])
            continue
        stripped = line.split("#", 1)[0].rstrip()
        if not stripped.strip():
            continue
        if re.match(r"^\s*-?s?include\s", stripped):
            return None
        assign = _ASSIGN.match(stripped.strip())
        if assign:
            name, op, value = assign.groups()
            variables[name] = (variables.get(name, "") + " " + value).strip() if op == "+=" else (
                variables.get(name, value) if op == "?=" else value)
            current = None
            continue
        rule = _RULE.match(stripped)
        if rule is None:
            current = None
            continue
        targets, _, rest = rule.groups()
        deps, _, inline = rest.partition(";")
        current = [inline.strip()] if inline.strip() else []
        for t in targets.split():
            rules[t] = (deps.split(), current)
            if not t.startswith(".") and "%" not in t:
                order.append(t)
    variables.update(overrides or {})
    default = _expand(variables.get(".DEFAULT_GOAL", ""), variables, "", [], 0).split()
    todo = list(goals) or default or order[:1]
    out: list[str] = []
    seen: set[str] = set()

    def visit(target: str) -> None:
        if target in seen or target not in rules:
            return
        seen.add(target)
        deps, recipe = rules[target]
        for d in deps:
            visit(d)
        for cmd in recipe:
            out.append(_expand(cmd.lstrip("@-+ \t"), variables, target, deps, 0))

    for goal in todo:
        visit(goal)
    return out


def _expand(text: str, variables: dict[str, str], target: str, deps: list[str], depth: int) -> str:
    def one(m: re.Match[str]) -> str:
        if m.group(0) == "$$":
            return "$"
        auto = m.group(3)
        if auto is not None:
            return {"@": target, "<": deps[0] if deps else "", "^": " ".join(deps), "+": " ".join(deps)}.get(auto, UNK)
        inner = m.group(1) if m.group(1) is not None else m.group(2)
        if inner.startswith("shell "):
            return "$(" + inner[len("shell "):] + ")"
        if inner in variables and depth < 8:
            return _expand(variables[inner], variables, target, deps, depth + 1)
        if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_.-]*", inner) and depth < 8:
            return ""           # a variable nothing sets is empty
        return UNK              # a function ($(wildcard ...)), a substitution reference
    return _VAR.sub(one, text)


def npm_scripts(text: str, name: str) -> list[str] | None:
    """The commands `npm run NAME` runs (prename, name, postname); None when package.json does
    not parse or holds no such script."""
    try:
        data = json.loads(text)
    except ValueError:
        return None
    scripts = data.get("scripts") if isinstance(data, dict) else None
    if not isinstance(scripts, dict) or not isinstance(scripts.get(name), str):
        return None
    return [s for s in (scripts.get("pre" + name), scripts[name], scripts.get("post" + name))
            if isinstance(s, str)]

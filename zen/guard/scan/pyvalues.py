"""Python values scan/python.py cannot follow: module objects passed around, and what shows the
environment (pyscan hands in its own name resolution, `_dotted`, to keep one notion of a name).

Imported by scan/python.py only (ast loads only when a command runs Python).
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from typing import Any

from zen.guard.shell.words import is_secret_name

# modules whose objects passed around run nothing (json as a serializer, math, ...)
_INERT_MODULES = frozenset({"json", "math", "re", "string", "itertools", "functools", "collections", "time",
                            "datetime", "random", "typing", "dataclasses", "enum", "decimal", "fractions",
                            "statistics", "textwrap", "pprint", "copy", "operator", "uuid", "hashlib", "base64",
                            "struct", "logging", "argparse", "csv", "unittest", "pytest", "numpy", "np", "pandas"})


def module_values(an: Any, tree: Any, modules: set[str], aliases: dict[str, str], where: str,
                  _dotted: Callable[[Any, dict[str, str]], str], _GETATTR: set[str]) -> None:
    """A module object used other than by name (in a list, passed to a function, returned, in a
    conditional) is called where the scan cannot name it: denied (`[os][0].system('id')`)."""
    if not modules:
        return
    used: set[int] = set()
    for n in ast.walk(tree):
        if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name):
            used.add(id(n.value))
        elif isinstance(n, ast.Call) and n.args and isinstance(n.args[0], ast.Name) and _dotted(
                n.func, aliases) in (*_GETATTR, "hasattr", "builtins.hasattr"):
            used.add(id(n.args[0]))        # getattr(os, NAME): judged by _py_getattr
        elif isinstance(n, ast.Assign) and isinstance(n.value, ast.Name) and len(n.targets) == 1 \
                and isinstance(n.targets[0], ast.Name):
            used.add(id(n.value))          # x = os: x is os (an alias)
    for n in ast.walk(tree):
        if isinstance(n, ast.Name) and n.id in modules and isinstance(n.ctx, ast.Load) and id(n) not in used \
                and aliases.get(n.id, n.id).split(".")[0] not in _INERT_MODULES:
            an.deny("opaque.exec", f"{where}: the module {aliases.get(n.id, n.id)} is used as a value, and what "
                    "is called on it cannot be named")


def environ_leaks(node: Any, aliases: dict[str, str], _dotted: Callable[[Any, dict[str, str]], str],
                  _literal_arg: Callable[[Any, int], str | None]) -> bool:
    """`node` shows the environment: all of it (os.environ, its items), a secret-looking variable,
    or one named at run time. Whether a variable is set (`'X' in os.environ`) and the value of a
    named, non-secret one (`os.environ.get('CI')`) show nothing secret."""
    parents: dict[int, Any] = {}
    for p in ast.walk(node):
        for c in ast.iter_child_nodes(p):
            parents[id(c)] = p
    for sub in ast.walk(node):
        if isinstance(sub, ast.Call) and _dotted(sub.func, aliases) == "os.getenv":
            name = _literal_arg(sub, 0)
            if name is None or is_secret_name(name):
                return True
        if not (isinstance(sub, ast.Attribute) and _dotted(sub, aliases) == "os.environ"):
            continue
        parent = parents.get(id(sub))
        if isinstance(parent, ast.Compare) and sub in parent.comparators and all(
                isinstance(op, (ast.In, ast.NotIn)) for op in parent.ops):
            continue                                   # 'X' in os.environ: presence only
        if isinstance(parent, ast.Subscript) and parent.value is sub:
            key = parent.slice
            if isinstance(key, ast.Constant) and isinstance(key.value, str) and not is_secret_name(key.value):
                continue
            return True
        call = parents.get(id(parent)) if isinstance(parent, ast.Attribute) and parent.attr == "get" else None
        if isinstance(call, ast.Call) and call.func is parent:
            name = _literal_arg(call, 0)
            if name is not None and not is_secret_name(name):
                continue
        return True
    return False

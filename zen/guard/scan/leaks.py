"""Credentials sent out by code the guardian reads (pure helpers for pyscan).

    environ_sent(an, nodes, aliases, where, dotted)   denies (creds.exfil) when the arguments of a
                                                      network call carry the environment or a
                                                      secret-looking variable

`requests.post(URL, json=dict(os.environ))`, `urlopen(URL, data=repr(os.environ).encode())`,
`headers={"X": os.getenv("API_KEY")}`: the whole environment (os.environ not read by one
non-secret key) or a secret-looking variable in any argument of the call.

Lean on purpose: pyscan (the hook's Python reader) imports it; stdlib only.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from typing import Any

from zen.guard.shell.words import is_secret_name


def _key(node: Any) -> str | None:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


def environ_sent(an: Any, nodes: list[Any], aliases: dict[str, str], where: str,
                 dotted: Callable[[Any, dict[str, str]], str | None]) -> None:
    keyed: set[int] = set()      # os.environ nodes read by one key: judged by that key
    whole: list[Any] = []
    for node in nodes:
        for sub in ast.walk(node):
            if isinstance(sub, ast.Call):
                fn = dotted(sub.func, aliases)
                if fn in ("os.getenv", "os.environ.get", "os.environ.pop", "os.environ.setdefault"):
                    key = _key(sub.args[0]) if sub.args else None
                    if key is None or is_secret_name(key):
                        _deny(an, where, key)
                    if isinstance(sub.func, ast.Attribute):
                        keyed.add(id(sub.func.value))
            elif isinstance(sub, ast.Subscript) and dotted(sub.value, aliases) == "os.environ":
                key = _key(sub.slice)
                if key is None or is_secret_name(key):
                    _deny(an, where, key)
                keyed.add(id(sub.value))
            elif isinstance(sub, ast.Attribute | ast.Name) and dotted(sub, aliases) == "os.environ":
                whole.append(sub)
    if any(id(w) not in keyed for w in whole):
        an.deny("creds.exfil", f"{where}: sends the whole environment over the network, secrets included")


def _deny(an: Any, where: str, key: str | None) -> None:
    what = f"the variable {key}" if key else "a variable named at run time"
    an.deny("creds.exfil", f"{where}: sends {what} over the network; credentials never pass through an agent")

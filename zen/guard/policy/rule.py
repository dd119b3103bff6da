"""One compiled guardian rule (policy.py compiles them; the analyser and decide() match them).

    Rule.from_dict(compiled) -> Rule     .applies(domain, level)   .path_matches(path, wt, ~)

What a rule matches by is worked out once, when it is built: the program names as a set when no
`command` glob has a wildcard, each `subcommand` as its words, the `text` regexes and the `path`
globs compiled. `path_matches` is pure and cached (a batch, or the resident guardian, asks about
the same paths again and again).

Lean on purpose (imported by the hook): stdlib only.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable
from typing import Any

_WILDCARD = re.compile(r"[*?\[]")


def glob_regex(pattern: str) -> re.Pattern[str]:
    """A path glob with ** (any depth) as an anchored regex."""
    out = []
    i, n = 0, len(pattern)
    while i < n:
        c = pattern[i]
        if pattern.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif pattern.startswith("**", i):
            out.append(".*")
            i += 2
        elif c == "*":
            out.append("[^/]*")
            i += 1
        elif c == "?":
            out.append("[^/]")
            i += 1
        elif c == "[":
            j = pattern.find("]", i + 1)
            if j < 0:
                out.append(re.escape(c))
                i += 1
            else:
                body = pattern[i + 1:j]
                if body.startswith("!"):
                    body = "^" + body[1:]
                out.append("[" + body.replace("\\", "\\\\") + "]")
                i = j + 1
        else:
            out.append(re.escape(c))
            i += 1
    return re.compile("(?s:" + "".join(out) + r")\Z")


class Rule:
    """One compiled guardian rule (a plain class: dataclasses costs the hook an import of inspect)."""

    __slots__ = ("decision", "domains", "id", "incident", "levels", "match", "names", "path_res", "reason",
                 "source", "subcommands", "text_res")

    def __init__(self, id: str, reason: str, decision: str, match: dict[str, list[str]],
                 domains: list[str] | None, levels: list[str] | None, source: str, incident: str | None) -> None:
        self.id = id
        self.reason = reason
        self.decision = decision
        self.match = match
        self.domains = domains
        self.levels = levels
        self.source = source
        self.incident = incident
        self.text_res: list[re.Pattern[str]] = []
        self.path_res: list[tuple[str, re.Pattern[str]]] = []
        # what a command is matched by, worked out once: the program names when no `command` glob
        # has a wildcard (a set lookup instead of fnmatch), each `subcommand` as its words
        globs = match.get("command")
        self.names: frozenset[str] | None = (
            frozenset(globs) if globs is not None and not any(_WILDCARD.search(g) for g in globs) else None)
        subs = match.get("subcommand")
        self.subcommands: tuple[list[str], ...] | None = (
            tuple(s.split() for s in subs) if subs is not None else None)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Rule:
        rule = cls(d["id"], d["reason"], d["decision"], d["match"], d.get("domains"), d.get("levels"),
                   d.get("source", ""), d.get("incident"))
        rule.text_res = [re.compile(p, re.I) for p in rule.match.get("text", [])]
        for p in rule.match.get("path", []):
            kind = "abs" if p.startswith("/") else "home" if p.startswith("~/") else (
                "rel" if "/" in p.rstrip("/") else "name")
            rule.path_res.append((kind, glob_regex(p[2:] if kind == "home" else p.rstrip("/"))))
        return rule

    def applies(self, domain: str | None, level: str) -> bool:
        if self.domains is not None and domain not in self.domains:
            return False
        return self.levels is None or level in self.levels

    def path_matches(self, path: str, worktree: str | None, user_home: str | None) -> bool:
        return _path_matches(self, path, worktree, user_home)

    @property
    def label(self) -> str:
        return f"{self.reason} (incident {self.incident})" if self.incident else self.reason


@functools.lru_cache(maxsize=8192)
def _path_matches(rule: Rule, path: str, worktree: str | None, user_home: str | None) -> bool:
    """Rule.path_matches: pure, and asked about the same paths again and again (a batch, the
    resident guardian), so cached."""
    for kind, rx in rule.path_res:
        if kind == "abs" and (rx.match(path) or any(rx.match(a) for a in _ancestors(path))):
            return True
        if kind == "home" and user_home and path.startswith(user_home.rstrip("/") + "/"):
            rel = path[len(user_home.rstrip("/")) + 1:]
            if rx.match(rel) or any(rx.match(a) for a in _ancestors(rel)):
                return True
        if kind in ("rel", "name") and worktree and path.startswith(worktree.rstrip("/") + "/"):
            rel = path[len(worktree.rstrip("/")) + 1:]
            if kind == "rel" and (rx.match(rel) or any(rx.match(a) for a in _ancestors(rel))):
                return True
            if kind == "name" and any(rx.match(part) for part in rel.split("/")):
                return True
    return False


def _ancestors(path: str) -> Iterable[str]:
    parts = path.split("/")
    for i in range(1, len(parts)):
        yield "/".join(parts[:i])

"""Destructive database statements: SQL, Mongo shell code, Redis commands (pure functions).

Lean on purpose: imported by the hook (stdlib only).
"""

from __future__ import annotations

import re

_SQL_COMMENT = re.compile(r"--[^\n]*|/\*.*?\*/|#[^\n]*", re.S)
_TAUTOLOGY = (  # compiled on first use (by re's cache): only a DELETE or UPDATE needs it
    r"^\(*\s*(?:1|true|not\s+false|(\d+)\s*(?:=|==|<=|>=)\s*\1|(\w+)\s*=\s*\2|'([^']*)'\s*=\s*'\3'"
    r"|1\s*(?:<>|!=)\s*0|0\s*(?:<>|!=)\s*1|\w+\s+is\s+not\s+null|\w+\s+is\s+null\s+or\s+\w+\s+is\s+not\s+null)"
    r"\s*\)*\s*(?:$|or\b|limit\b|returning\b|order\b)")


def split_sql(text: str) -> list[str]:
    """Statements of `text` split on semicolons outside quotes."""
    out, cur, quote = [], [], None
    for ch in text:
        if quote:
            cur.append(ch)
            if ch == quote:
                quote = None
        elif ch in "'\"`":
            quote = ch
            cur.append(ch)
        elif ch == ";":
            out.append("".join(cur))
            cur = []
        else:
            cur.append(ch)
    out.append("".join(cur))
    return [s.strip() for s in out if s.strip()]


def destructive_sql(text: str) -> str | None:
    """The first statement that destroys data wholesale (DROP, TRUNCATE, ALTER ... DROP,
    DELETE/UPDATE without an effective WHERE), else None."""
    for stmt in split_sql(_SQL_COMMENT.sub(" ", text)):
        flat = " ".join(stmt.split())
        upper = flat.upper()
        words = upper.split()
        if not words:
            continue
        head = words[0]
        if head == "WITH":    # WITH x AS (...) DELETE FROM ...: look at the main statement
            m = re.search(r"\)\s*(DELETE|UPDATE|INSERT|SELECT|MERGE)\b", upper)
            if m:
                upper = upper[m.start(1):]
                flat = flat[m.start(1):]
                words = upper.split()
                head = words[0]
        if head in {"DROP", "DROPDB"}:
            return " ".join(flat.split()[:3])
        if head == "TRUNCATE":
            return " ".join(flat.split()[:3])
        if head == "ALTER" and re.search(r"\bDROP\b", upper):
            return " ".join(flat.split()[:3]) + " ... DROP"
        if head in ("DELETE", "UPDATE"):
            m = re.search(r"\bWHERE\b(.*)$", flat, re.I | re.S)
            if m is None or re.match(_TAUTOLOGY, m.group(1).strip(), re.I):
                what = "DELETE" if head == "DELETE" else "UPDATE"
                return f"{what} without an effective WHERE ({' '.join(flat.split()[:4])})"
        if head in ("FLUSHALL", "FLUSHDB"):
            return head
    return None


_MONGO = (r"\.\s*(dropDatabase|drop|dropUser|dropAllUsers|dropIndexes)\s*\(|"  # compiled on first use
          r"\.\s*(deleteMany|remove)\s*\(\s*(\{\s*\})?\s*\)")


def destructive_mongo(js: str) -> str | None:
    m = re.search(_MONGO, js, re.I)
    return m.group(0) if m else None


def destructive_redis(words: list[str]) -> str | None:
    for w in words:
        if w.upper() in ("FLUSHALL", "FLUSHDB"):
            return w.upper()
    return None

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


_DOLLAR = re.compile(r"\$(\w*)\$(.*?)\$\1\$", re.S)
_EXECUTE = re.compile(r"\bEXECUTE\s+(?:format\s*\(\s*)?'((?:[^']|'')*)'", re.I)
_BLOCK = re.compile(r"\b(BEGIN|THEN|ELSE|LOOP)\s+(?=(DELETE|UPDATE|DROP|TRUNCATE|ALTER)\b)", re.I)
_NESTED = re.compile(r"\(\s*(DELETE|UPDATE|DROP|TRUNCATE|ALTER)\b", re.I)


def destructive_sql(text: str, depth: int = 0) -> str | None:
    """The first statement that destroys data wholesale (DROP, TRUNCATE, ALTER ... DROP,
    DELETE/UPDATE without an effective WHERE), else None. Statements hidden in structure count:
    in a CTE or a subquery, in a DO block's or a function's $$ body, in EXECUTE '...'."""
    text = _SQL_COMMENT.sub(" ", text)
    if depth < 4:
        for m in _DOLLAR.finditer(text):
            found = destructive_sql(m.group(2), depth + 1)
            if found:
                return found
        for m in _EXECUTE.finditer(text):
            found = destructive_sql(m.group(1).replace("''", "'"), depth + 1)
            if found:
                return found
        text = _DOLLAR.sub(" ", text)
    elif _DOLLAR.search(text) or _EXECUTE.search(text):
        return "code nested too deeply to read ($$ bodies or EXECUTE strings)"   # fail closed
    for stmt in split_sql(text):
        found = _statement(stmt)
        if found:
            return found
        for m in _BLOCK.finditer(stmt):       # PL/pgSQL: BEGIN DROP ...; IF ... THEN DELETE ...
            found = _statement(stmt[m.end(1):])
            if found:
                return found
        for m in _NESTED.finditer(stmt):
            found = _statement(_group(stmt, m.start()))
            if found:
                return found
    return None


def _group(text: str, start: int) -> str:
    """The text inside the parenthesis that opens at `start`."""
    level = 0
    for i in range(start, len(text)):
        if text[i] == "(":
            level += 1
        elif text[i] == ")":
            level -= 1
            if level == 0:
                return text[start + 1:i]
    return text[start + 1:]


def _statement(stmt: str) -> str | None:
    flat = " ".join(stmt.split())
    upper = flat.upper()
    words = upper.split()
    if not words:
        return None
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


# ORM calls that empty or drop tables: unscoped deletes (a where/filter in front scopes them)
_ORM = re.compile(
    r"\b[A-Z]\w*\.(?:all\.)?(?:delete_all|destroy_all)\b"              # Rails: User.delete_all
    r"|\bconnection\.(?:drop_table|truncate|truncate_tables|drop_database|purge_database)\b"
    r"|\b(?:drop_table|drop_database|truncate_tables)\s*[(:]"
    r"|\.objects\.all\(\)\.delete\(\)|\.objects\.delete\(\)"            # Django
    r"|\bcall_command\(\s*['\"](?:flush|reset_db|sqlflush)['\"]"
    r"|\bquery\(\s*\w+\s*\)\.delete\(|\bmetadata\.drop_all\("          # SQLAlchemy
    r"|\bprisma\.\w+\.deleteMany\(\s*(?:\{\s*\})?\s*\)|\$executeRawUnsafe"   # Prisma
    r"|\bsequelize\.drop\(|\.sync\(\s*\{\s*force\s*:\s*true"                # Sequelize
    r"|\btruncate\s*:\s*true\b|\.drop_collection\(|\.drop_database\(")       # Sequelize, pymongo


def destructive_orm(code: str) -> str | None:
    """An ORM call that deletes every row or drops a table (User.delete_all,
    User.objects.all().delete(), prisma.user.deleteMany(), metadata.drop_all(...)), else None."""
    m = _ORM.search(code)
    return m.group(0) if m else None


def destructive_redis(words: list[str]) -> str | None:
    for w in words:
        if w.upper() in ("FLUSHALL", "FLUSHDB"):
            return w.upper()
    return None

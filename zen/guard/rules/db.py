"""Databases: SQL clients, mongo, redis-cli, dropdb, mysqladmin, framework DB commands.

SQL given with -c/-e, heredocs, here-strings and pipes from echo/printf is parsed for
DROP/TRUNCATE/DELETE without an effective WHERE (sqlscan.destructive_sql).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from zen.guard import defaults, sqlscan
from zen.guard.options import split_opts
from zen.guard.words import UNK, Cmd, State, Word, lit

if TYPE_CHECKING:
    from zen.guard.analyse import Analyser


def sql(an: Analyser, name: str, args: list[Word], st: State, cmd: Cmd | None, depth: int) -> None:
    an.ro(f"`{name}`")
    texts: list[Word] = []
    value_flags = {"-c", "--command", "-e", "--execute", "-Q", "--query", "-q"}
    skip_value = {"-h", "--host", "-p", "--port", "-U", "--username", "-u", "--user", "-d", "--dbname",
                  "-D", "--database", "-f", "--file", "-o", "--output", "-v", "--set", "-P", "-S", "-W",
                  "-F", "-R", "-T", "-L", "--log-file", "-i", "-I", "-s", "-H"}
    i = 0
    posw: list[Word] = []
    while i < len(args):
        a = args[i]
        t = a.text
        if t in value_flags or (name in ("bq",) and t == "query"):
            if i + 1 < len(args):
                texts.append(args[i + 1])
            i += 2
            continue
        if a.known and t.startswith("--") and "=" in t:
            k, _, v = t.partition("=")
            if k in value_flags:
                texts.append(lit(v) if a.known else a)
            if k in ("--file", "--output"):
                pass
            i += 1
            continue
        if t in skip_value and name not in ("sqlite3", "sqlite", "duckdb"):
            if t in ("-o", "--output") and i + 1 < len(args):
                an.write_word(args[i + 1], st, f"`{name} -o` writes")
            i += 2
            continue
        if t.startswith("-") and len(t) > 1:
            if len(t) > 2 and t[1] in "ceQ" and not t.startswith("--") and name in ("psql", "mysql", "mariadb") \
                    and t[1] in "ce":
                texts.append(lit(t[2:]))
            i += 1
            continue
        posw.append(a)
        i += 1
    if name in ("sqlite3", "sqlite", "duckdb") and len(posw) >= 2:
        texts.extend(posw[1:])
    for w in texts:
        if not w.known:
            an.deny("sql.unresolved", f"`{name}` runs SQL only known at run time")
        bad = sqlscan.destructive_sql(w.text)
        if bad:
            an.deny("sql.destructive", f"`{name}`: destructive SQL ({bad})")
    if cmd is not None and cmd.stdin in ("heredoc", "herestring"):
        text = cmd.stdin_text or ""
        if UNK in text:
            an.deny("sql.unresolved", f"SQL fed to `{name}` is only known at run time")
        bad = sqlscan.destructive_sql(text)
        if bad:
            an.deny("sql.destructive", f"`{name}`: destructive SQL ({bad})")
    elif cmd is not None and cmd.stdin == "pipe":
        prod = cmd.piped_from
        if isinstance(prod, Cmd) and prod.words and prod.words[0].text in ("echo", "printf"):
            text = " ".join(w.text for w in prod.words[1:])
            if UNK in text:
                an.deny("sql.unresolved", f"SQL piped into `{name}` is only known at run time")
            bad = sqlscan.destructive_sql(text)
            if bad:
                an.deny("sql.destructive", f"`{name}`: destructive SQL ({bad})")
        elif isinstance(prod, Cmd) and prod.words and prod.words[0].text.rsplit("/", 1)[-1] in (
                "base64", "xxd", "openssl", "gunzip", "zcat", "curl", "wget", "eval"):
            an.deny("opaque.pipe", f"decoded or downloaded text piped into `{name}`")


def mongo(an: Analyser, name: str, args: list[Word], st: State, cmd: Cmd | None, depth: int) -> None:
    an.ro(f"`{name}`")
    for k, a in enumerate(args):
        if a.text in ("--eval",) and k + 1 < len(args):
            code = args[k + 1]
            if not code.known:
                an.deny("sql.unresolved", f"`{name} --eval` code only known at run time")
            bad = sqlscan.destructive_mongo(code.text)
            if bad:
                an.deny("sql.destructive", f"`{name}`: {bad} destroys data")
    if cmd is not None and cmd.stdin in ("heredoc", "herestring"):
        bad = sqlscan.destructive_mongo(cmd.stdin_text or "")
        if bad or UNK in (cmd.stdin_text or ""):
            an.deny("sql.destructive", f"`{name}`: {bad or 'a script only known at run time'}")


def redis(an: Analyser, name: str, args: list[Word], st: State, cmd: Cmd | None, depth: int) -> None:
    _, pos = split_opts(args, "hpanusrid", frozenset({"--user", "--pass", "--tls", "--cacert"}))
    an.ro("`redis-cli`")
    texts = [p.text for p in pos]
    if any(not p.known for p in pos[:1]):
        an.deny("sql.unresolved", "`redis-cli` command only known at run time")
    bad = sqlscan.destructive_redis(texts)
    if bad is None and cmd is not None and cmd.stdin in ("heredoc", "herestring"):
        bad = sqlscan.destructive_redis((cmd.stdin_text or "").split())
    if bad is None and texts and texts[0].upper() == "CONFIG" and len(texts) > 1 and texts[1].upper() == "SET":
        bad = "CONFIG SET"
    if bad is None and texts and texts[0].upper() in ("SHUTDOWN", "DEBUG", "SLAVEOF", "REPLICAOF", "MODULE"):
        bad = texts[0].upper()
    if bad:
        an.deny("sql.destructive", f"`redis-cli {bad}` destroys data")


def dropdb(an: Analyser, name: str, args: list[Word], st: State, cmd: Cmd | None, depth: int) -> None:
    an.deny("sql.destructive-command", f"`{name}` drops a database")


def mysqladmin(an: Analyser, name: str, args: list[Word], st: State, cmd: Cmd | None, depth: int) -> None:
    if any(a.text.lower() in ("drop", "shutdown") for a in args):
        an.deny("sql.destructive-command", "`mysqladmin drop` drops a database")
    an.ro("`mysqladmin`")


def db_command(an: Analyser, name: str, args: list[Word]) -> None:
    texts = [name] + [a.text for a in args if not a.text.startswith("-")]
    if name in ("manage.py", "django-admin") or (texts[1:2] and texts[1].endswith("manage.py")):
        pass
    flat = " ".join(texts)
    for entry in defaults.DESTRUCTIVE_DB_COMMANDS:
        ew = entry.split()
        if ew[0] == "manage.py":
            if any(t.endswith("manage.py") for t in texts[:2]):
                idx = next(i for i, t in enumerate(texts) if t.endswith("manage.py"))
                if texts[idx + 1:idx + 1 + len(ew) - 1] == ew[1:]:
                    an.deny("sql.destructive-command", f"`{flat}` wipes a database")
            continue
        if texts[:len(ew)] == ew or ([t.lower() for t in texts[:len(ew)]] == ew and name == "redis-cli"):
            an.deny("sql.destructive-command", f"`{flat}` wipes a database")

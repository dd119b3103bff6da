"""Databases: SQL clients, mongo, redis-cli, dropdb, mysqladmin, framework DB commands.

SQL given with -c/-e, heredocs, here-strings and pipes from echo/printf is parsed for
DROP/TRUNCATE/DELETE without an effective WHERE (sqlscan.destructive_sql).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from zen.guard.policy import defaults
from zen.guard.scan import code as codescan
from zen.guard.scan import python as pyscan
from zen.guard.scan import sql as sqlscan
from zen.guard.scan.scripts import output_text
from zen.guard.shell.options import split_opts
from zen.guard.shell.words import UNK, Cmd, State, Word, lit

if TYPE_CHECKING:
    from zen.guard.analyse import Analyser


def sql(an: Analyser, name: str, args: list[Word], st: State, cmd: Cmd | None, depth: int) -> None:
    an.ro(f"`{name}`")
    texts: list[Word] = []
    value_flags = {"-c", "--command", "-e", "--execute", "-Q", "--query", "-q"}
    if name in SQLITE_SHELLS:
        value_flags = value_flags | {"-cmd"}   # sqlite3 -cmd COMMAND runs it before the input
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
        if name in SQLITE_SHELLS:
            dot_commands(an, name, w.text, st, depth)
    files = [args[k + 1] for k, a in enumerate(args[:-1]) if a.text in ("-f", "--file")]
    files += [lit(a.text.split("=", 1)[1]) for a in args if a.known and a.text.startswith("--file=")]
    for where, text in client_inputs(an, name, cmd, st, files):
        bad = sqlscan.destructive_sql(text)
        if bad:
            an.deny("sql.destructive", f"`{name}`{where}: destructive SQL ({bad})")
        if name in SQLITE_SHELLS:
            dot_commands(an, name, text, st, depth)


SQLITE_SHELLS = frozenset({"sqlite3", "sqlite", "duckdb"})
_DOT_PIPES = (".once", ".output", ".import", ".read", ".excel", ".log")


def dot_commands(an: Analyser, name: str, text: str, st: State, depth: int) -> None:
    """The dot-commands of the sqlite3 (and duckdb) shell that run programs: `.shell CMD` and
    `.system CMD` are judged as CMD typed at the prompt, `.once |CMD` and friends pipe into CMD,
    `.load` loads native code the guardian cannot see."""
    for line in text.splitlines():
        word, _, rest = line.strip().partition(" ")
        rest = rest.strip()
        if word in (".shell", ".system", ".sh"):
            an.walk(rest, st.copy(vars={}), depth + 1)
        elif word == ".load":
            an.deny("opaque.exec", f"`{name}` .load loads a native extension the guardian cannot judge")
        elif word in _DOT_PIPES and rest.lstrip("'\"").startswith("|"):
            an.walk(rest.strip("'\"")[1:], st.copy(vars={}), depth + 1)


def client_inputs(an: Analyser, name: str, cmd: Cmd | None, st: State, files: list[Word]) -> list[tuple[str, str]]:
    """The text a database client reads as commands, where the guardian can see it: a heredoc or
    here-string, what echo/printf/cat pipe into it, a file it reads (-f FILE, < FILE), written by
    this command or on disk. Generated text it cannot see is denied; the output of any other
    program piped in is the client's own business (pg_dump | psql)."""
    out: list[tuple[str, str]] = []
    sources = [(f, st) for f in files] + ([(f, cmd.state) for f in cmd.reads] if cmd is not None else [])
    for f, where_st in sources:     # a redirect is read where the shell stands, not where the client runs
        if f.procsub or not f.known:
            an.deny("sql.unresolved", f"`{name}` reads commands from a process substitution or a file "
                    "named at run time")
        kind, text = an.file_text(f, where_st)
        if kind == "unknown":
            an.deny("sql.unresolved", f"`{name}` reads {f.raw}, written by this command with text the "
                    "guardian cannot see")
        if text is not None:
            out.append((f" ({f.raw})", text))
    if cmd is not None and cmd.stdin in ("heredoc", "herestring"):
        text = cmd.stdin_text or ""
        if UNK in text:
            an.deny("sql.unresolved", f"commands fed to `{name}` are only known at run time")
        out.append(("", text))
    elif cmd is not None and cmd.stdin == "pipe":
        prod = cmd.piped_from
        pname = prod.words[0].text.rsplit("/", 1)[-1] if isinstance(prod, Cmd) and prod.words else ""
        text = output_text(prod) if isinstance(prod, Cmd) else None
        if pname in ("echo", "printf") and text is None:
            an.deny("sql.unresolved", f"commands piped into `{name}` are only known at run time")
        if text is not None:
            out.append(("", text))
        elif pname == "cat" and isinstance(prod, Cmd):
            out.extend(client_inputs(an, name, None, st, [w for w in prod.words[1:] if not w.text.startswith("-")]))
        elif pname in _PG_VALUE_LETTERS and isinstance(prod, Cmd) and "c" in pg_flags(
                pname, [w.text for w in prod.words[1:]]):
            an.deny("sql.destructive", f"`{pname} --clean` piped into `{name}`: its script drops every object "
                    "before recreating it")
        elif pname in ("base64", "xxd", "openssl", "gunzip", "zcat", "curl", "wget", "eval"):
            an.deny("opaque.pipe", f"decoded or downloaded text piped into `{name}`")
    return out


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
    files = [a for a in args if a.known and a.text.endswith(".js") and not a.text.startswith("-")]
    for where, text in client_inputs(an, name, cmd, st, files):
        bad = sqlscan.destructive_mongo(text)
        if bad:
            an.deny("sql.destructive", f"`{name}`{where}: {bad} destroys data")


def redis(an: Analyser, name: str, args: list[Word], st: State, cmd: Cmd | None, depth: int) -> None:
    _, pos = split_opts(args, "hpanusrid", frozenset({"--user", "--pass", "--tls", "--cacert"}))
    an.ro("`redis-cli`")
    texts = [p.text for p in pos]
    if any(not p.known for p in pos[:1]):
        an.deny("sql.unresolved", "`redis-cli` command only known at run time")
    bad = sqlscan.destructive_redis(texts)
    for _where, text in client_inputs(an, "redis-cli", cmd, st, []) if bad is None else []:
        bad = bad or sqlscan.destructive_redis(text.split())
    if bad is None and texts and texts[0].upper() in ("DEL", "UNLINK") and any(
            not p.known or p.glob for p in pos[1:]):
        bad = f"{texts[0].upper()} of keys only known at run time"      # redis-cli --scan | xargs redis-cli DEL
    if bad is None and texts and texts[0].upper() == "CONFIG" and len(texts) > 1 and texts[1].upper() == "SET":
        bad = "CONFIG SET"
    if bad is None and texts and texts[0].upper() in ("SHUTDOWN", "DEBUG", "SLAVEOF", "REPLICAOF", "MODULE"):
        bad = texts[0].upper()
    if bad:
        an.deny("sql.destructive", f"`redis-cli {bad}` destroys data")


# the short options of PostgreSQL's dump tools that take a value (-Fc is a format, not --clean)
_PG_VALUE_LETTERS = {"pg_dump": "fFjnNtTdhpUZSEe", "pg_restore": "dfFIjLnNPStThpU", "pg_dumpall": "fdhlpSU"}


def pg_flags(name: str, texts: list[str]) -> set[str]:
    """The options of pg_dump / pg_restore / pg_dumpall by letter (--clean is "c", --dbname "d")."""
    values = _PG_VALUE_LETTERS.get(name, "")
    out: set[str] = set()
    for t in texts:
        if t.startswith("--"):
            key = t[2:].split("=", 1)[0]
            out.add({"clean": "c", "dbname": "d", "create": "C"}.get(key, key))
        elif t.startswith("-") and len(t) > 1:
            for c in t[1:]:
                out.add(c)
                if c in values:
                    break
    return out


def restore(an: Analyser, name: str, args: list[Word], st: State, cmd: Cmd | None, depth: int) -> None:
    """pg_restore --clean into a database, mongoimport / mongorestore --drop (and mongoimport
    --mode delete): the restore drops what is there first."""
    an.ro(f"`{name}`")
    texts = [a.text for a in args]
    if name == "pg_restore":
        flags = pg_flags(name, texts)
        if "c" in flags and "d" in flags:
            an.deny("sql.destructive", "`pg_restore --clean` drops every object of the database before "
                    "restoring it; a human does that")
    elif "--drop" in texts or any(t.startswith("--drop=") and t != "--drop=false" for t in texts):
        an.deny("sql.destructive", f"`{name} --drop` drops each collection before restoring it; a human does that")
    elif name == "mongoimport" and ("--mode=delete" in texts or any(
            t == "--mode" and texts[k + 1:k + 2] == ["delete"] for k, t in enumerate(texts))):
        an.deny("sql.destructive", "`mongoimport --mode delete` deletes the documents it matches")
    for k, a in enumerate(args):
        if name == "pg_restore" and (a.text.startswith("--file=") or (k and texts[k - 1] in ("-f", "--file"))):
            an.write_word(lit(a.text.split("=", 1)[1]) if a.text.startswith("--file=") else a, st,
                          "`pg_restore -f` writes")
        elif not a.text.startswith("-") and a.known and "://" not in a.text:
            an.read_word(a, st)


def dropdb(an: Analyser, name: str, args: list[Word], st: State, cmd: Cmd | None, depth: int) -> None:
    an.deny("sql.destructive-command", f"`{name}` drops a database")


def mysqladmin(an: Analyser, name: str, args: list[Word], st: State, cmd: Cmd | None, depth: int) -> None:
    if any(a.text.lower() in ("drop", "shutdown") for a in args):
        an.deny("sql.destructive-command", "`mysqladmin drop` drops a database")
    an.ro("`mysqladmin`")


# defaults.DESTRUCTIVE_DB_COMMANDS as words, by the program they start with (manage.py ones apart:
# they match wherever a manage.py is the program or its first argument)
_DB_COMMANDS: dict[str, list[list[str]]] = {}
_MANAGE_PY: list[list[str]] = []
for _entry in defaults.DESTRUCTIVE_DB_COMMANDS:
    _words = _entry.split()
    (_MANAGE_PY if _words[0] == "manage.py" else _DB_COMMANDS.setdefault(_words[0], [])).append(_words)


def db_command(an: Analyser, name: str, args: list[Word]) -> None:
    texts = [name] + [a.text for a in args if not a.text.startswith("-")]
    hit = False
    if any(t.endswith("manage.py") for t in texts[:2]):
        idx = next(i for i, t in enumerate(texts) if t.endswith("manage.py"))
        hit = any(texts[idx + 1:idx + len(ew)] == ew[1:] for ew in _MANAGE_PY)
    for ew in _DB_COMMANDS.get(name, ()):
        if texts[:len(ew)] == ew or ([t.lower() for t in texts[:len(ew)]] == ew and name == "redis-cli"):
            hit = True
    if hit:
        an.deny("sql.destructive-command", f"`{' '.join(texts)}` wipes a database")


def rails(an: Analyser, name: str, args: list[Word], st: State, cmd: Cmd | None, depth: int) -> None:
    """rails runner CODE|-, rails console (its stdin), rails dbconsole (SQL on its stdin), and the
    framework's database tasks (db:drop, db:reset, ...)."""
    db_command(an, name, args)
    an.ro(f"`{name}`")
    pos = [a for a in args if not a.text.startswith("-") or a.text == "-"]
    sub = pos[0].text if pos else ""
    if sub in ("runner", "r") and len(pos) > 1:
        code = pos[1]
        if code.text == "-" or code.text.endswith(".rb"):
            if code.text == "-":
                _stdin_code(an, "ruby", name, cmd)
            else:
                an.run_file(code, st, "ruby", f"`{name} runner`")
        elif not code.known:
            an.deny("opaque.exec", f"`{name} runner` runs code only known at run time")
        else:
            codescan.scan_script(an, "ruby", code.text, f"{name} runner")
    elif sub in ("console", "c"):
        _stdin_code(an, "ruby", name, cmd)
    elif sub in ("dbconsole", "db"):
        for where, text in client_inputs(an, f"{name} {sub}", cmd, st, []):
            bad = sqlscan.destructive_sql(text)
            if bad:
                an.deny("sql.destructive", f"`{name} {sub}`{where}: destructive SQL ({bad})")


def django(an: Analyser, name: str, args: list[Word], st: State, cmd: Cmd | None, depth: int) -> None:
    """manage.py / django-admin: shell -c CODE (or its stdin), dbshell (SQL on its stdin, or a
    client's own arguments after --), and the commands that wipe a database (flush, reset_db)."""
    db_command(an, name, args)
    pos = [a for a in args if not a.text.startswith("-")]
    sub = pos[0].text if pos else ""
    texts = [a.text for a in args]
    if sub in ("shell", "shell_plus"):
        code = next((args[k + 1] for k, t in enumerate(texts[:-1]) if t in ("-c", "--command")), None)
        if code is not None and not code.known:
            an.deny("opaque.exec", f"`{name} shell -c` runs code only known at run time")
        if code is not None:
            an.ro(f"`{name} shell -c`")
            pyscan.scan_python(an, code.text, f"{name} shell -c")
        else:
            _stdin_code(an, "python", name, cmd)
    elif sub == "dbshell":
        an.ro(f"`{name} dbshell`")
        if "--" in texts:
            sql(an, "psql", args[texts.index("--") + 1:], st, None, depth)
        for where, text in client_inputs(an, f"{name} dbshell", cmd, st, []):
            bad = sqlscan.destructive_sql(text)
            if bad:
                an.deny("sql.destructive", f"`{name} dbshell`{where}: destructive SQL ({bad})")


def _stdin_code(an: Analyser, lang: str, name: str, cmd: Cmd | None) -> None:
    """A framework console reading its code from stdin."""
    if cmd is None or cmd.stdin is None:
        return
    if cmd.stdin in ("heredoc", "herestring"):
        text = cmd.stdin_text or ""
        if UNK in text:
            an.deny("opaque.exec", f"code fed to `{name}` is only known at run time")
        if lang == "python":
            pyscan.scan_python(an, text, f"{name} <<stdin")
        else:
            codescan.scan_script(an, lang, text, f"{name} <<stdin")
        return
    piped = output_text(cmd.piped_from) if cmd.stdin == "pipe" and isinstance(cmd.piped_from, Cmd) else None
    if piped is None:
        an.deny("opaque.pipe", f"code piped into `{name}` runs as code the guardian cannot see")
    if lang == "python":
        pyscan.scan_python(an, piped, f"{name} | stdin")
    else:
        codescan.scan_script(an, lang, piped, f"{name} | stdin")

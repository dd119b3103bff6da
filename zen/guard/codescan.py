"""What code handed to an interpreter or a database would do: SQL, Python, JS/Ruby/Perl/PHP,
sed and awk programs. Each scanner reports through the analyser's callbacks (`an`), so a shell
command inside Python is checked exactly like one typed at the prompt.

Python is parsed for real (`ast`); the other languages are scanned with patterns and deny
whenever a dangerous call takes an argument that is not a plain literal.
"""

from __future__ import annotations

import re
from typing import Any

# ---------------------------------------------------------------------------------------------
# SQL

_SQL_COMMENT = re.compile(r"--[^\n]*|/\*.*?\*/|#[^\n]*", re.S)
_TAUTOLOGY = re.compile(
    r"^\(*\s*(?:1|true|not\s+false|(\d+)\s*(?:=|==|<=|>=)\s*\1|(\w+)\s*=\s*\2|'([^']*)'\s*=\s*'\3'"
    r"|1\s*(?:<>|!=)\s*0|0\s*(?:<>|!=)\s*1|\w+\s+is\s+not\s+null|\w+\s+is\s+null\s+or\s+\w+\s+is\s+not\s+null)"
    r"\s*\)*\s*(?:$|or\b|limit\b|returning\b|order\b)", re.I)


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
            if m is None or _TAUTOLOGY.match(m.group(1).strip()):
                what = "DELETE" if head == "DELETE" else "UPDATE"
                return f"{what} without an effective WHERE ({' '.join(flat.split()[:4])})"
        if head in ("FLUSHALL", "FLUSHDB"):
            return head
    return None


_MONGO = re.compile(r"\.\s*(dropDatabase|drop|dropUser|dropAllUsers|dropIndexes)\s*\(|"
                    r"\.\s*(deleteMany|remove)\s*\(\s*(\{\s*\})?\s*\)", re.I)


def destructive_mongo(js: str) -> str | None:
    m = _MONGO.search(js)
    return m.group(0) if m else None


def destructive_redis(words: list[str]) -> str | None:
    for w in words:
        if w.upper() in ("FLUSHALL", "FLUSHDB"):
            return w.upper()
    return None


# ---------------------------------------------------------------------------------------------
# Python

_SHELL_CALLS = {"os.system", "os.popen", "subprocess.getoutput", "subprocess.getstatusoutput",
                "commands.getoutput", "asyncio.create_subprocess_shell", "pexpect.run",
                "pexpect.spawn", "os.popen2", "os.popen3", "os.popen4", "popen2.popen2"}
_ARGV_CALLS = {"subprocess.run", "subprocess.call", "subprocess.check_call",
               "subprocess.check_output", "subprocess.Popen", "asyncio.create_subprocess_exec",
               "pty.spawn", "os.spawnv", "os.spawnvp", "os.spawnve", "os.spawnvpe", "os.execv",
               "os.execvp", "os.execve", "os.execvpe", "os.posix_spawn", "os.posix_spawnp",
               "sh.Command", "plumbum.local", "sarge.run", "delegator.run"}
_ARGV_SPREAD = {"os.execl", "os.execlp", "os.execle", "os.execlpe", "os.spawnl", "os.spawnlp",
                "os.spawnle", "os.spawnlpe"}
_DELETE_CALLS = {"shutil.rmtree", "os.remove", "os.unlink", "os.rmdir", "os.removedirs",
                 "send2trash.send2trash", "send2trash", "distutils.dir_util.remove_tree",
                 "pathlib.Path.unlink", "pathlib.Path.rmdir"}
_WRITE_CALLS = {"os.truncate", "os.mkdir", "os.makedirs", "os.mknod", "os.mkfifo", "os.chown",
                "os.lchown", "os.utime", "shutil.chown"}
_MOVE_CALLS = {"os.rename", "os.replace", "os.renames", "shutil.move"}
_COPY_CALLS = {"shutil.copy", "shutil.copy2", "shutil.copyfile", "shutil.copytree",
               "shutil.copymode", "shutil.copystat", "os.link", "os.symlink"}
_EXEC_CALLS = {"exec", "eval", "compile", "execfile", "builtins.exec", "builtins.eval",
               "runpy.run_path", "runpy.run_module", "code.interact", "marshal.loads",
               "pickle.loads", "cPickle.loads", "dill.loads"}
_IMPORT_CALLS = {"__import__", "importlib.import_module"}
_NET_CALLS = ("requests.", "httpx.", "urllib.request.", "urllib2.", "urllib.urlopen", "aiohttp.",
              "http.client.", "httplib.", "urllib3.", "socket.create_connection", "pycurl.",
              "smtplib.", "ftplib.", "telnetlib.", "websocket.", "websockets.")
_PATH_METHODS_DELETE = {"unlink", "rmdir", "rmtree"}
_PATH_METHODS_WRITE = {"write_text", "write_bytes", "touch", "mkdir", "chmod", "symlink_to",
                       "hardlink_to", "rename", "replace", "lchmod"}
_PATH_RETURNING = {"home", "cwd", "joinpath", "expanduser", "resolve", "absolute", "with_name",
                   "with_suffix", "parent"}
_SQL_METHODS = {"execute", "executemany", "executescript", "exec_driver_sql", "raw", "query",
                "text", "mogrify", "run_sql", "sql"}
_PRINTERS = {"print", "pprint", "pprint.pprint", "sys.stdout.write", "sys.stderr.write",
             "logging.info", "logging.warning", "logging.error", "logging.debug", "json.dumps",
             "json.dump", "repr", "str"}


def _dotted(node: Any, aliases: dict[str, str]) -> str:
    import ast

    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(aliases.get(node.id, node.id))
    elif isinstance(node, ast.Call):
        inner = _dotted(node.func, aliases)
        if inner in ("Path", "pathlib.Path", "PurePath", "pathlib.PosixPath", "PosixPath") or (
                inner.startswith("pathlib.Path.") and inner.rsplit(".", 1)[1] in _PATH_RETURNING):
            parts.append("pathlib.Path")
        else:
            parts.append("?")
    elif isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div):
        parts.append("pathlib.Path")
    else:
        parts.append("?")
    return ".".join(reversed(parts))


class _PyEval:
    """Static values of Python expressions: literals, concatenation, os.path.join, Path / ..."""

    def __init__(self, an: Any, aliases: dict[str, str], consts: dict[str, Any]) -> None:
        self.an = an
        self.aliases = aliases
        self.consts = consts

    def value(self, node: Any) -> Any:
        import ast

        if isinstance(node, ast.Constant):
            return node.value
        if isinstance(node, ast.Name):
            return self.consts.get(node.id)
        if isinstance(node, ast.JoinedStr):
            out = []
            for v in node.values:
                if isinstance(v, ast.Constant):
                    out.append(str(v.value))
                elif isinstance(v, ast.FormattedValue):
                    inner = self.value(v.value)
                    if not isinstance(inner, (str, int)):
                        return None
                    out.append(str(inner))
            return "".join(out)
        if isinstance(node, ast.BinOp):
            left, right = self.value(node.left), self.value(node.right)
            if isinstance(node.op, ast.Add) and isinstance(left, str) and isinstance(right, str):
                return left + right
            if isinstance(node.op, ast.Div) and isinstance(left, str) and isinstance(right, str):
                return left.rstrip("/") + "/" + right if not right.startswith("/") else right
            if isinstance(node.op, ast.Mod) and isinstance(left, str):
                return None
            return None
        if isinstance(node, (ast.List, ast.Tuple)):
            items = [self.value(e) for e in node.elts]
            return items if all(isinstance(i, (str, int)) for i in items) else None
        if isinstance(node, ast.Call):
            fn = _dotted(node.func, self.aliases)
            args = [self.value(a) for a in node.args]
            if fn in ("os.path.join", "posixpath.join", "pathlib.Path", "Path", "pathlib.PurePath",
                      "pathlib.PosixPath") and all(isinstance(a, str) for a in args):
                if not args:
                    return "."
                out = args[0]
                for a in args[1:]:
                    out = a if a.startswith("/") else out.rstrip("/") + "/" + a
                return out
            if fn in ("os.path.expanduser", "pathlib.Path.expanduser") and args and isinstance(args[0], str):
                home = self.an.user_home
                return (home + args[0][1:]) if args[0].startswith("~") and home else args[0]
            if fn in ("pathlib.Path.home", "Path.home"):
                return self.an.user_home
            if isinstance(node.func, ast.Attribute) and node.func.attr in ("joinpath", "expanduser",
                                                                            "resolve", "absolute"):
                base = self.value(node.func.value)
                if isinstance(base, str) and all(isinstance(a, str) for a in args):
                    if node.func.attr == "expanduser":
                        home = self.an.user_home
                        return (home + base[1:]) if base.startswith("~") and home else base
                    out = base
                    for a in args:
                        out = a if a.startswith("/") else out.rstrip("/") + "/" + a
                    return out
            if fn in ("os.getcwd", "pathlib.Path.cwd", "Path.cwd"):
                return "."
            if fn in ("str", "os.fspath", "os.path.abspath", "os.path.realpath", "os.path.normpath") and args:
                return args[0] if isinstance(args[0], str) else None
            if fn.endswith(".decode") or fn.endswith(".b64decode") or fn.startswith("codecs."):
                return None
            return None
        if isinstance(node, ast.Subscript):
            base = _dotted(node.value, self.aliases)
            key = self.value(node.slice)
            if base == "os.environ" and key == "HOME":
                return self.an.user_home
            return None
        return None


def scan_python(an: Any, code: str, where: str) -> None:
    import ast

    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError):
        an.deny("opaque.exec", f"{where}: Python code that does not parse cannot be checked")
        return
    aliases: dict[str, str] = {}
    consts: dict[str, Any] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                aliases[a.asname or a.name.split(".")[0]] = a.name if a.asname else a.name.split(".")[0]
        elif isinstance(node, ast.ImportFrom) and node.module:
            for a in node.names:
                aliases[a.asname or a.name] = f"{node.module}.{a.name}"
    ev = _PyEval(an, aliases, consts)
    for node in ast.walk(tree):   # simple `x = "literal"` assignments, once each
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            name = node.targets[0].id
            if name in consts:
                consts[name] = None   # assigned twice: unknown
            else:
                consts[name] = ev.value(node.value)
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            an.literal(node.value, where)
        elif isinstance(node, ast.Call):
            _py_call(an, ev, node, aliases, where)


def _py_call(an: Any, ev: _PyEval, node: Any, aliases: dict[str, str], where: str) -> None:
    import ast

    fn = _dotted(node.func, aliases)
    args = node.args
    kw = {k.arg: k.value for k in node.keywords if k.arg}
    first = args[0] if args else None
    if isinstance(node.func, ast.Attribute) and node.func.attr in _SQL_METHODS and first is not None:
        sql = ev.value(first)
        if isinstance(sql, str):
            bad = destructive_sql(sql)
            if bad:
                an.deny("sql.destructive", f"{where}: destructive SQL ({bad})")
        elif node.func.attr in ("execute", "executescript", "executemany", "exec_driver_sql"):
            an.deny("sql.unresolved", f"{where}: SQL only known at run time")
    if fn in _EXEC_CALLS or fn in _IMPORT_CALLS:
        value = ev.value(first) if first is not None else None
        if fn in ("exec", "eval", "compile", "builtins.exec", "builtins.eval") and isinstance(value, str):
            scan_python(an, value, where)
        elif fn in _IMPORT_CALLS and isinstance(value, str):
            pass
        else:
            an.deny("opaque.exec", f"{where}: {fn}() runs code the guardian cannot see")
        return
    if fn in _SHELL_CALLS or (fn in _ARGV_CALLS and _truthy(kw.get("shell"))):
        value = ev.value(first) if first is not None else None
        if isinstance(value, str):
            an.shell_string(value, where)
        elif isinstance(value, list):
            an.shell_string(" ".join(str(v) for v in value), where)
        else:
            an.deny("shell.unresolved", f"{where}: {fn}() runs a command the guardian cannot resolve")
        return
    if fn in _ARGV_CALLS or fn in _ARGV_SPREAD or fn.startswith("sh."):
        if fn.startswith("os.exec") or fn.startswith("os.spawn"):
            # os.execv(path, argv) / os.spawnv(mode, path, argv): the argv list holds the program
            values = [ev.value(a) for a in args]
            flat: list[Any] = []
            for v in values:
                flat.extend(v if isinstance(v, list) else [v])
            strs = [v for v in flat if isinstance(v, str)]
            if len(strs) != len([v for v in flat if not isinstance(v, int)]) or not strs:
                an.deny("shell.unresolved", f"{where}: {fn}() runs a program the guardian cannot resolve")
                return
            an.argv(strs[1:] if len(strs) > 1 else strs, where)
            return
        if fn.startswith("sh.") and fn != "sh.Command":
            prog = fn.split(".", 1)[1]
            rest = [ev.value(a) for a in args]
            if not all(isinstance(v, (str, int)) for v in rest):
                an.deny("shell.unresolved", f"{where}: {fn}() takes arguments the guardian cannot resolve")
                return
            an.argv([prog, *[str(v) for v in rest]], where)
            return
        value = ev.value(first) if first is not None else ev.value(kw.get("args")) if "args" in kw else None
        if isinstance(value, str):
            an.argv([value], where)
        elif isinstance(value, list):
            an.argv([str(v) for v in value], where)
        else:
            an.deny("shell.unresolved", f"{where}: {fn}() runs a command the guardian cannot resolve")
        return
    if fn in _DELETE_CALLS or (fn.startswith("pathlib.Path.") and fn.rsplit(".", 1)[1] in _PATH_METHODS_DELETE):
        target = _path_arg(ev, node, fn)
        an.py_path(target, "delete", f"{where}: {fn}()")
        return
    if fn in _MOVE_CALLS:
        an.py_path(ev.value(first) if first is not None else None, "delete", f"{where}: {fn}()")
        an.py_path(ev.value(args[1]) if len(args) > 1 else None, "write", f"{where}: {fn}()")
        return
    if fn in _COPY_CALLS:
        an.py_path(ev.value(first) if first is not None else None, "read", f"{where}: {fn}()")
        an.py_path(ev.value(args[1]) if len(args) > 1 else None, "write", f"{where}: {fn}()")
        return
    if fn in _WRITE_CALLS or (fn.startswith("pathlib.Path.") and fn.rsplit(".", 1)[1] in _PATH_METHODS_WRITE):
        an.py_path(_path_arg(ev, node, fn), "write", f"{where}: {fn}()")
        if fn.endswith("chmod"):
            mode = ev.value(args[-1]) if args else None
            an.py_mode(mode, where)
        return
    if fn in ("os.chmod", "os.lchmod", "os.fchmod"):
        an.py_path(ev.value(first) if first is not None else None, "write", f"{where}: {fn}()")
        an.py_mode(ev.value(args[1]) if len(args) > 1 else ev.value(kw.get("mode")), where)
        return
    if fn in ("open", "io.open", "codecs.open", "builtins.open", "os.open", "pathlib.Path.open",
              "aiofiles.open"):
        if fn == "pathlib.Path.open":
            path = _path_arg(ev, node, fn)
            mode = ev.value(first) if first is not None else ev.value(kw.get("mode", ast.Constant("r")))
        else:
            path = ev.value(first) if first is not None else ev.value(kw.get("file"))
            mode_node = args[1] if len(args) > 1 else kw.get("mode") or kw.get("flags")
            mode = ev.value(mode_node) if mode_node is not None else "r"
        writes = mode is None or (isinstance(mode, str) and any(c in mode for c in "wax+")) or (
            isinstance(mode, int) and mode & 0o3)
        an.py_path(path, "write" if writes else "read", f"{where}: {fn}()")
        return
    if fn.startswith("pathlib.Path.") and fn.rsplit(".", 1)[1] in ("read_text", "read_bytes", "iterdir", "glob", "rglob"):
        an.py_path(_path_arg(ev, node, fn), "read", f"{where}: {fn}()")
        return
    if fn.endswith("extractall") or fn.endswith(".extract"):
        path = ev.value(first) if first is not None else ev.value(kw.get("path")) if "path" in kw else "."
        an.py_path(path, "write", f"{where}: {fn}()")
        return
    if fn in ("dotenv.dotenv_values", "dotenv.load_dotenv", "dotenv_values", "load_dotenv",
              "dotenv.main.dotenv_values", "environs.Env.read_env"):
        an.deny("creds.read", f"{where}: {fn}() reads a .env file")
        return
    if fn.startswith(_NET_CALLS) or fn.split(".")[-1] in ("urlopen",):
        an.py_net(fn, [ev.value(a) for a in args] + [ev.value(v) for v in kw.values()], where)
        return
    if fn in _PRINTERS:
        for a in [*args, *kw.values()]:
            if _mentions_environ(a, aliases, True):
                an.deny("creds.env-dump", f"{where}: prints the environment or a secret variable")
                return


def _truthy(node: Any) -> bool:
    import ast

    return node is not None and not (isinstance(node, ast.Constant) and not node.value)


def _path_arg(ev: _PyEval, node: Any, fn: str) -> Any:
    import ast

    if fn.startswith("pathlib.Path.") and isinstance(node.func, ast.Attribute):
        base = node.func.value
        value = ev.value(base)
        if value is not None:
            return value
        if isinstance(base, ast.Call):
            inner = [ev.value(a) for a in base.args]
            if inner and all(isinstance(v, str) for v in inner):
                out = inner[0]
                for v in inner[1:]:
                    out = v if v.startswith("/") else out.rstrip("/") + "/" + v
                return out
        return None
    if node.args:
        return ev.value(node.args[0])
    for k in node.keywords:
        if k.arg in ("path", "src", "file", "name"):
            return ev.value(k.value)
    return None


def _mentions_environ(node: Any, aliases: dict[str, str], top: bool) -> bool:
    import ast

    from zen.guard.shell import is_secret_name

    for sub in ast.walk(node):
        if isinstance(sub, ast.Attribute) and _dotted(sub, aliases) == "os.environ":
            return True
        if isinstance(sub, ast.Call):
            fn = _dotted(sub.func, aliases)
            if fn in ("os.getenv", "os.environ.get") and sub.args and isinstance(sub.args[0], ast.Constant) \
                    and isinstance(sub.args[0].value, str) and is_secret_name(sub.args[0].value):
                return True
        if isinstance(sub, ast.Subscript) and _dotted(sub.value, aliases) == "os.environ":
            key = sub.slice
            if isinstance(key, ast.Constant) and isinstance(key.value, str) and is_secret_name(key.value):
                return True
    return False


# ---------------------------------------------------------------------------------------------
# JavaScript, Ruby, Perl, PHP (patterns)

_STR = r"""(?:'((?:[^'\\]|\\.)*)'|"((?:[^"\\]|\\.)*)"|`((?:[^`\\$]|\\.|\$(?!\{))*)`)"""
_LITERAL_ARG = re.compile(r"\s*\(?\s*" + _STR)
_ANY_STR = re.compile(_STR)

_LANG_PATTERNS: dict[str, dict[str, tuple[str, ...]]] = {
    "js": {
        "shell": (r"\bexecSync", r"\bexec", r"\bspawnSync\s*\(\s*['\"`](?:sh|bash)['\"`]", r"\$\s*`"),
        "argv": (r"\bspawnSync", r"\bspawn", r"\bexecFileSync", r"\bexecFile", r"\bfork", r"Bun\.spawn", r"Deno\.Command", r"Deno\.run"),
        "delete": (r"\brmSync", r"\brmdirSync", r"\bunlinkSync", r"\bfs\.rm", r"\bfs\.rmdir", r"\bfs\.unlink",
                   r"\bfsp?\.promises\.rm", r"\brimraf(?:\.sync)?", r"\bremoveSync", r"\bemptyDirSync", r"\bDeno\.remove"),
        "write": (r"\bwriteFileSync", r"\bwriteFile", r"\bappendFileSync", r"\bappendFile", r"\bcreateWriteStream",
                  r"\brenameSync", r"\bchmodSync", r"\bchmod", r"\bcopyFileSync", r"\bcpSync", r"\bsymlinkSync",
                  r"\btruncateSync", r"\bDeno\.writeTextFile", r"\bBun\.write", r"\bmkdirSync"),
        "read": (r"\breadFileSync", r"\breadFile", r"\bcreateReadStream", r"\breaddirSync", r"\bDeno\.readTextFile", r"\bBun\.file"),
        "eval": (r"\beval\s*\(", r"\bnew\s+Function\b", r"\bvm\.run", r"\bFunction\s*\("),
        "decode": (r"base64", r"\batob\s*\(", r"fromCharCode"),
        "env": (r"process\.env(?!\s*(?:\.|\[))", r"Deno\.env\.toObject", r"Bun\.env(?!\s*(?:\.|\[))"),
        "net": (r"\bfetch\s*\(", r"\bhttps?\.(?:get|request)\s*\(", r"\baxios", r"\bgot\s*\(", r"\bXMLHttpRequest", r"\bWebSocket"),
    },
    "ruby": {
        "shell": (r"\bsystem", r"\bexec", r"%x", r"\bIO\.popen", r"\bOpen3\.\w+", r"\bspawn", r"`"),
        "argv": (),
        "delete": (r"\bFileUtils\.rm\w*", r"\bFileUtils\.remove\w*", r"\bFile\.delete", r"\bFile\.unlink", r"\bDir\.rmdir", r"\bDir\.delete", r"\bPathname\.new\([^)]*\)\.(?:rmtree|unlink|delete)"),
        "write": (r"\bFile\.write", r"\bIO\.write", r"\bFile\.open\s*\([^)]*['\"][wa]", r"\bFileUtils\.(?:mv|cp\w*|chmod\w*|ln\w*|touch|mkdir\w*)", r"\bFile\.rename", r"\bFile\.chmod", r"\bFile\.symlink"),
        "read": (r"\bFile\.read", r"\bIO\.read", r"\bFile\.readlines", r"\bFile\.open"),
        "eval": (r"\beval\b", r"\binstance_eval\b", r"\bclass_eval\b", r"\bBinding\b"),
        "decode": (r"Base64", r"\.unpack\(\s*['\"]m"),
        "env": (r"\bENV\.(?:to_h|to_a|inspect|each|map|select|keys|values)\b", r"\b(?:p|pp|puts|print)\s*\(?\s*ENV\b(?!\s*\[)"),
        "net": (r"\bNet::HTTP", r"\bURI\.open", r"\bopen-uri", r"\bHTTParty", r"\bFaraday", r"\bRestClient"),
    },
    "perl": {
        "shell": (r"\bsystem", r"\bexec", r"`", r"\bqx", r"\bopen\s*\(?\s*\w*\s*,?\s*['\"]\s*\|", r"\bopen\s*\([^)]*\|\s*['\"]"),
        "argv": (),
        "delete": (r"\bunlink", r"\brmtree", r"\bremove_tree", r"\brmdir"),
        "write": (r"\bopen\s*\([^)]*['\"]\s*(?:>|\+<)", r"\bopen\s*\(\s*\w+\s*,\s*['\"](?:>|>>|\+<)", r"\brename", r"\bchmod", r"\bsymlink", r"\btruncate", r"\bmkdir", r"\bmake_path", r"\bcopy", r"\bmove"),
        "read": (r"\bopen",),
        "eval": (r"\beval\b",),
        "decode": (r"decode_base64", r"MIME::Base64", r"\bpack\s*\(", r"\bunpack\s*\("),
        "env": (r"%ENV\b", r"\bkeys\s+%ENV"),
        "net": (r"LWP::", r"HTTP::Tiny", r"IO::Socket", r"Net::HTTP", r"\bcurl\b"),
    },
    "php": {
        "shell": (r"\bsystem", r"\bexec", r"\bshell_exec", r"\bpassthru", r"\bpopen", r"\bproc_open", r"`", r"\bpcntl_exec"),
        "argv": (),
        "delete": (r"\bunlink", r"\brmdir"),
        "write": (r"\bfile_put_contents", r"\bfopen\s*\([^)]*['\"][wax+]", r"\brename", r"\bchmod", r"\bsymlink", r"\bcopy", r"\bmkdir", r"\btouch"),
        "read": (r"\bfile_get_contents", r"\bfopen", r"\breadfile", r"\bfile\s*\("),
        "eval": (r"\beval\s*\(", r"\bcreate_function", r"\bassert\s*\(", r"\bpreg_replace\s*\([^)]*/e"),
        "decode": (r"base64_decode", r"\bstr_rot13", r"\bgzinflate", r"\bhex2bin"),
        "env": (r"\bgetenv\s*\(\s*\)", r"\$_ENV\b", r"\$_SERVER\b", r"\bphpinfo\s*\("),
        "net": (r"\bcurl_init", r"\bfsockopen", r"\bstream_socket_client", r"\bfile_get_contents\s*\(\s*['\"]https?:"),
    },
}
_COMPILED: dict[str, dict[str, list[re.Pattern[str]]]] = {}
_SCRIPT_SQL = re.compile(r"\.(?:query|execute|exec|raw|run|all|prepare|unsafe|sql|executeQuery|"
                         r"executeUpdate|queryRaw|executeRaw|\$queryRawUnsafe|\$executeRawUnsafe|"
                         r"\$executeRaw|\$queryRaw)\b")


def _patterns(lang: str) -> dict[str, list[re.Pattern[str]]]:
    got = _COMPILED.get(lang)
    if got is None:
        got = {k: [re.compile(p) for p in v] for k, v in _LANG_PATTERNS[lang].items()}
        _COMPILED[lang] = got
    return got


def _literal_after(code: str, end: int) -> str | None:
    m = _LITERAL_ARG.match(code, end)
    if not m:
        return None
    return next((g for g in m.groups() if g is not None), None)


def scan_script(an: Any, lang: str, code: str, where: str) -> None:
    """Pattern scan of JS/Ruby/Perl/PHP code; deny when a dangerous call's argument is not a
    plain literal the guardian can check."""
    pats = _patterns(lang)
    for m in _ANY_STR.finditer(code):
        text = next((g for g in m.groups() if g is not None), "")
        an.literal(text, where)
    if any(p.search(code) for p in pats["eval"]):
        an.deny("opaque.exec", f"{where}: eval of generated code cannot be checked")
        return
    for p in pats["env"]:
        if p.search(code):
            an.deny("creds.env-dump", f"{where}: dumps the environment")
            return
    for m in _SCRIPT_SQL.finditer(code):
        value = _literal_after(code, m.end())
        if value is not None:
            bad = destructive_sql(value)
            if bad:
                an.deny("sql.destructive", f"{where}: destructive SQL ({bad})")
    for kind in ("shell", "argv", "delete", "write", "read"):
        for p in pats[kind]:
            for m in p.finditer(code):
                if kind == "shell" and m.group(0) in ("`", "%x"):
                    body = _backtick_body(code, m.start(), m.group(0))
                    if body is None:
                        an.deny("shell.unresolved", f"{where}: runs a command the guardian cannot resolve")
                    else:
                        an.shell_string(body, where)
                    continue
                if kind == "shell" and m.group(0).startswith("$"):
                    body = _backtick_body(code, m.end() - 1, "`")
                    if body is None:
                        an.deny("shell.unresolved", f"{where}: runs a command the guardian cannot resolve")
                    else:
                        an.shell_string(body, where)
                    continue
                value = _literal_after(code, m.end())
                if kind == "read":
                    if value is not None:
                        an.py_path(value, "read", where)
                    continue
                if value is None or "#{" in value or ("$" in value and lang in ("perl", "php")):
                    an.deny("shell.unresolved" if kind in ("shell", "argv") else "fs.unresolved-target",
                            f"{where}: {m.group(0).strip()}(...) takes an argument the guardian cannot resolve")
                    continue
                if kind == "shell":
                    rest = _string_args(code, m.end())
                    an.shell_string(" ".join(rest) if len(rest) > 1 else value, where)
                elif kind == "argv":
                    an.argv([value, *_array_after(code, m.end())], where)
                else:
                    an.py_path(value, kind, where)


def _string_args(code: str, start: int) -> list[str]:
    """Literal arguments of a call like system("rm", "-rf", "x") (stops at the first non-literal)."""
    out = []
    m = re.compile(r"\s*\(?\s*").match(code, start)
    pos = m.end() if m else start
    while True:
        m2 = _ANY_STR.match(code, pos)
        if not m2:
            break
        out.append(next((g for g in m2.groups() if g is not None), ""))
        m3 = re.compile(r"\s*,\s*").match(code, m2.end())
        if not m3:
            break
        pos = m3.end()
    return out


def _array_after(code: str, start: int) -> list[str]:
    m = re.compile(r"\s*\(?\s*" + _STR + r"\s*,\s*\[([^\]]*)\]").match(code, start)
    if not m:
        return []
    return [next((g for g in s.groups() if g is not None), "") for s in _ANY_STR.finditer(m.group(4))]


def _backtick_body(code: str, start: int, opener: str) -> str | None:
    if opener == "%x":
        if start + 2 >= len(code):
            return None
        o = code[start + 2]
        c = {"(": ")", "{": "}", "[": "]", "<": ">"}.get(o, o)
        end = code.find(c, start + 3)
        body = code[start + 3:end] if end > 0 else None
    else:
        end = code.find("`", start + 1)
        body = code[start + 1:end] if end > 0 else None
    if body is None or "#{" in body or "${" in body:
        return None
    return body


# ---------------------------------------------------------------------------------------------
# sed and awk programs

def sed_commands(script: str) -> list[tuple[str, str]]:
    """(command letter, argument) of each command in a sed script, addresses skipped."""
    out: list[tuple[str, str]] = []
    i, n = 0, len(script)
    while i < n:
        c = script[i]
        if c in " \t\n;{}!":
            i += 1
            continue
        if c.isdigit() or c in "$,~+":   # addresses
            i += 1
            continue
        if c in "/\\":                  # /regex/ address (\cREGEXc too)
            delim = script[i + 1] if c == "\\" and i + 1 < n else "/"
            j = i + (2 if c == "\\" else 1)
            while j < n and script[j] != delim:
                j += 2 if script[j] == "\\" else 1
            i = j + 1
            while i < n and script[i] in "IM":
                i += 1
            continue
        if c in "sy":
            if i + 1 >= n:
                out.append((c, ""))
                break
            delim = script[i + 1]
            j, parts = i + 2, 0
            while j < n and parts < 2:
                if script[j] == "\\":
                    j += 2
                    continue
                if script[j] == delim:
                    parts += 1
                j += 1
            k = j
            while k < n and script[k] not in ";\n}":
                k += 1
            out.append((c, script[j:k]))   # the flags (and a w FILE) of s///
            i = k
            continue
        if c in "aicrRwWe:bTtlqQvF=dDgGhHnNpPxz#":
            k = i + 1
            while k < n and script[k] != "\n" and (c in "aicrRwWe:bTtv#" or script[k] not in ";}"):
                k += 1
            out.append((c, script[i + 1:k].strip()))
            i = k
            continue
        i += 1
    return out

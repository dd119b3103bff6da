"""What Python code handed to an interpreter would do (`python -c`, heredocs, exec of literals).

Parsed for real with `ast`: shell and argv calls (os.system, subprocess, os.exec*, sh.*) are
judged as commands, file calls (shutil.rmtree, open(..., "w"), Path.write_text, ...) get the
path rules, SQL passed to execute() is checked, network calls reach the host rules, and code or
arguments whose value cannot be worked out statically are denied. Every finding goes through the
analyser's callbacks (`an`), so a command inside Python is checked exactly like one typed at the
prompt.

The tables of calls it judges and the static evaluator of expressions are in scan/pyeval.py.

Imported by the interpreter rules only (zen/guard/rules/interp.py), so `ast` loads only when a
command runs Python.
"""

from __future__ import annotations

import ast
import functools
import posixpath
from typing import Any

from zen.guard.paths import procfs
from zen.guard.policy.defaults import MESSAGE_SERVICES
from zen.guard.scan import pyvalues
from zen.guard.scan.leaks import environ_sent
from zen.guard.scan.pyeval import (
    _ARGV_CALLS,
    _ARGV_SPREAD,
    _COPY_CALLS,
    _DELETE_CALLS,
    _EXEC_CALLS,
    _GETATTR,
    _IMPORT_CALLS,
    _LINK_CALLS,
    _MOVE_CALLS,
    _NET_CALLS,
    _PATH_METHODS_DELETE,
    _PATH_METHODS_WRITE,
    _PRINTERS,
    _RISKY,
    _SHELL_CALLS,
    _SQL_METHODS,
    _WRITE_CALLS,
    _dotted,
    _literal_arg,
    _PyEval,
)
from zen.guard.scan.sql import destructive_orm, destructive_sql
from zen.guard.shell.words import is_secret_name


@functools.lru_cache(maxsize=256)
def _parse(code: str) -> ast.Module:
    """The tree of `code`, shared by every scan of the same code (a batch, the resident guardian):
    the scans only walk it, never change it."""
    return ast.parse(code)


def scan_python(an: Any, code: str, where: str) -> None:
    try:
        tree = _parse(code)
    except (SyntaxError, ValueError):
        an.deny("opaque.exec", f"{where}: Python code that does not parse cannot be checked")
        return
    aliases: dict[str, str] = {}
    consts: dict[str, Any] = {}
    local = getattr(an, "local_module", None)     # the project's own modules: judged as they are
    if local is not None:                          # sys.path.insert(0, "tools"): imports look there too
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in (
                    "insert", "append") and _dotted(node.func.value, {}) == "sys.path" and node.args:
                d = node.args[-1]
                an.memo.setdefault("pysyspath", []).append(d.value if isinstance(d, ast.Constant) and isinstance(
                    d.value, str) else ".")
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                an.py_import(a.name, where)
                if local is not None:
                    local(a.name, 0, where)
                aliases[a.asname or a.name.split(".")[0]] = a.name if a.asname else a.name.split(".")[0]
        elif isinstance(node, ast.ImportFrom) and (node.module or node.level):
            if node.module:
                an.py_import(node.module, where)
            if local is not None:
                for a in node.names:     # from pkg import mod: pkg/__init__.py and pkg/mod.py
                    local(".".join(p for p in (node.module, a.name) if p), node.level, where, optional=True)
                local(node.module or "", node.level, where)
            for a in node.names:
                aliases[a.asname or a.name] = f"{node.module}.{a.name}"
    modules = {a.asname or a.name.split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    for node in ast.walk(tree):   # m = importlib.import_module("shutil"): m is that module; x = os too
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name) \
                and isinstance(node.value, ast.Call) and _dotted(node.value.func, aliases) in _IMPORT_CALLS:
            module = _literal_arg(node.value, 0)
            if module:
                aliases[node.targets[0].id] = module
                modules.add(node.targets[0].id)
        elif isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name) \
                and isinstance(node.value, ast.Name) and node.value.id in modules:
            aliases[node.targets[0].id] = aliases.get(node.value.id, node.value.id)
            modules.add(node.targets[0].id)
    pyvalues.module_values(an, tree, modules, aliases, where, _dotted, _GETATTR)
    ev = _PyEval(an, aliases, consts)
    for node in ast.walk(tree):   # simple `x = "literal"` assignments, once each
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            name = node.targets[0].id
            if name in consts:
                consts[name] = None   # assigned twice: unknown
            else:
                consts[name] = ev.value(node.value)
    outer = an.st
    an.st = outer.copy(cwds=_cwds_after_chdir(ev, tree, aliases, outer.cwds))
    try:
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                an.literal(node.value, where)
            elif isinstance(node, ast.Call):
                _py_call(an, ev, node, aliases, where)
    finally:
        an.st = outer
    _py_values(an, tree, aliases, where)
    orm = destructive_orm(code)
    if orm:
        an.deny("sql.destructive", f"{where}: {orm} empties or drops tables")
    if _mentions_environ(tree, aliases, False, exact=True):
        an.deny("creds.secret-echo", f"{where}: reads a secret-looking environment variable")


def _cwds_after_chdir(ev: _PyEval, tree: Any, aliases: dict[str, str], cwds: tuple[str | None, ...]
                      ) -> tuple[str | None, ...]:
    """Every directory the code may work in: os.chdir() moves every later relative path (the order
    of calls is not followed, so each target counts from each directory already possible)."""
    out = list(cwds)
    for n in ast.walk(tree):
        if isinstance(n, ast.Call) and _dotted(n.func, aliases) in ("os.chdir", "contextlib.chdir"):
            target = ev.value(n.args[0]) if n.args else None
            out += [posixpath.normpath(posixpath.join(c, target)) if isinstance(target, str) and c else None
                    for c in list(out)]
            if None in out or len(out) > 16:
                return (None,)
    return tuple(dict.fromkeys(out))


def _py_call(an: Any, ev: _PyEval, node: Any, aliases: dict[str, str], where: str) -> None:
    fn = _dotted(node.func, aliases)
    args = node.args
    first = args[0] if args else None
    if fn in _GETATTR and len(args) >= 2:
        _py_getattr(an, node, aliases, where)
    if isinstance(node.func, ast.Attribute) and node.func.attr in _SQL_METHODS and first is not None:
        sql = ev.value(first)
        if isinstance(sql, str):
            bad = destructive_sql(sql)
            if bad:
                an.deny("sql.destructive", f"{where}: destructive SQL ({bad})")
        elif node.func.attr in ("execute", "executescript", "executemany", "exec_driver_sql"):
            an.deny("sql.unresolved", f"{where}: SQL only known at run time")
    if fn in procfs.PY_SIGNAL_CALLS:    # os.kill and friends: the rule of `kill` (paths/procfs.py)
        procfs.py_signal(an, fn, [ev.value(a) for a in args], where)
    if _py_runs(an, ev, node, fn, where) or _py_files(an, ev, node, fn, where):
        return
    _py_other(an, ev, node, fn, aliases, where)


def _py_values(an: Any, tree: Any, aliases: dict[str, str], where: str) -> None:
    """A function that runs commands or changes files used as a value (`f = os.system`,
    `map(shutil.rmtree, ...)`, `(lambda f: f(...))(os.system)`) is called where the scan cannot
    follow it, and a module's functions reached by name (`os.__dict__['system']`, `vars(os)`,
    `sys.modules['os']`) cannot be judged either: both are denied."""
    called = {id(n.func) for n in ast.walk(tree) if isinstance(n, ast.Call)}
    for n in ast.walk(tree):
        if isinstance(n, ast.Attribute) and n.attr in ("__dict__", "__getattribute__", "__builtins__"):
            an.deny("opaque.exec", f"{where}: {n.attr} reaches functions by a name the guardian cannot judge")
        elif isinstance(n, ast.Name) and n.id == "__builtins__":
            an.deny("opaque.exec", f"{where}: __builtins__ reaches functions by a name the guardian cannot judge")
        elif isinstance(n, (ast.Attribute, ast.Name)) and id(n) not in called:
            name = _dotted(n, aliases)
            if name in _RISKY:
                an.deny("opaque.exec", f"{where}: {name} taken as a value is called where the guardian cannot see")
            elif name == "sys.modules":
                an.deny("opaque.exec", f"{where}: sys.modules reaches modules by a name the guardian cannot judge")
        elif isinstance(n, ast.Call) and _dotted(n.func, aliases) in ("vars", "builtins.vars") and n.args:
            an.deny("opaque.exec", f"{where}: vars() reaches functions by a name the guardian cannot judge")


def _py_getattr(an: Any, node: Any, aliases: dict[str, str], where: str) -> None:
    """getattr(module, NAME): a name only known at run time, or a function that runs commands
    or changes files taken as a value (called later under another name), cannot be judged."""
    base = _dotted(node.args[0], aliases)
    attr = _literal_arg(node, 1)
    if base.split(".")[0] not in set(aliases.values()) | {"os", "subprocess", "shutil", "pty", "builtins"} \
            and "?" not in base.split("."):
        return
    if attr is None:
        an.deny("opaque.exec", f"{where}: getattr({base}, ...) takes a name only known at run time")
    elif f"{base}.{attr}" in _RISKY:
        an.deny("opaque.exec", f"{where}: getattr({base}, {attr!r}) takes {base}.{attr} as a value")


def _py_runs(an: Any, ev: _PyEval, node: Any, fn: str, where: str, cwd_done: bool = False) -> bool:
    """Calls that run code or commands (exec, os.system, subprocess, os.exec*, sh.*)."""
    args = node.args
    kw = {k.arg: k.value for k in node.keywords if k.arg}
    first = args[0] if args else None
    if fn in _EXEC_CALLS or fn in _IMPORT_CALLS:
        value = ev.value(first) if first is not None else None
        if fn in ("exec", "eval", "compile", "builtins.exec", "builtins.eval") and isinstance(value, str):
            scan_python(an, value, where)
        elif fn in _IMPORT_CALLS and isinstance(first, ast.Constant) and isinstance(value, str):
            an.py_import(value, where)
        else:
            an.deny("opaque.exec", f"{where}: {fn}() runs code the guardian cannot see")
        return True
    if fn in ("boto3.client", "boto3.resource", "boto3.session.Session.client") and first is not None:
        service = ev.value(first)
        if not isinstance(service, str) or service in MESSAGE_SERVICES:
            an.deny("net.sdk", f"{where}: {fn}({service!r}) sends email or messages (or a service the "
                    "guardian cannot resolve): use `zen gate NAME`")
    if "cwd" in kw and not cwd_done and (fn in _SHELL_CALLS or fn in _ARGV_CALLS):   # runs in that directory
        where_to = ev.value(kw["cwd"])
        outer = an.st
        an.st = outer.copy(cwds=tuple(posixpath.normpath(posixpath.join(c, where_to)) if isinstance(
            where_to, str) and c else None for c in outer.cwds))
        try:
            return _py_runs(an, ev, node, fn, where, cwd_done=True)
        finally:
            an.st = outer
    if fn in _SHELL_CALLS or (fn in _ARGV_CALLS and _truthy(kw.get("shell"))):
        value = ev.value(first) if first is not None else None
        if isinstance(value, str):
            an.shell_string(value, where)
        elif isinstance(value, list):
            an.shell_string(" ".join(str(v) for v in value), where)
        else:
            an.deny("shell.unresolved", f"{where}: {fn}() runs a command the guardian cannot resolve")
        return True
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
                return True
            an.argv(strs[1:] if len(strs) > 1 else strs, where)
            return True
        if fn.startswith("sh.") and fn != "sh.Command":
            prog = fn.split(".", 1)[1]
            rest = [ev.value(a) for a in args]
            if not all(isinstance(v, (str, int)) for v in rest):
                an.deny("shell.unresolved", f"{where}: {fn}() takes arguments the guardian cannot resolve")
                return True
            an.argv([prog, *[str(v) for v in rest]], where)
            return True
        value = ev.value(first) if first is not None else ev.value(kw.get("args")) if "args" in kw else None
        if isinstance(value, str):
            an.argv([value], where)
        elif isinstance(value, list):
            an.argv([str(v) for v in value], where)
        else:
            an.deny("shell.unresolved", f"{where}: {fn}() runs a command the guardian cannot resolve")
        return True
    return False


def _py_files(an: Any, ev: _PyEval, node: Any, fn: str, where: str) -> bool:
    """Calls that delete, move, copy, write, chmod, open or list files."""
    args = node.args
    kw = {k.arg: k.value for k in node.keywords if k.arg}
    first = args[0] if args else None
    if fn in _DELETE_CALLS or (fn.startswith("pathlib.Path.") and fn.rsplit(".", 1)[1] in _PATH_METHODS_DELETE):
        target = _path_arg(ev, node, fn)
        an.py_path(target, "delete", f"{where}: {fn}()")
        return True
    if fn in _MOVE_CALLS:
        an.py_path(ev.value(first) if first is not None else None, "delete", f"{where}: {fn}()")
        an.py_path(ev.value(args[1]) if len(args) > 1 else None, "write", f"{where}: {fn}()")
        return True
    if fn in _LINK_CALLS:
        an.py_link(ev.value(first) if first is not None else None,
                   ev.value(args[1]) if len(args) > 1 else None, _LINK_CALLS[fn], f"{where}: {fn}()")
        return True
    if fn in ("pathlib.Path.symlink_to", "pathlib.Path.hardlink_to"):
        an.py_link(ev.value(first) if first is not None else None, _path_arg(ev, node, fn),
                   fn.endswith("hardlink_to"), f"{where}: {fn}()")
        return True
    if fn in _COPY_CALLS:
        an.py_path(ev.value(first) if first is not None else None, "read", f"{where}: {fn}()")
        an.py_path(ev.value(args[1]) if len(args) > 1 else None, "write", f"{where}: {fn}()")
        return True
    if fn in _WRITE_CALLS or (fn.startswith("pathlib.Path.") and fn.rsplit(".", 1)[1] in _PATH_METHODS_WRITE):
        an.py_path(_path_arg(ev, node, fn), "write", f"{where}: {fn}()")
        if fn.endswith("chmod"):
            mode = ev.value(args[-1]) if args else None
            an.py_mode(mode, where)
        return True
    if fn in ("os.chmod", "os.lchmod", "os.fchmod"):
        an.py_path(ev.value(first) if first is not None else None, "write", f"{where}: {fn}()")
        an.py_mode(ev.value(args[1]) if len(args) > 1 else ev.value(kw.get("mode")), where)
        return True
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
        return True
    if fn.startswith("pathlib.Path.") and fn.rsplit(".", 1)[1] in ("read_text", "read_bytes", "iterdir", "glob", "rglob"):
        an.py_path(_path_arg(ev, node, fn), "read", f"{where}: {fn}()")
        return True
    return False


def _py_other(an: Any, ev: _PyEval, node: Any, fn: str, aliases: dict[str, str], where: str) -> None:
    """Archive extraction, .env loaders, network clients, printing the environment."""
    args = node.args
    kw = {k.arg: k.value for k in node.keywords if k.arg}
    first = args[0] if args else None
    if fn.endswith("extractall") or fn.endswith(".extract"):
        path = ev.value(first) if first is not None else ev.value(kw.get("path")) if "path" in kw else "."
        an.py_path(path, "write", f"{where}: {fn}()")
        return
    last = fn.rsplit(".", 1)[-1]
    if fn in ("netrc.netrc", "netrc") or last in ("get_credentials", "get_frozen_credentials", "get_scoped_config") \
            or fn in ("botocore.session.get_session", "botocore.credentials.create_credential_resolver",
                      "aws_requests_auth.boto_utils.BotoAWSRequestsAuth"):
        an.deny("creds.read", f"{where}: {fn.replace('?.', '')}() reads stored credentials (a credential store "
                "or a cloud SDK's keys); credentials never pass through an agent (a gate holds them: zen gate)")
    for a in args:                  # a path into a credential store, handed to any call
        value = ev.value(a)
        if isinstance(value, str) and value.startswith(("/", "~")):
            an.py_path(value, "read", f"{where}: {fn.replace('?.', '')}()")
    if fn in ("dotenv.dotenv_values", "dotenv.load_dotenv", "dotenv_values", "load_dotenv",
              "dotenv.main.dotenv_values", "environs.Env.read_env"):
        an.deny("creds.read", f"{where}: {fn}() reads a .env file")
        return
    if fn.startswith(_NET_CALLS) or fn.rsplit(".", maxsplit=1)[-1] in ("urlopen",):
        environ_sent(an, [*args, *kw.values()], aliases, f"{where}: {fn}()", _dotted)   # rules/leaks.py
        an.py_net(fn, [ev.value(a) for a in args] + [ev.value(v) for v in kw.values()], where,
                  _py_method(ev, fn, args, kw))
        return
    if last in ("post", "put", "patch", "delete", "request", "send") and any(
            (m + ".").startswith(_NET_CALLS) for m in aliases.values()):
        # a session or client object's call (requests.Session().delete(URL)): its URL is still seen
        method = _py_method(ev, "requests." + last, args, kw)
        for v in [ev.value(a) for a in args] + [ev.value(v) for v in kw.values()]:
            if isinstance(v, str) and "://" in v:
                an.py_hosted(v, method, f"{where}: {fn.replace('?.', '')}()")
        return
    if fn in _PRINTERS:
        for a in [*args, *kw.values()]:
            if pyvalues.environ_leaks(a, aliases, _dotted, _literal_arg):
                an.deny("creds.env-dump", f"{where}: prints the environment or a secret variable")
                return


_READ_CALLS = {"get": "GET", "head": "HEAD", "options": "OPTIONS", "post": "POST", "put": "PUT",
               "patch": "PATCH", "delete": "DELETE"}


def _py_method(ev: _PyEval, fn: str, args: list[Any], kw: dict[str, Any]) -> str | None:
    """The HTTP method a network call sends: its name (requests.delete), its method= or first
    argument (request("DELETE", ...)), POST when it carries data (urlopen(url, data)); None
    when only known at run time (or not HTTP at all: sockets, smtplib)."""
    last = fn.rsplit(".", 1)[-1]
    if last.lower() in _READ_CALLS and not fn.startswith(("smtplib.", "ftplib.", "socket.")):
        return _READ_CALLS[last.lower()]
    if "method" in kw:
        value = ev.value(kw["method"])
        return value.upper() if isinstance(value, str) else None
    if last in ("request", "stream", "build_request", "urlopen_request") and args:
        value = ev.value(args[0])
        return value.upper() if isinstance(value, str) and value.isalpha() else None
    if last in ("urlopen", "Request", "urlretrieve"):
        data = kw.get("data", args[1] if len(args) > 1 else None)
        return "GET" if data is None else "POST"
    return None


def _truthy(node: Any) -> bool:
    return node is not None and not (isinstance(node, ast.Constant) and not node.value)


def _path_arg(ev: _PyEval, node: Any, fn: str) -> Any:
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


def _mentions_environ(node: Any, aliases: dict[str, str], top: bool, exact: bool = False) -> bool:
    """`node` touches os.environ (exact: only a read of a secret-looking variable counts)."""
    for sub in ast.walk(node):
        if not exact and isinstance(sub, ast.Attribute) and _dotted(sub, aliases) == "os.environ":
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


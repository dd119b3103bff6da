"""What the Python scan knows before it walks: the tables of calls it judges, and the static
evaluator of Python expressions.

    _SHELL_CALLS, _ARGV_CALLS, ... _PRINTERS   the calls that run commands, touch files, reach
                                               the network, run code or print (by dotted name)
    _dotted(node, aliases)                     the dotted name a call resolves to (imports and
                                               aliases followed)
    _PyEval.value(node)                        the value of an expression when it is known
                                               statically (literals, f-strings, joins, Path /)

Imported by scan/python.py only (ast loads only when a command runs Python).
"""

from __future__ import annotations

import ast
from typing import Any

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
               "shutil.copymode", "shutil.copystat"}
_LINK_CALLS = {"os.link": True, "os.symlink": False}      # name: makes a hard link
_EXEC_CALLS = {"exec", "eval", "compile", "execfile", "builtins.exec", "builtins.eval",
               "runpy.run_path", "runpy.run_module", "code.interact", "marshal.loads",
               "pickle.loads", "cPickle.loads", "dill.loads", "importlib.reload",
               "importlib.util.spec_from_file_location", "importlib.util.module_from_spec",
               "importlib.machinery.SourceFileLoader", "importlib.machinery.SourcelessFileLoader",
               "imp.load_source", "imp.load_module", "ctypes.CDLL", "ctypes.cdll.LoadLibrary",
               "ctypes.PyDLL", "zipimport.zipimporter"}
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
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(aliases.get(node.id, node.id))
    elif isinstance(node, ast.Call):
        inner = _dotted(node.func, aliases)
        named = _literal_arg(node, 0)
        if inner in _IMPORT_CALLS and named is not None:
            parts.append(named)           # __import__('shutil').rmtree is shutil.rmtree
        elif inner in _GETATTR and len(node.args) >= 2:
            attr = _literal_arg(node, 1)   # getattr(os, 'system') is os.system
            parts.append(f"{_dotted(node.args[0], aliases)}.{attr if attr is not None else '?'}")
        elif inner in ("Path", "pathlib.Path", "PurePath", "pathlib.PosixPath", "PosixPath") or (
                inner.startswith("pathlib.Path.") and inner.rsplit(".", 1)[1] in _PATH_RETURNING):
            parts.append("pathlib.Path")
        else:
            parts.append("?")
    elif isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div):
        parts.append("pathlib.Path")
    else:
        parts.append("?")
    return ".".join(reversed(parts))


_GETATTR = {"getattr", "builtins.getattr"}
_RISKY = (_SHELL_CALLS | _ARGV_CALLS | _ARGV_SPREAD | _DELETE_CALLS | _WRITE_CALLS | _MOVE_CALLS | _COPY_CALLS
          | set(_LINK_CALLS) | _EXEC_CALLS | _IMPORT_CALLS)


def _literal_arg(call: Any, i: int) -> str | None:
    arg = call.args[i] if len(call.args) > i else None
    return arg.value if isinstance(arg, ast.Constant) and isinstance(arg.value, str) else None


class _PyEval:
    """Static values of Python expressions: literals, concatenation, os.path.join, Path / ..."""

    def __init__(self, an: Any, aliases: dict[str, str], consts: dict[str, Any]) -> None:
        self.an = an
        self.aliases = aliases
        self.consts = consts

    def value(self, node: Any) -> Any:
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
                    joined = base
                    for a in args:
                        joined = a if a.startswith("/") else joined.rstrip("/") + "/" + a
                    return joined
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
            argv = getattr(self.an, "script_argv", None)
            if base == "sys.argv" and argv is not None:     # a file run with known arguments
                if isinstance(key, int) and -len(argv) <= key < len(argv):
                    return argv[key]
                sl = node.slice
                if isinstance(sl, ast.Slice) and sl.upper is None and sl.step is None:   # sys.argv[1:]
                    lo = self.value(sl.lower) if sl.lower is not None else 0
                    part = argv[lo:] if isinstance(lo, int) else [None]
                    return part if all(isinstance(p, str) for p in part) else None
            return None
        return None

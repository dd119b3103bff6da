"""Interpreters: python, node/deno/bun, ruby, php, perl, and the rest.

Inline code (-c, -e, heredocs) goes through scan/code.py; a script file is read (credential
rules) and, at observe, not run; code only known at run time is denied.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from zen.guard.rules import db, debug, pkg, zen
from zen.guard.scan import code as codescan
from zen.guard.scan import python as pyscan
from zen.guard.shell.words import UNK, Cmd, State, Word, lit

if TYPE_CHECKING:
    from zen.guard.analyse import Analyser


def python(an: Analyser, name: str, args: list[Word], st: State, cmd: Cmd | None, depth: int) -> None:
    i = 0
    while i < len(args):
        a = args[i]
        t = a.text
        if not a.known:
            an.deny("opaque.exec", "python runs code only known at run time")
        if t == "-c" or (t.startswith("-") and not t.startswith("--") and t.endswith("c") and
                         set(t[1:]) <= set("BdEhiIOPqsSuvVxc")):
            if i + 1 >= len(args):
                return
            code = args[i + 1]
            if not code.known:
                an.deny("opaque.exec", "python -c code only known at run time")
            an.ro("`python -c`")
            pyscan.scan_python(an, code.text, "python -c")
            return
        if t == "-m" or (t.startswith("-m") and len(t) > 2):
            mod = t[2:] if len(t) > 2 else (args[i + 1].text if i + 1 < len(args) else "")
            rest = args[i + 2:] if len(t) == 2 else args[i + 1:]
            python_module(an, mod, rest, st, cmd, depth)
            return
        if t in ("-W", "-X", "--check-hash-based-pycs"):
            i += 2
            continue
        if t.startswith("-") and t != "-":
            i += 1
            continue
        if t == "-":
            interp_stdin(an, name, cmd, lang="python")
            return
        # a script file
        base = t.rsplit("/", 1)[-1]
        if base == "zen":
            zen.zen(an, "zen", args[i + 1:], st, cmd, depth)
        elif zen.is_zen_script(t):
            zen.code(an, f"`{name} {t}`")
        if base in ("manage.py", "django-admin.py"):
            an.policy_rules(base, args[i + 1:], st, cmd)
            db.django(an, base, args[i + 1:], st, cmd, depth)
        if a.procsub:
            an.deny("opaque.exec", "python runs a script from a process substitution")
        an.ro(f"`{name} {t}`")
        for w in args[i:]:
            an.read_word(w, st)
        an.run_file(a, st, "python", f"`{name}`", args[i + 1:])
        return
    interp_stdin(an, name, cmd, lang="python")


def python_module(an: Analyser, mod: str, rest: list[Word], st: State, cmd: Cmd | None, depth: int) -> None:
    if zen.is_zen_module(mod):
        zen.module(an, mod, rest, st, cmd, depth)
        return
    if an.local_module(mod, 0, f"`python -m {mod}`", run=True, st=st, args=rest):   # the project's own
        an.ro(f"`python -m {mod}`")
        return
    if mod == "pdb":
        debug.pdb(an, "pdb", rest, st, cmd, depth)
        return
    if mod in ("json.tool", "tokenize", "pydoc", "this", "timeit", "calendar", "platform",
               "sysconfig", "site", "tabnanny", "py_compile", "compileall", "dis", "pickletools"):
        return
    if mod in ("pip", "pip3"):
        an.ro("`pip`")
        pkg.pip(an, "pip", rest, "`python -m pip`")
        if rest and rest[0].text in ("install", "download", "wheel"):
            an.need("network_requests", "approval.network", "`pip install` reaches the network")
        return
    if mod in ("http.server", "SimpleHTTPServer", "smtpd"):
        an.ro(f"`python -m {mod}`")
        folder = next((rest[k + 1] for k, a in enumerate(rest[:-1]) if a.text in ("-d", "--directory")), None)
        folder = folder or next((Word(a.text.split("=", 1)[1]) for a in rest if a.text.startswith("--directory=")),
                                None)
        an.read_word(folder or lit("."), st, recursive=True)      # it serves everything below
        return
    an.ro(f"`python -m {mod}`")
    an.leaf([lit(mod.split(".", maxsplit=1)[0]), *rest], st, cmd, depth + 1) if mod in (
        "pytest", "mypy", "ruff", "black", "isort", "flake8", "pylint", "unittest", "venv",
        "build", "twine", "coverage") else None


def _ruby_httpd(an: Analyser, args: list[Word], st: State) -> bool:
    """`ruby -run -e httpd [DIR]` (un.rb) serves DIR (or the cwd) over HTTP."""
    texts = [a.text for a in args]
    if ("-run" in texts or texts[:2] == ["-r", "un"]) and "httpd" in texts:
        rest = [a for a in args[texts.index("httpd") + 1:] if not a.text.startswith("-") and not a.text.isdigit()]
        an.read_word(rest[-1] if rest else lit("."), st, recursive=True)
        return True
    return False


def script_lang(an: Analyser, name: str, lang: str, eval_flags: tuple[str, ...], args: list[Word],
                 st: State, cmd: Cmd | None, value_flags: tuple[str, ...] = ()) -> None:
    i = 0
    while i < len(args):
        a = args[i]
        t = a.text
        if not a.known:
            an.deny("opaque.exec", f"`{name}` runs code only known at run time")
        if t in eval_flags or any(t.startswith(f + "=") for f in eval_flags if f.startswith("--")):
            code = t.split("=", 1)[1] if "=" in t else (args[i + 1].text if i + 1 < len(args) else "")
            if UNK in code:
                an.deny("opaque.exec", f"`{name}` code only known at run time")
            an.ro(f"`{name} {t}`")
            codescan.scan_script(an, lang, code, f"{name} {t.split('=')[0]}")
            return
        if t in value_flags:
            i += 2
            continue
        if t.startswith("-") and t != "-":
            i += 1
            continue
        if t == "-":
            break
        if name == "deno" and t in ("eval",):
            code = args[i + 1].text if i + 1 < len(args) else ""
            if UNK in code:
                an.deny("opaque.exec", "deno eval code only known at run time")
            an.ro("`deno eval`")
            codescan.scan_script(an, lang, code, "deno eval")
            return
        if name in ("deno", "bun") and t in ("run", "x", "test", "install", "add", "task", "fmt",
                                             "lint", "check", "compile", "build"):
            i += 1
            if t != "run":
                an.ro(f"`{name} {t}`")
                return
            continue
        if a.procsub:
            an.deny("opaque.exec", f"`{name}` runs a script from a process substitution")
        an.ro(f"`{name} {t}`")
        for w in args[i:]:
            an.read_word(w, st)
        an.run_file(a, st, lang, f"`{name}`", args[i + 1:])
        return
    interp_stdin(an, name, cmd, lang=lang)


def node(an: Analyser, name: str, args: list[Word], st: State, cmd: Cmd | None, depth: int) -> None:
    if name == "deno":      # deno run/install/compile URL: code fetched from that host
        pos = [a for a in args if not a.text.startswith("-")]
        if pos[:1] and pos[0].text in ("run", "install", "compile", "cache", "add", "x", "bundle"):
            for a in pos[1:2]:
                if "://" in a.text or not a.known:
                    pkg.source_url(an, a.text, f"`deno {pos[0].text}`")
    script_lang(an, name, "js", ("-e", "--eval", "-p", "--print", "-pe"), args, st, cmd,
                      ("-r", "--require", "--import", "--loader", "--experimental-loader"))


def ruby(an: Analyser, name: str, args: list[Word], st: State, cmd: Cmd | None, depth: int) -> None:
    if _ruby_httpd(an, args, st):
        an.ro("`ruby -run -e httpd`")
        return
    script_lang(an, name, "ruby", ("-e",), args, st, cmd, ("-r", "-I", "-C"))


def php(an: Analyser, name: str, args: list[Word], st: State, cmd: Cmd | None, depth: int) -> None:
    texts = [a.text for a in args]
    if "-S" in texts:               # php -S ADDR [-t DOCROOT] [router.php]: a web server of the folder
        an.ro("`php -S`")
        k = texts.index("-t") if "-t" in texts else -1
        an.read_word(args[k + 1] if 0 <= k < len(args) - 1 else lit("."), st, recursive=True)
        rest = [a for i, a in enumerate(args) if i > texts.index("-S") + 1 and a.text.endswith(".php")]
        for router in rest:
            an.run_file(router, st, "php", "`php -S`")
        return
    script_lang(an, name, "php", ("-r",), args, st, cmd, ("-d", "-c"))


def other_interp(an: Analyser, name: str, args: list[Word], st: State, cmd: Cmd | None, depth: int) -> None:
    texts = [a.text for a in args]
    if any(t in ("-e", "-c", "--eval", "-E", "-x") for t in texts) or (cmd is not None and cmd.stdin in (
            "pipe", "heredoc", "herestring")) or (name in ("osascript", "expect") and not texts):
        an.deny("opaque.exec", f"`{name}` code cannot be checked by the guardian")
    an.ro(f"`{name}`")


def perl(an: Analyser, name: str, args: list[Word], st: State, cmd: Cmd | None, depth: int) -> None:
    code: list[str] = []
    inplace = False
    files: list[Word] = []
    i = 0
    script_file = None
    while i < len(args):
        a = args[i]
        t = a.text
        if (a.known and t.startswith("-") and len(t) > 1 and not code and script_file is None) or (
                a.known and t.startswith("-") and len(t) > 1 and t[1] in "eEipnlaF0" and not files):
            if t == "--":
                i += 1
                continue
            body = t[1:]
            if body.startswith("M") or body.startswith("m") or body.startswith("I"):
                i += 1
                continue
            if "i" in body:
                inplace = True
            if body.endswith(("e", "E")) or body in ("e", "E"):
                if i + 1 < len(args):
                    code.append(args[i + 1].text)
                    i += 1
            i += 1
            continue
        if not code and script_file is None:
            script_file = a
        else:
            files.append(a)
        i += 1
    if inplace:
        an.ro("`perl -i`")
        for f in files:
            an.write_word(f, st, "`perl -i` rewrites")
    else:
        for f in files:
            an.read_word(f, st)
    if code:
        for c in code:
            if UNK in c:
                an.deny("opaque.exec", "perl code only known at run time")
            an.ro("`perl -e`")
            codescan.scan_script(an, "perl", c, "perl -e")
    elif script_file is not None:
        an.ro("`perl`")
        run_script_file(an, script_file, "perl", st, cmd)
        an.run_file(script_file, st, "perl", "`perl`", files)
    else:
        interp_stdin(an, "perl", cmd)


def run_script_file(an: Analyser, script: Word, lang: str, st: State, cmd: Cmd | None) -> None:
    if script.text.startswith(("/dev/fd/", "/proc/self/fd/", "/dev/stdin")) or script.procsub:
        an.deny("opaque.exec", "runs a script from a pipe or process substitution")
    an.read_word(script, st)


def interp_stdin(an: Analyser, name: str, cmd: Cmd | None, shell: bool = False, st: State | None = None,
                 depth: int = 0, lang: str = "") -> None:
    """An interpreter reading its program from stdin."""
    if cmd is None or cmd.stdin is None:
        if an.observe:
            an.ro(f"`{name}`")
        return
    if cmd.stdin in ("heredoc", "herestring"):
        text = cmd.stdin_text or ""
        if UNK in text:
            an.deny("opaque.exec", f"`{name}` runs a script only known at run time")
        an.ro(f"a script fed to `{name}`")
        if shell:
            an.walk(text, (st or an.st).copy(vars={}), depth + 1)
        elif lang == "python":
            pyscan.scan_python(an, text, f"{name} <<heredoc")
        elif lang in ("js", "ruby", "perl", "php"):
            codescan.scan_script(an, lang, text, f"{name} <<heredoc")
        else:
            an.deny("opaque.exec", f"`{name}` code cannot be checked")
        return
    if cmd.stdin == "pipe":
        an.deny("opaque.pipe", f"output piped into `{name}` runs as code the guardian cannot see "
                  "(opaque execution)")
    # stdin from a file: like running a script file
    an.ro(f"`{name}`")
    for r in cmd.reads:
        if r.procsub:
            an.deny("opaque.exec", f"`{name}` runs a script from a process substitution")
        an.run_file(r, st or an.st, "sh" if shell else lang or None, f"`{name} <`")

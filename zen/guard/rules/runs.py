"""Programs that run other programs or the project's own code, and detaching primitives.

- pytest (and `python -m pytest`): the conftest.py files it loads and the test files named
  are judged as the Python they are (write-then-run, issue 32).
- just / rake: the recipe or task file is read and judged (a justfile's recipes as shell lines,
  a Rakefile as Ruby); one the guardian cannot read needs a human.
- fd / fdfind -x/-X: the command it runs for every match is judged, with the match standing for
  whatever it finds below the search paths; at observe it is denied outright.
- dc: GNU dc's `!` runs a shell command; at observe any dc is denied.
- man -P/-H/--html and the pager or browser it starts are judged as commands (denied at observe).
- detaching primitives (setsid, nohup, systemd-run, daemonize, start-stop-daemon --background,
  screen and tmux starting a program: their server outlives the client): a helper that survives the job and the kill switch's stop needs a
  human's approval at every level (denied at observe, where approvals do not apply).

`before(an, name, args)` runs for every program (analyse.leaf), before its own handler: one set
lookup for programs it does not concern.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from zen.guard.paths.resolve import norm
from zen.guard.shell.options import split_opts
from zen.guard.shell.words import FOUND, UNK, Cmd, State, Word, lit

if TYPE_CHECKING:
    from zen.guard.analyse import Analyser

DETACHERS = frozenset({"setsid", "nohup", "systemd-run", "daemonize", "start-stop-daemon", "screen",
                       "byobu-screen", "tmux", "byobu", "byobu-tmux"})
CONCERNS = DETACHERS | {"man"}


def before(an: Analyser, name: str, args: list[Word], st: State, cmd: Cmd | None, depth: int) -> None:
    """Checks every program named here gets whatever handler judges it."""
    if name == "man":
        _man(an, args, st, depth)
        return
    texts = [a.text for a in args]
    what = None
    if name in ("setsid", "nohup", "systemd-run", "daemonize"):
        what = f"`{name}`"
    elif name == "start-stop-daemon" and any(t in ("-b", "--background") or (
            t.startswith("-") and not t.startswith("--") and "b" in t[1:]) for t in texts):
        what = "`start-stop-daemon --background`"
    elif name in ("screen", "byobu-screen") and _screen_detached(texts):
        what = "`screen` starting a session"
    elif name in ("tmux", "byobu", "byobu-tmux") and _tmux_detached(texts):
        what = "`tmux` starting a program in a server"
    if what is not None:
        an.unjudged(f"{what} starts a process that outlives the job (and the kill switch's stop)",
                    rule="approval.detach")


def _screen_detached(texts: list[str]) -> bool:
    """screen starts a session (detached with -dm, or attached: its server outlives the client the
    kill switch stops) unless it only lists, attaches to or sends to one."""
    return not any(t in ("-ls", "-list", "-r", "-x", "-X", "-Q", "-v", "-version", "--version", "-wipe", "-h",
                         "--help") or t.startswith(("-r", "-x", "-X")) for t in texts)


_TMUX_STARTS = frozenset({"new", "new-session", "neww", "new-window", "splitw", "split-window", "respawnp",
                          "respawn-pane", "respawnw", "respawn-window", "run", "run-shell", "start", "start-server"})


def _tmux_detached(texts: list[str]) -> bool:
    """tmux starts a program in a server (a new one outlives the client, attached or not)."""
    return any(t in _TMUX_STARTS for t in texts)


def _man(an: Analyser, args: list[Word], st: State, depth: int) -> None:
    for i, a in enumerate(args):
        t = a.text
        prog = None
        if t in ("-P", "--pager", "-H", "--html"):
            prog = args[i + 1] if t in ("-P", "--pager") and i + 1 < len(args) else (lit("") if t in (
                "-H", "--html") else None)
        elif t.startswith(("--pager=", "--html=")):
            prog = lit(t.split("=", 1)[1])
        elif t.startswith(("-P", "-H")) and len(t) > 2:
            prog = lit(t[2:])
        if prog is None:
            continue
        an.ro("`man` with a pager or browser of its own (it runs that program)")
        if not prog.known:
            an.deny("shell.unresolved-command", "`man` runs a pager or browser only known at run time")
        if prog.text:
            an.walk(prog.text, st.copy(vars={}), depth + 1)


# -- fd -x / -X ---------------------------------------------------------------------------------
_FD_VALUE = frozenset({"--exec", "--exec-batch", "--extension", "--type", "--exclude", "--max-depth",
                       "--min-depth", "--exact-depth", "--size", "--changed-within", "--changed-before",
                       "--owner", "--color", "--threads", "--max-results", "--base-directory",
                       "--path-separator", "--search-path", "--ignore-file", "--batch-size", "--format",
                       "--and"})


def fd(an: Analyser, name: str, args: list[Word], st: State, cmd: Cmd | None, depth: int) -> None:
    k = next((i for i, a in enumerate(args) if a.text in ("-x", "--exec", "-X", "--exec-batch")
              or a.text.startswith(("--exec=", "--exec-batch="))), None)
    before_exec = args if k is None else args[:k]
    if any(not a.known for a in before_exec):
        an.deny("shell.unresolved", f"`{name}` with an argument only known at run time")
    _opts, pos = split_opts(before_exec, "etEdSoj", _FD_VALUE)
    for a in pos[1:]:
        an.read_word(a, st)
    if k is None:
        return
    an.ro(f"`{name} {args[k].text}` (it runs a command for every match)")
    roots = [p.text for p in pos[1:]] or ["."]
    sub: list[Word] = []
    for a in args[k + 1:]:
        if a.text == ";":
            break
        if not a.known:
            an.deny("shell.unresolved-command", f"`{name} -x` runs a command only known at run time")
        if re.search(r"\{[/.//]*\}", a.text):
            for r in roots:
                sub.append(Word(re.sub(r"\{[/.//]*\}", r.rstrip("/") + "/" + FOUND, a.text), a.raw, glob=True))
        else:
            sub.append(a)
    if not sub:
        an.deny("shell.unresolved-command", f"`{name} -x` without a command")
    if not any(FOUND in w.text for w in sub[1:]):
        sub += [Word(r.rstrip("/") + "/" + FOUND, r, glob=True) for r in roots]
    an.leaf(sub, st, None, depth + 1)


# -- dc: `!` runs a shell command ------------------------------------------------------------------
def dc(an: Analyser, name: str, args: list[Word], st: State, cmd: Cmd | None, depth: int) -> None:
    an.ro("`dc` (GNU dc's `!` runs a shell command)")
    code: list[str | None] = []
    for i, a in enumerate(args):
        t = a.text
        if t in ("-e", "--expression") and i + 1 < len(args):
            code.append(args[i + 1].text if args[i + 1].known else None)
        elif t.startswith("--expression="):
            code.append(t.split("=", 1)[1])
        elif t.startswith("-e") and len(t) > 2:
            code.append(t[2:])
        elif t in ("-f", "--file") or (not t.startswith("-") and (i == 0 or args[i - 1].text not in ("-e", "--expression"))):
            if t not in ("-f", "--file"):
                kind, text = an.file_text(a, st)
                code.append(text if kind in ("written", "disk") else None if kind == "unknown" else "")
    if cmd is not None and cmd.stdin is not None:
        code.append(cmd.stdin_text if cmd.stdin in ("heredoc", "herestring") else None)
    for c in code:
        if c is None or UNK in c:
            an.deny("opaque.exec", "`dc` runs code the guardian cannot see (its `!` runs shell commands)")
        if "!" in c:
            an.deny("opaque.exec", "`dc` code with `!` runs a shell command")


# -- pytest: conftest.py and the named test files ----------------------------------------------------
def pytest(an: Analyser, name: str, args: list[Word], st: State, cmd: Cmd | None, depth: int) -> None:
    an.ro(f"`{name}`")
    if any(not a.known for a in args):
        an.deny("opaque.exec", f"`{name}` with an argument only known at run time")
    texts = [a.text for a in args]
    plugins = [texts[i + 1] if t == "-p" and i + 1 < len(texts) else t[2:] for i, t in enumerate(texts)
               if t == "-p" or (t.startswith("-p") and len(t) > 2)]
    if any(not p.startswith("no:") for p in plugins):          # -p no:cacheprovider turns one off
        an.unjudged(f"`{name} -p` loads a plugin the guardian cannot judge")
    paths = [a for a in args if not a.text.startswith("-") and "::" not in a.text] or [lit(".")]
    dirs: list[str] = []
    for p in paths:
        full = norm(p.text.split("::", 1)[0], st.cwd)
        if full is None:
            an.deny("opaque.exec", f"`{name}` runs tests from a directory only known at run time")
        if full.endswith(".py"):
            py_file(an, lit(full), st, f"`{name}`")
            full = full.rsplit("/", 1)[0]
        dirs.append(full)
    root = next((r for r in an.roots if st.cwd is not None and (st.cwd + "/").startswith(r.rstrip("/") + "/")), None)
    seen: set[str] = set()
    for d in dirs:
        # conftest.py in the directory and in every one above it up to the worktree (and tests/)
        chain = [d, d.rstrip("/") + "/tests", d.rstrip("/") + "/test"]
        up = d
        while root is not None and up.startswith(root) and up != root and "/" in up:
            up = up.rsplit("/", 1)[0]
            chain.append(up)
        for c in chain:
            if c not in seen:
                seen.add(c)
                py_file(an, lit(c.rstrip("/") + "/conftest.py"), st, f"`{name}` (conftest.py)")


def py_file(an: Analyser, w: Word, st: State, via: str) -> None:
    """A Python file that runs (imported): judged as strictly as inline code when it is there."""
    kind, text = an.file_text(w, st)
    if kind == "none":
        return
    if kind == "unknown" or text is None:
        if w.text in an.written or any(w.text.startswith(t.rstrip("/") + "/") for t in an.trees):
            an.deny("opaque.exec", f"{via} runs {w.raw}, which this command writes with text the guardian "
                    "cannot see")
        an.unjudged(f"{via} runs {w.raw}, which the guardian cannot read whole")
        return
    an.judge_text(text, "python", st, f"{via} ({w.raw})")


# -- just / rake ---------------------------------------------------------------------------------------
_JUST_RECIPE = re.compile(r"^@?([A-Za-z_][\w-]*)((?:\s+[^:=]*)?)\s*:(?!=)\s*(.*)$")


def just(an: Analyser, name: str, args: list[Word], st: State, cmd: Cmd | None, depth: int) -> None:
    an.ro(f"`{name}`")
    if any(not a.known for a in args):
        an.deny("opaque.exec", f"`{name}` with an argument only known at run time")
    texts = [a.text for a in args]
    if any(t in ("-l", "--list", "--summary", "--dump", "--evaluate", "--show", "-s", "--help", "-h",
                 "--version", "-V", "--variables", "--fmt", "--check") for t in texts):
        return
    f = next((args[i + 1] for i, t in enumerate(texts[:-1]) if t in ("-f", "--justfile")), None)
    kind, text = "none", None
    for cand in ([f] if f is not None else [lit(n) for n in ("justfile", "Justfile", ".justfile")]):
        kind, text = an.file_text(cand, st)
        if kind != "none":
            break
    if kind == "none":
        return
    if kind == "unknown" or text is None:
        an.unjudged("`just` runs recipes of a justfile the guardian cannot read")
        return
    goals = [t for t in texts if not t.startswith("-") and "=" not in t]
    lines = _just_lines(text, goals[:1])
    if lines is None:
        an.unjudged("`just` runs recipes the guardian cannot read whole (settings, imports, "
                    "interpolation or a script recipe)")
        return
    an.run_lines(lines, st, "`just` (justfile)")


def _just_lines(text: str, goals: list[str]) -> list[str] | None:
    recipes: dict[str, tuple[list[str], list[str]]] = {}
    order: list[str] = []
    current: list[str] | None = None
    for line in text.splitlines():
        if line.startswith((" ", "\t")):
            if current is None:
                if line.strip():
                    return None
                continue
            body = line.strip()
            if body:
                current.append(body.lstrip("@-"))
            continue
        stripped = line.split("#", 1)[0].rstrip()
        if not stripped:
            continue
        m = _JUST_RECIPE.match(stripped)
        if m is None or stripped.startswith(("set ", "import ", "mod ", "alias ", "export ")):
            return None
        current = []
        recipes[m.group(1)] = ([d for d in m.group(3).split() if re.fullmatch(r"[\w-]+", d)], current)
        if m.group(3).strip() and not all(re.fullmatch(r"[\w-]+", d) for d in m.group(3).split()):
            return None            # a dependency with arguments
        order.append(m.group(1))
    out: list[str] = []
    seen: set[str] = set()

    def visit(r: str) -> bool:
        if r in seen:
            return True
        seen.add(r)
        if r not in recipes:
            return False
        deps, body = recipes[r]
        if body and body[0].startswith("#!"):
            return False
        for d in deps:
            if not visit(d):
                return False
        out.extend(body)
        return True

    for g in goals or order[:1]:
        if not visit(g):
            return None
    if any("{{" in line or "`" in line for line in out):
        return None
    return out


def rake(an: Analyser, name: str, args: list[Word], st: State, cmd: Cmd | None, depth: int) -> None:
    an.ro(f"`{name}`")
    texts = [a.text for a in args]
    if any(t in ("-T", "--tasks", "-D", "--describe", "-W", "--where", "-V", "--version", "-h", "--help")
           for t in texts):
        return
    f = next((args[i + 1] for i, t in enumerate(texts[:-1]) if t in ("-f", "--rakefile")), None)
    for cand in ([f] if f is not None else [lit(n) for n in ("Rakefile", "rakefile", "Rakefile.rb", "rakefile.rb")]):
        kind, text = an.file_text(cand, st)
        if kind == "none":
            continue
        if kind == "unknown" or text is None:
            an.unjudged(f"`rake` runs {cand.raw}, which the guardian cannot read")
            return
        an.judge_text(text, "ruby", st, f"`rake` ({cand.raw})")
        return


def runs(an: Analyser, name: str, args: list[Word], st: State, cmd: Cmd | None, depth: int) -> None:
    """The one entry of the handler table for this module's programs."""
    {"fd": fd, "fdfind": fd, "dc": dc, "pytest": pytest, "py.test": pytest, "just": just,
     "rake": rake}.get(name, _other)(an, name, args, st, cmd, depth)


def _other(an: Analyser, name: str, args: list[Word], st: State, cmd: Cmd | None, depth: int) -> None:
    """daemonize [-options] PROGRAM ARGS, start-stop-daemon ... --exec PROGRAM -- ARGS: the program
    they start is judged as a command (before() asked for the approval)."""
    an.ro(f"`{name}`")
    if any(not a.known for a in args):
        an.deny("shell.unresolved-command", f"`{name}` starts a program only known at run time")
    if name == "daemonize":
        _opts, pos = split_opts(args, "aceoplEu", frozenset(), stop_first=True)
        if pos:
            an.leaf(pos, st, None, depth + 1)
        return
    texts = [a.text for a in args]
    prog = next((args[i + 1] for i, t in enumerate(texts[:-1]) if t in ("-x", "--exec", "-a", "--startas")), None)
    rest = args[texts.index("--") + 1:] if "--" in texts else []
    if prog is not None and ("-S" in texts or "--start" in texts):
        an.leaf([prog, *rest], st, None, depth + 1)

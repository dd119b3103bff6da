"""Wrappers and shells: whatever they run is judged as if it were typed.

Shells with -c, a script or stdin; env (assignments, -C, -S); nice, timeout, nohup and the other
wrappers of WRAPPER_VALUE_OPTS; flock, watch, script; eval, source, trap, alias; coproc.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from zen.guard.paths.resolve import norm
from zen.guard.rules import interp
from zen.guard.rules.table import WRAPPER_VALUE_OPTS
from zen.guard.shell.options import has, is_num_flag, split_opts, sq, val
from zen.guard.shell.words import FOUND, Cmd, State, Word, lit

if TYPE_CHECKING:
    from zen.guard.analyse import Analyser


def shell(an: Analyser, name: str, args: list[Word], st: State, cmd: Cmd | None, depth: int) -> None:
    i = 0
    payload = None
    script = None
    while i < len(args):
        a = args[i]
        t = a.text
        if not a.known:
            an.deny("opaque.exec", f"`{name}` runs a script only known at run time")
        if t in ("-c",) or (t.startswith("-") and not t.startswith("--") and "c" in t[1:] and
                            not t.startswith("-o")):
            if i + 1 < len(args):
                payload = args[i + 1]
            break
        if t in ("--rcfile", "--init-file") and i + 1 < len(args):
            an.run_file(args[i + 1], st, "sh", f"`{name} {t}`")
        if t in ("-o", "+o", "-O", "+O", "--rcfile", "--init-file"):
            i += 2
            continue
        if t.startswith("-") and not t.startswith("--") and "s" in t[1:]:
            break       # -s: the script is stdin; the words after it are its arguments
        if t.startswith(("-", "+")) and t not in ("-", "--"):
            i += 1
            continue
        if t == "--":
            i += 1
            if i < len(args):
                script = args[i]
            break
        if t == "-":
            break
        script = a
        break
    if name in ("pwsh", "powershell", "fish", "elvish", "nu", "xonsh", "csh", "tcsh"):
        if payload is not None or script is None:
            an.deny("opaque.exec", f"`{name}` code cannot be checked (not bash)")
    if payload is not None:
        if not payload.known:
            an.deny("opaque.exec", f"`{name} -c` runs a command only known at run time")
        an.walk(payload.text, st.copy(vars={}), depth + 1)
        return
    if script is not None:
        if script.procsub:
            an.deny("opaque.exec", f"`{name}` runs a script from a process substitution")
        an.ro(f"running `{script.text}`")
        interp.run_script_file(an, script, "sh", st, cmd)
        an.run_file(script, st, "sh", f"`{name}`", args[args.index(script) + 1:])
        for w in args[args.index(script) + 1:]:
            an.read_word(w, st)
        return
    interp.interp_stdin(an, name, cmd, shell=True, st=st, depth=depth)


_ENV_VALUE_LONG = frozenset({"--unset", "--chdir", "--split-string", "--argv0", "--path"})
_ENV_FLAG_LONG = frozenset({"--ignore-environment", "--null", "--debug", "--list-signal-handling",
                            "--default-signal", "--ignore-signal", "--block-signal"})


def env(an: Analyser, name: str, args: list[Word], st: State, cmd: Cmd | None, depth: int) -> None:
    """env [-i0v] [-u NAME] [-C DIR] [-S STRING] [-P PATH] [-a ARGV0] [NAME=VALUE]... [COMMAND...],
    with options bundled (-vS, -iC DIR) and long forms (--chdir=DIR) as env reads them."""
    i = 0
    cwd_st = st
    search: str | None = None
    while i < len(args):
        a = args[i]
        t = a.text
        if not a.known:
            an.deny("shell.unresolved-command", "env runs a command only known at run time")
        if t == "--":
            i += 1
            break
        if t == "-":
            i += 1
            continue
        opts: list[tuple[str, str | None]] = []
        if t.startswith("--"):
            opt, eq, value = t.partition("=")
            if opt in _ENV_VALUE_LONG and not eq:
                value = args[i + 1].text if i + 1 < len(args) else ""
                i += 1
            elif opt not in _ENV_VALUE_LONG and opt not in _ENV_FLAG_LONG:
                an.deny("shell.unresolved-command", f"`env {opt}`: an option the guardian does not know")
            opts.append((opt, value if opt in _ENV_VALUE_LONG else None))
        elif t.startswith("-") and len(t) > 1:
            for k, c in enumerate(t[1:]):
                if c in "uCSPa":
                    value = t[k + 2:] or (args[i + 1].text if i + 1 < len(args) else "")
                    if not t[k + 2:]:
                        i += 1
                    opts.append(({"u": "--unset", "C": "--chdir", "S": "--split-string", "P": "--path",
                                  "a": "--argv0"}[c], value))
                    break
                opts.append(("-" + c, None))
        elif "=" in t and not t.startswith("="):
            n, _, v = t.partition("=")
            an.assignment(n, lit(v), st, depth)
            i += 1
            continue
        else:
            break
        i += 1
        for opt, optval in opts:
            if opt == "--chdir":
                cwd_st = st.copy(cwds=(norm(optval or "", st.cwd),))
            elif opt == "--path":
                search = optval or "."
            elif opt == "--split-string":
                tail = " ".join(sq(w.text) for w in args[i:])
                an.walk((optval or "") + (" " + tail if tail else ""), cwd_st.copy(vars={}), depth + 1)
                return
    rest = args[i:]
    if not rest:
        an.deny("creds.env-dump", "`env` without a command prints the whole environment")
    if search is not None and "/" not in rest[0].text:
        # env -P DIR looks the program up in DIR: judged as the file it finds there
        first = search.split(":", 1)[0] or "."
        rest = [Word(first.rstrip("/") + "/" + rest[0].text, rest[0].raw), *rest[1:]]
    an.payload(rest, cwd_st, cmd, depth)


def wrapper(an: Analyser, name: str, args: list[Word], st: State, cmd: Cmd | None, depth: int) -> None:
    short, long = WRAPPER_VALUE_OPTS.get(name, ("", frozenset()))
    if name == "nice":
        args = [lit("-n"), lit(args[0].text[1:]), *args[1:]] if args and is_num_flag(args[0]) else args
    opts, pos = split_opts(args, short, long, stop_first=True)
    if name == "exec" and not pos:
        return
    if name in ("timeout", "faketime") and pos:
        pos = pos[1:]            # the duration, the time to fake
    elif name in ("taskset", "chrt") and pos:
        pos = pos[1:] if not has(opts, "-p", "--pid") else []
    elif name in ("cpulimit", "prlimit") and has(opts, "-p", "--pid", "-e", "--exe"):
        pos = []                 # limits a running process, runs nothing
    elif name in ("strace", "ltrace", "valgrind", "systemd-run", "firejail", "fakeroot"):
        an.ro(f"`{name}`")
    st = _wrapper_options(an, name, opts, st, depth)
    if not pos:
        return
    an.payload(pos, st, cmd, depth)


def _wrapper_options(an: Analyser, name: str, opts: list[tuple[str, Word | None]], st: State,
                     depth: int) -> State:
    """Options of the wrappers that run something else, write, or move the command elsewhere."""
    if name in ("strace", "ltrace"):
        out = val(opts, "-o", "--output")
        if out is not None and out.text.startswith(("|", "!")):
            an.walk(out.text[1:], st.copy(vars={}), depth + 1)     # -o '|cmd' pipes the trace into cmd
        elif out is not None:
            an.write_word(out, st, f"`{name} -o` writes")
    if name == "valgrind" and any(o.startswith(("--db-command", "--vgdb-prefix")) for o, _ in opts):
        an.deny("opaque.exec", "`valgrind --db-command` runs a program")
    if name == "fakeroot" and has(opts, "-l", "--lib", "--faked"):
        an.deny("opaque.exec", "`fakeroot --lib/--faked` loads code the guardian cannot see")
    if name == "systemd-run":
        if any(o.startswith("--on-") or o == "--timer-property" for o, _ in opts):
            an.deny("system.persistence", "`systemd-run --on-...` schedules a command that runs outside the job")
        an.need("system_commands", "approval.system-command", "`systemd-run` starts a service")
        if has(opts, "-H", "--host", "-M", "--machine"):
            return State((None,))
        wd = val(opts, "--working-directory")
        if wd is not None:
            return st.copy(cwds=(norm(wd.text, st.cwd) if wd.known else None,))
    if name == "flatpak-spawn":
        wd = val(opts, "--directory")
        if wd is not None:
            return st.copy(cwds=(norm(wd.text, st.cwd) if wd.known else None,))
    return st


def sg(an: Analyser, name: str, args: list[Word], st: State, cmd: Cmd | None, depth: int) -> None:
    """`sg GROUP [-c] COMMAND`: COMMAND runs through /bin/sh -c."""
    rest = [a for a in args if a.text != "-"]
    if len(rest) < 2:
        interp.interp_stdin(an, name, cmd, shell=True, st=st, depth=depth)
        return
    words = rest[2:] if rest[1].text == "-c" else rest[1:]
    if any(not w.known for w in words):
        an.deny("opaque.exec", "`sg` runs a command only known at run time")
    an.walk(" ".join(w.text for w in words), st.copy(vars={}), depth + 1)


def newgrp(an: Analyser, name: str, args: list[Word], st: State, cmd: Cmd | None, depth: int) -> None:
    """`newgrp GROUP` starts a shell, which reads its commands from stdin."""
    interp.interp_stdin(an, name, cmd, shell=True, st=st, depth=depth)


def entr(an: Analyser, name: str, args: list[Word], st: State, cmd: Cmd | None, depth: int) -> None:
    """`entr [-s] CMD ...`: CMD runs each time a watched file changes (-s: through the shell);
    `/_` stands for the file that changed."""
    opts, pos = split_opts(args, "", frozenset(), stop_first=True)
    if not pos:
        return
    changed = Word(FOUND, "/_", glob=True)
    words = [changed if w.text == "/_" else w for w in pos]
    if has(opts, "-s"):
        an.walk(" ".join(w.text for w in words), st.copy(vars={}), depth + 1)
    else:
        an.payload(words, st, cmd, depth)


def command(an: Analyser, name: str, args: list[Word], st: State, cmd: Cmd | None, depth: int) -> None:
    opts, pos = split_opts(args, "", frozenset(), stop_first=True)
    if has(opts, "-v", "-V"):
        return
    an.payload(pos, st, cmd, depth)


def flock(an: Analyser, name: str, args: list[Word], st: State, cmd: Cmd | None, depth: int) -> None:
    opts, pos = split_opts(args, "wEc", frozenset({"--timeout", "--wait", "--conflict-exit-code",
                                                    "--command"}), stop_first=True)
    c = val(opts, "-c", "--command")
    if c is None and len(pos) >= 3 and pos[1].text in ("-c", "--command"):
        c = pos[2]
    if c is not None:
        if not c.known:
            an.deny("opaque.exec", "`flock -c` runs a command only known at run time")
        an.walk(c.text, st.copy(vars={}), depth + 1)
        return
    if len(pos) >= 2:
        an.payload(pos[1:], st, cmd, depth)


def watch(an: Analyser, name: str, args: list[Word], st: State, cmd: Cmd | None, depth: int) -> None:
    # -d / --differences takes its value only attached (--differences=permanent): `watch -d CMD`
    opts, pos = split_opts(args, "nq", frozenset({"--interval", "--equexit"}), stop_first=True)
    if pos:
        if has(opts, "-x", "--exec"):
            an.payload(pos, st, cmd, depth)
        else:
            an.walk(" ".join(p.text for p in pos), st.copy(vars={}), depth + 1)


def script(an: Analyser, name: str, args: list[Word], st: State, cmd: Cmd | None, depth: int) -> None:
    opts, pos = split_opts(args, "cEIOBT", frozenset({"--command", "--log-in", "--log-out",
                                                      "--log-io", "--log-timing", "--echo"}))
    c = val(opts, "-c", "--command")
    if c is not None:
        an.walk(c.text, st.copy(vars={}), depth + 1)
    for p in pos:
        an.write_word(p, st, "`script` writes its typescript to")
    an.ro("`script`")


def evaluate(an: Analyser, name: str, args: list[Word], st: State, cmd: Cmd | None, depth: int) -> None:
    if any(not a.known or a.subst for a in args):
        an.deny("opaque.eval", "`eval` of text only known at run time (opaque execution)")
    an.walk(" ".join(a.text for a in args), st, depth + 1)


def source(an: Analyser, name: str, args: list[Word], st: State, cmd: Cmd | None, depth: int) -> None:
    if not args:
        return
    f = args[0]
    if f.procsub or not f.known or f.text.startswith(("/dev/fd/", "/dev/stdin", "/proc/self/fd")):
        an.deny("opaque.exec", f"`{name}` of generated text (opaque execution)")
    an.read_word(f, st)
    an.ro(f"`{name} {f.text}`")
    an.run_file(f, st, "sh", f"`{name}`", args[1:])


def trap(an: Analyser, name: str, args: list[Word], st: State, cmd: Cmd | None, depth: int) -> None:
    opts, pos = split_opts(args, "", frozenset())
    if has(opts, "-p", "-l") or not pos:
        return
    if not pos[0].known:
        an.deny("opaque.exec", "`trap` runs a command only known at run time")
    an.walk(pos[0].text, st.copy(vars={}), depth + 1)


def alias(an: Analyser, name: str, args: list[Word], st: State, cmd: Cmd | None, depth: int) -> None:
    for a in args:
        if "=" in a.text:
            alias_name, _, body = a.text.partition("=")
            if not a.known:
                an.deny("opaque.exec", "an alias whose body is only known at run time")
            an.aliases.add(alias_name)
            an.walk(body, st.copy(vars={}), depth + 1)


def coproc(an: Analyser, name: str, args: list[Word], st: State, cmd: Cmd | None, depth: int) -> None:
    an.deny("shell.unsupported", "`coproc` runs a command the guardian does not follow")

"""The one table: which rule handler judges each program, by name (data only).

`HANDLERS` maps a program's name (the last path component of the command word, after the
walker has unwrapped nothing yet) to "family.function" in zen/guard/rules/<family>.py. A name
that is not here falls back to `fallback()`: python3.12 and pypy to the Python handler, mkfs.*
to the disk tools, anything else to `generic.generic` (the program runs; its path arguments
are still checked for credential stores, and at `observe` it must be read-only).

Every handler has the same signature:

    handler(an, name, args, st, cmd, depth) -> None

`an` is the Analyser of this decision (zen/guard/analyse.py: deny, need, path checks, walk,
leaf), `name` the program, `args` its words after expansion, `st` the walker's State (cwd,
variables), `cmd` the simple command it came from (redirects, stdin; None when it was built by
another handler, e.g. the command of `find -exec`), `depth` how deep the unwrapping is.

Lean on purpose (the hook reads it): stdlib only.
"""

from __future__ import annotations

import re

SHELLS = frozenset({"sh", "bash", "zsh", "dash", "ksh", "mksh", "ash", "fish", "csh", "tcsh", "rbash",
                    "yash", "posh", "elvish", "nu", "xonsh", "pwsh", "powershell"})
PYTHONS = re.compile(r"^(python|pypy)[0-9.]*$")
PIPS = re.compile(r"^pip[0-9.]+$")

# wrappers that run the rest of their argv: (short options that take a value, long ones)
WRAPPER_VALUE_OPTS: dict[str, tuple[str, frozenset[str]]] = {
    "nice": ("n", frozenset({"--adjustment"})),
    "ionice": ("cnpt", frozenset({"--class", "--classdata", "--pid", "--pgid", "--uid"})),
    "timeout": ("sk", frozenset({"--signal", "--kill-after"})),
    "stdbuf": ("ioe", frozenset({"--input", "--output", "--error"})),
    "setsid": ("", frozenset()),
    "nohup": ("", frozenset()),
    "time": ("fo", frozenset({"--format", "--output"})),
    "chronic": ("", frozenset()),
    "unbuffer": ("", frozenset()),
    "caffeinate": ("tw", frozenset()),
    "taskset": ("", frozenset({"--cpu-list"})),
    "chrt": ("T", frozenset()),
    "command": ("", frozenset()),
    "builtin": ("", frozenset()),
    "exec": ("a", frozenset()),
    "busybox": ("", frozenset()),
    "toybox": ("", frozenset()),
    "catchsegv": ("", frozenset()),
    "xvfb-run": ("nsfe", frozenset({"--server-num", "--server-args", "--auth-file", "--error-file"})),
    "dbus-run-session": ("", frozenset({"--config-file"})),
    "noglob": ("", frozenset()),
    "nocorrect": ("", frozenset()),
    "strace": ("eoPpsuEIab", frozenset()),
    "ltrace": ("eoPpsuEna", frozenset()),
    "valgrind": ("", frozenset()),
    "torsocks": ("", frozenset()),
    "proxychains": ("f", frozenset()),
    "proxychains4": ("f", frozenset()),
    "firejail": ("", frozenset()),
    "systemd-run": ("pEuHMr", frozenset({"--unit", "--property", "--setenv", "--uid", "--gid", "--host",
                                          "--machine", "--slice", "--description", "--working-directory",
                                          "--nice", "--service-type", "--path-property", "--socket-property",
                                          "--timer-property", "--on-active", "--on-boot", "--on-startup",
                                          "--on-unit-active", "--on-unit-inactive", "--on-calendar",
                                          "--on-clock-change", "--on-timezone-change"})),
    "fakeroot": ("lsib", frozenset({"--lib", "--faked", "--fd-base"})),
    "flatpak-spawn": ("", frozenset({"--forward-fd", "--directory", "--env", "--unset-env",
                                     "--app-path", "--usr-path", "--sandbox-expose",
                                     "--sandbox-expose-ro", "--sandbox-flag"})),
    "numactl": ("CNmipP", frozenset({"--physcpubind", "--cpunodebind", "--membind", "--interleave",
                                     "--preferred", "--preferred-many"})),
    "cpulimit": ("lpe", frozenset({"--limit", "--pid", "--exe"})),
    "prlimit": ("p", frozenset({"--pid"})),
    "faketime": ("", frozenset()),
    "eatmydata": ("", frozenset()),
}

_GROUPS: tuple[tuple[str, frozenset[str] | tuple[str, ...]], ...] = (
    # filesystem: deletes, moves, copies, links, writes, modes
    ("fs.rm", (
        "del", "rimraf", "rm", "rmdir", "shred", "srm", "trash", "trash-put", "unlink", "wipe")),
    ("fs.mv", ("mv",)),
    ("fs.copy", ("cp", "install")),
    ("remote.transfer", ("rsync", "scp")),     # then fs.copy
    ("remote.sftp", ("sftp",)), ("remote.rclone", ("rclone",)), ("remote.lftp", ("lftp",)),
    ("fs.link", ("link", "ln")),
    ("fs.truncate", ("truncate",)),
    ("fs.tee", ("tee",)),
    ("fs.dd", ("dd",)),
    ("fs.touch", (
        "csplit", "ed", "ex", "mkdir", "mkfifo", "mknod", "patch", "split", "touch")),
    ("fs.chmod", ("chattr", "chgrp", "chmod", "chown", "setfacl")),
    # archives
    ("archive.tar", ("tar",)),
    ("archive.archive", ("7z", "7za", "ar", "cpio", "pax", "rar", "zip")),
    ("archive.unzip", ("bsdtar", "unzip")),
    # text tools and editors
    ("text.sed", ("gsed", "sed")),
    ("text.awk", ("awk", "gawk", "mawk", "nawk")),
    ("text.editor", (
        "emacs", "gvim", "less", "man", "micro", "more", "most", "nano", "nvim", "pico", "vi",
        "view", "vim", "vimdiff")),
    ("text.sort", ("sort",)),
    ("text.uniq", ("uniq",)),
    ("text.yq", ("yq",)),
    ("text.jq", ("jq", "gojq", "jaq")),
    ("text.grep", (
        "ack", "ag", "egrep", "fgrep", "git-grep", "grep", "rg", "zgrep")),
    # commands built from found or piped items
    ("find.find", ("find",)),
    ("find.xargs", ("xargs",)),
    ("find.parallel", ("parallel",)),
    # wrappers and shells: what they run is judged as if typed
    ("wrappers.shell", SHELLS),
    ("wrappers.env", ("env",)),
    ("wrappers.wrapper", (
        "builtin", "busybox", "toybox", "caffeinate", "catchsegv", "chronic", "chrt", "dbus-run-session",
        "exec", "firejail", "ionice", "ltrace", "nice", "nocorrect", "noglob", "nohup",
        "proxychains", "proxychains4", "setsid", "stdbuf", "strace", "systemd-run", "taskset",
        "time", "timeout", "torsocks", "unbuffer", "valgrind", "xvfb-run", "fakeroot", "flatpak-spawn",
        "numactl", "cpulimit", "prlimit", "faketime", "eatmydata")),
    ("wrappers.sg", ("sg",)),
    ("wrappers.newgrp", ("newgrp",)),
    ("wrappers.entr", ("entr",)),
    ("debug.gdb", ("gdb", "gdb-multiarch", "cgdb")),
    ("debug.lldb", ("lldb",)),
    ("wrappers.command", ("command",)),
    ("wrappers.flock", ("flock",)),
    ("wrappers.watch", ("watch",)),
    ("wrappers.script", ("script",)),
    ("wrappers.evaluate", ("eval",)),
    ("wrappers.source", (".", "source")),
    ("wrappers.trap", ("trap",)),
    ("wrappers.alias", ("alias",)),
    ("wrappers.coproc", ("coproc",)),
    # terminal multiplexers: what they start or type is judged as commands
    ("mux.tmux", ("tmux", "byobu", "byobu-tmux")),
    ("mux.screen", ("screen", "byobu-screen")),
    ("mux.dtach", ("dtach", "abduco")),
    ("mux.terminal", (
        "xterm", "uxterm", "urxvt", "rxvt", "rxvt-unicode", "gnome-terminal", "konsole", "xfce4-terminal",
        "mate-terminal", "lxterminal", "terminator", "tilix", "alacritty", "kitty", "wezterm", "foot", "st",
        "x-terminal-emulator", "sakura", "qterminal", "kgx", "ptyxis", "zellij", "terminology", "cool-retro-term")),
    # interpreters
    ("interp.python", ("python",)),
    ("interp.node", ("deno", "node", "nodejs", "ts-node", "tsx")),
    ("interp.ruby", ("ruby",)),
    ("interp.php", ("php",)),
    ("interp.perl", ("perl",)),
    ("interp.other_interp", (
        "R", "Rscript", "clisp", "dotnet-script", "elixir", "erl", "expect", "ghci", "gnuplot",
        "groovy", "guile", "irb", "jjs", "jrunscript", "jshell", "julia", "lua", "luajit",
        "osascript", "pry", "racket", "runghc", "sbcl", "scala", "swipl", "tclsh", "wish")),
    # containers and clusters
    ("containers.docker", ("docker", "nerdctl", "podman")),
    ("containers.kubectl", ("kubectl",)),
    ("containers.compose", ("docker-compose", "podman-compose")),
    # network and hosted APIs
    ("net.http", (
        "aria2c", "curl", "curlie", "elinks", "grpcurl", "http", "httpie", "https", "hurl",
        "links", "lynx", "w3m", "websocat", "wget", "wscat", "xh", "xhs")),
    ("net.socket", ("nc", "ncat", "netcat", "openssl", "socat", "telnet")),
    ("net.ssh", ("ssh",)),
    ("net.dns", ("dig", "host", "nslookup", "drill")),
    ("net.gh", ("gh",)),
    ("generic.forge", ("glab", "hub")),
    ("net.serve", ("http-server", "serve", "live-server", "darkhttpd", "webfsd", "static-web-server",
                   "miniserve", "simple-http-server")),
    # databases
    ("db.sql", (
        "beeline", "bq", "clickhouse", "clickhouse-client", "cockroach", "cqlsh", "db2", "duckdb",
        "isql", "litecli", "mariadb", "mssql-cli", "mycli", "mysql", "pgcli", "presto", "psql",
        "snowsql", "spanner-cli", "sqlcmd", "sqlite", "sqlite3", "sqlplus", "trino", "usql",
        "vsql")),
    ("db.mongo", ("mongo", "mongosh")),
    ("db.redis", ("redis-cli",)),
    ("db.restore", ("pg_restore", "mongoimport", "mongorestore")),
    ("db.dropdb", ("dropdb", "dropuser")),
    ("db.mysqladmin", ("mysqladmin",)),
    ("db.rails", ("rails",)),
    ("db.django", ("django-admin",)),
    # the environment and secrets
    ("env.printer", (
        "cowsay", "echo", "logger", "notify-send", "print", "printf", "say", "wall")),
    ("env.printenv", ("printenv",)),
    ("env.set_builtin", ("set",)),
    ("env.export", ("declare", "export", "readonly", "typeset")),
    # the system: privilege, power, disks, processes, shell builtins
    ("system.priv", (
        "calife", "capsh", "chroot", "doas", "ksu", "machinectl", "nsenter", "pkexec", "run0",
        "runuser", "setpriv", "su", "sudo", "sudoedit", "unshare")),
    ("system.power", ("halt", "poweroff", "reboot", "shutdown", "telinit")),
    ("system.disk", (
        "badblocks", "blkdiscard", "cfdisk", "cryptsetup", "debugfs", "dmsetup", "e2fsck", "fdisk",
        "fsck", "gdisk", "hdparm", "losetup", "lvremove", "mdadm", "mke2fs", "mkfs", "mkswap",
        "parted", "pvremove", "sfdisk", "sgdisk", "tune2fs", "vgremove", "wipefs", "zpool")),
    ("system.system", ("at", "batch", "crontab")),
    ("signals.kill", ("kill", "killall", "pkill", "killall5", "skill", "snice", "fuser")),
    ("system.umask", ("umask",)),
    ("system.ps", ("ps",)),
    ("system.data", (
        ":", "[", "[[", "apropos", "basename", "bg", "break", "cal", "cd", "continue", "date",
        "dirname", "dirs", "disown", "enable", "exit", "expr", "factor", "false", "fg",
        "getent", "getopts", "hash", "help", "info", "jobs", "let", "local", "mapfile",
        "numfmt", "pgrep", "pidof", "ping", "popd", "pushd", "pwd", "read",
        "readarray", "return", "seq", "shift", "shopt", "sleep", "stat", "test", "times", "tldr",
        "tput", "traceroute", "true", "type", "ulimit", "unalias", "unset", "wait", "whatis",
        "whereis", "which", "yes")),
    # build tools and package runners
    ("build.make", ("gmake", "make")),
    ("build.runner", (
        "bun", "bundle", "bunx", "conda", "direnv", "dotenv", "hatch", "mamba", "npx", "pdm",
        "pipenv", "pixi", "pnpm", "pnpx", "poetry", "rye", "uv", "uvx", "yarn")),
    ("build.npm", ("npm",)),
    ("runs.runs", ("pytest", "py.test", "just", "rake", "fd", "fdfind", "dc", "daemonize", "start-stop-daemon")),
    ("generic.package_tool", ("pip", "pip3", "pipx", "gem", "cargo", "go", "composer", "micromamba")),
    # git
    ("git.git", ("git",)),
    # zen itself (an agent is never a human)
    ("zen.zen", ("zen",)),
    # everything else: run, with path arguments checked (named here when a handler once existed)
    ("generic.generic", ("base64",)),
)

HANDLERS: dict[str, str] = {name: ref for ref, names in _GROUPS for name in names}


# programs whose arguments are names or addresses sent to other hosts, never a credential's place
# (a secret among them is exfiltration: a DNS query for $KEY.example, a ping, a raw socket)
SENDS_ARGUMENTS = frozenset({
    "dig", "host", "nslookup", "drill", "ping", "ping6", "traceroute", "tracepath", "whois", "nc",
    "ncat", "netcat", "socat", "telnet"})
# programs that act by the name they were run as: a link to them keeps its own name
MULTICALL = frozenset({"busybox", "toybox", "coreutils"})
# the first bytes of a script that say which program it is: zen's console script (or a copy of
# it under another name) starts zen's CLI
_SCRIPT_MARKERS = ((b"from zen.__main__ import", "zen"), (b"from zen.cli", "zen"),
                   (b"import zen.__main__", "zen"), (b"run_module('zen'", "zen"), (b'run_module("zen"', "zen"))


def script_identity(head: bytes) -> str | None:
    """The program a script file is, by its first bytes (a shebang, then a known marker)."""
    if not head.startswith(b"#!"):
        return None
    for marker, program in _SCRIPT_MARKERS:
        if marker in head:
            return program
    return None


def fallback(name: str) -> str:
    """The handler of a program the table does not name."""
    if PYTHONS.match(name):
        return "interp.python"
    if PIPS.match(name):
        return "generic.package_tool"
    if name.startswith("mkfs."):
        return "system.disk"
    return "generic.generic"

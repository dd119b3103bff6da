"""The analyser: what every simple command (after unwrapping) would do, judged by the policy.

The bash walker (shell.py) emits every simple command; `Analyser.on_cmd` checks its redirects and
hands its argv to `leaf()`, which unwraps launchers (bash -c, env, xargs, find -exec, ssh, ...)
recursively and dispatches to a per-program handler. Handlers report through `deny()` (raises
`Denied`), `need()` (an approval) and the path checks. Code handed to interpreters and databases
goes through codescan.py, which calls back into the same analyser.

Lean on purpose (imported by the hook): stdlib + tree-sitter + zen.guard only.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from fnmatch import fnmatchcase
from typing import Any

from zen.guard import codescan, defaults
from zen.guard.api import ALLOW, APPROVAL, DENY, Context, Decision
from zen.guard.paths import (
    SAFE_DEVICES,
    Resolver,
    Target,
    credential_hit,
    glob_hits_dot,
    norm,
    strictly_under,
    under,
    zen_protected,
)
from zen.guard.policy import Policy, Rule
from zen.guard.shell import FOUND, UNK, Cmd, ShellError, State, Walker, Word, is_secret_name, lit

MAX_LEAF_DEPTH = 12


class Denied(Exception):
    def __init__(self, decision: Decision) -> None:
        super().__init__(decision.reason)
        self.decision = decision


# ---------------------------------------------------------------------------------------------
# program tables

SHELLS = frozenset({"sh", "bash", "zsh", "dash", "ksh", "mksh", "ash", "fish", "csh", "tcsh", "rbash",
                    "yash", "posh", "elvish", "nu", "xonsh", "pwsh", "powershell"})
PRIVILEGE = frozenset({"sudo", "doas", "su", "pkexec", "run0", "sudoedit", "ksu", "calife", "machinectl",
                       "runuser", "chroot", "nsenter", "unshare", "capsh", "setpriv"})
DISK_TOOLS = frozenset({"mkfs", "wipefs", "fdisk", "sfdisk", "cfdisk", "parted", "gdisk", "sgdisk",
                        "mkswap", "blkdiscard", "cryptsetup", "badblocks", "mke2fs", "tune2fs",
                        "e2fsck", "fsck", "debugfs", "hdparm", "zpool", "lvremove", "vgremove",
                        "pvremove", "dmsetup", "losetup", "mdadm"})
PYTHONS = re.compile(r"^(python|pypy)[0-9.]*$")
DB_SQL = frozenset({"psql", "mysql", "mariadb", "sqlite3", "sqlite", "duckdb", "clickhouse-client",
                    "clickhouse", "sqlcmd", "cockroach", "pgcli", "mycli", "litecli", "usql",
                    "snowsql", "bq", "trino", "presto", "beeline", "cqlsh", "isql", "sqlplus",
                    "db2", "vsql", "mssql-cli", "spanner-cli"})
MONGO = frozenset({"mongo", "mongosh"})
HTTP_CLIENTS = frozenset({"curl", "wget", "http", "https", "httpie", "xh", "xhs", "aria2c", "lynx",
                          "w3m", "links", "elinks", "curlie", "grpcurl", "websocat", "wscat", "hurl"})
SOCKET_CLIENTS = frozenset({"nc", "ncat", "netcat", "telnet", "socat", "openssl"})
DECODERS = frozenset({"base64", "base32", "basenc", "xxd", "od", "printf", "tr", "rev", "openssl",
                      "gzip", "gunzip", "zcat", "bzip2", "bunzip2", "xz", "unxz", "zstd", "uudecode",
                      "curl", "wget", "echo", "cat", "perl", "python", "python3", "node", "ruby",
                      "gpg", "sed", "awk", "iconv", "recode", "fetch", "http", "xh", "nc", "ncat"})
PRINTERS = frozenset({"echo", "printf", "print", "logger", "wall", "cowsay", "say", "notify-send"})
PACKAGE_RUNNERS = {  # program: words to skip before the real program
    "npx": 0, "bunx": 0, "pnpx": 0, "uvx": 0, "yarn": 0, "pnpm": 0, "bun": 0, "poetry": 1,
    "pipenv": 1, "uv": 1, "bundle": 1, "pdm": 1, "hatch": 1, "rye": 1, "conda": 1, "mamba": 1,
    "pixi": 1, "dotenv": 0, "direnv": 1,
}
# option letters / long names that take a value, for the wrappers
_WRAPPER_VALUE_OPTS: dict[str, tuple[str, frozenset[str]]] = {
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
    "catchsegv": ("", frozenset()),
    "xvfb-run": ("nsfe", frozenset({"--server-num", "--server-args", "--auth-file", "--error-file"})),
    "dbus-run-session": ("", frozenset({"--config-file"})),
    "noglob": ("", frozenset()),
    "nocorrect": ("", frozenset()),
    "strace": ("eoPpsuEIab", frozenset()),
    "ltrace": ("eoPpsuEna", frozenset()),
    "valgrind": ("", frozenset()),
    "gdb": ("", frozenset()),
    "torsocks": ("", frozenset()),
    "proxychains": ("f", frozenset()),
    "proxychains4": ("f", frozenset()),
    "firejail": ("", frozenset()),
    "systemd-run": ("pEu", frozenset({"--unit", "--property", "--setenv", "--uid", "--gid"})),
}
_GIT_SMUGGLE_KEYS = re.compile(
    r"^(alias\..*|core\.(sshcommand|pager|editor|hookspath|fsmonitor|askpass|gitproxy|worktree|"
    r"attributesfile|excludesfile)|pager\..*|diff\..*\.(textconv|command)|diff\.external|"
    r"merge\..*\.driver|filter\..*|credential\..*|sequence\.editor|gpg\..*program|"
    r"gpg\.program|uploadpack\..*|receive\..*|protocol\..*allow|clean\.requireforce|"
    r"include\..*|includeif\..*|http\..*proxy.*|remote\..*\.(receivepack|uploadpack|proxy)|"
    r"ssh\.variant|init\.templatedir|web\.browser|browser\..*|man\..*|instaweb\..*|"
    r"difftool\..*|mergetool\..*|interactive\.difffilter|color\.pager|log\.showsignature)$", re.I)
_EXEC_ENV_VARS = frozenset({
    "PAGER", "GIT_PAGER", "MANPAGER", "EDITOR", "VISUAL", "GIT_EDITOR", "GIT_SEQUENCE_EDITOR",
    "GIT_SSH_COMMAND", "GIT_SSH", "GIT_EXTERNAL_DIFF", "GIT_ASKPASS", "SSH_ASKPASS", "SUDO_ASKPASS",
    "PROMPT_COMMAND", "GIT_PROXY_COMMAND", "LESSOPEN", "LESSCLOSE", "BROWSER",
})
_OPAQUE_ENV_VARS = frozenset({
    "LD_PRELOAD", "LD_LIBRARY_PATH", "LD_AUDIT", "DYLD_INSERT_LIBRARIES", "BASH_ENV", "ENV",
    "PERL5OPT", "PERL5LIB", "NODE_OPTIONS", "RUBYOPT", "PYTHONSTARTUP", "PYTHONPATH",
    "GIT_CONFIG_PARAMETERS", "GIT_CONFIG_COUNT", "GIT_CONFIG_GLOBAL", "GIT_CONFIG_SYSTEM",
    "GIT_DIR", "GIT_WORK_TREE", "GIT_EXEC_PATH", "GIT_TEMPLATE_DIR", "SHELLOPTS", "BASHOPTS",
    "IFS", "PS4", "ZDOTDIR", "HISTFILE", "PATH",
})
# (value-taking short options, value-taking long options) of commands whose non-option
# arguments are paths
_CLOUD_CLIS = frozenset({"kubectl", "helm", "terraform", "tofu", "pulumi", "aws", "gcloud", "gsutil", "az",
                         "gh", "glab", "doctl", "flyctl", "fly", "heroku", "vercel", "netlify", "firebase",
                         "supabase", "wrangler", "eksctl", "oc", "linode-cli", "hcloud", "railway"})
_DESTROY_WORDS = frozenset({"delete", "destroy", "rm", "rb", "uninstall", "drain", "prune", "purge",
                            "apps:destroy", "remove", "terminate", "deprovision", "teardown"})
READ_ONLY = frozenset(defaults.READ_ONLY_COMMANDS) - {"ip", "ifconfig", "reset", "top", "htop",
                                                      "history", "printenv"}


def _bundled(flag: str, letters: str) -> bool:
    """A short option cluster (-xdf) containing any of `letters`."""
    return len(flag) > 1 and flag[0] == "-" and flag[1] != "-" and any(c in flag[1:] for c in letters)


def split_opts(args: list[Word], short_val: str = "", long_val: frozenset[str] | set[str] = frozenset(),
               stop_first: bool = False) -> tuple[list[tuple[str, Word | None]], list[Word]]:
    """Options (with their values) and positional words. `stop_first`: the first positional
    ends option parsing (wrappers: what follows is the command)."""
    opts: list[tuple[str, Word | None]] = []
    pos: list[Word] = []
    i = 0
    while i < len(args):
        w = args[i]
        t = w.text
        if t == "--" and w.known:
            pos.extend(args[i + 1:])
            break
        if w.known and t.startswith("--") and len(t) > 2:
            name, eq, val = t.partition("=")
            if eq:
                opts.append((name, lit(val)))
            elif name in long_val and i + 1 < len(args):
                opts.append((name, args[i + 1]))
                i += 1
            else:
                opts.append((name, None))
        elif w.known and t.startswith("-") and len(t) > 1:
            j = 1
            while j < len(t):
                c = t[j]
                if c in short_val:
                    if j + 1 < len(t):
                        opts.append(("-" + c, lit(t[j + 1:])))
                    elif i + 1 < len(args):
                        opts.append(("-" + c, args[i + 1]))
                        i += 1
                    else:
                        opts.append(("-" + c, None))
                    break
                opts.append(("-" + c, None))
                j += 1
        else:
            pos.append(w)
            if stop_first:
                pos.extend(args[i + 1:])
                break
        i += 1
    return opts, pos


def _has(opts: list[tuple[str, Word | None]], *names: str) -> bool:
    return any(o in names for o, _ in opts)


def _val(opts: list[tuple[str, Word | None]], *names: str) -> Word | None:
    for o, v in opts:
        if o in names:
            return v
    return None


class _Bound:
    """The class-wide handler table, seen as methods bound to one Analyser."""

    __slots__ = ("obj", "table")

    def __init__(self, obj: Any, table: dict[str, Any]) -> None:
        self.obj = obj
        self.table = table

    def get(self, name: str, default: Any = None) -> Any:
        fn = self.table.get(name)
        return default if fn is None else fn.__get__(self.obj)

    def __getitem__(self, name: str) -> Any:
        return self.table[name].__get__(self.obj)

    def __contains__(self, name: str) -> bool:
        return name in self.table


class Analyser:
    """One decision's worth of analysis (not reused across calls)."""

    _table: dict[str, Any] | None = None

    def __init__(self, ctx: Context, policy: Policy) -> None:
        self.ctx = ctx
        self.policy = policy
        self.level = ctx.level or "suggest"
        self.observe = self.level == "observe"
        self.user_home = norm(ctx.user_home, "/") if ctx.user_home else None
        self.home = norm(ctx.home, "/") if ctx.home else None
        self.cwd = norm(ctx.cwd or "/", "/") or "/"
        self.resolver = Resolver(ctx.realpath)
        wt = norm(ctx.worktree, self.cwd) if ctx.worktree else None
        self.worktree = wt
        roots = [wt] if wt else [self.cwd]
        if ctx.realpath is not None:
            try:
                r = ctx.realpath(roots[0])
                if r not in roots:
                    roots.append(r)
            except (OSError, ValueError):
                pass
        self.roots = roots
        self.pending: Decision | None = None
        self.report: Decision | None = None
        self._protected: Rule | None = None
        if policy.protected_paths:
            self._protected = getattr(policy, "_protected_rule", None)
            if self._protected is None:
                self._protected = Rule.from_dict({"id": "protected", "reason": "", "decision": "deny",
                                                  "match": {"path": list(policy.protected_paths)}})
                policy._protected_rule = self._protected  # type: ignore[attr-defined]
        self.rules = [r for r in policy.rules if r.applies(ctx.domain, self.level)]
        self.text = ""
        self.st = State((self.cwd,))
        self.cmd: Cmd | None = None
        self.depth = 0
        self.env = dict(ctx.env) if ctx.env else {}
        table = type(self)._table
        if table is None:
            # the name -> handler table is the same for every call: build it once per process
            self._fns = {}
            self._register()
            table = type(self)._table = {k: v.__func__ for k, v in self._fns.items()}
        self._fns = _Bound(self, table)

    # -- outcomes ---------------------------------------------------------------------------------
    def deny(self, rule: str, reason: str) -> None:
        raise Denied(Decision(DENY, rule, reason))

    def need(self, switch: str, rule: str, reason: str) -> None:
        if self.policy.require_approval.get(switch) and self.pending is None:
            self.pending = Decision(APPROVAL, rule, reason)

    def beyond(self, rule: str, what: str) -> None:
        """An action beyond the worktree (e.g. a push): denied at suggest, allowed and reported
        at act-and-report, allowed at autonomous (DESIGN section 6)."""
        if self.level in ("observe", "suggest"):
            self.deny(f"level.{self.level}", f"{what}: at autonomy level {self.level} work stays in the "
                      "worktree and zen harvests it for review (act-and-report allows this, reported)")
        if self.level == "act-and-report" and self.report is None:
            self.report = Decision(ALLOW, rule, f"{what}: allowed at act-and-report and reported")

    def ro(self, what: str) -> None:
        """A step that is not read-only: denied at observe."""
        if self.observe:
            self.deny("level.observe", f"observe level (or the kill switch): only read-only commands "
                      f"run, and {what} is not one")

    # -- entry points -------------------------------------------------------------------------------
    def bash(self, command: str) -> None:
        self.text = command
        self.walk(command, State((self.cwd,)), 0)

    def walk(self, src: str, st: State, depth: int) -> None:
        if depth > 6:
            self.deny("shell.depth", "shells nested too deep to follow")
        if UNK in src:
            self.deny("opaque.exec", "runs a script whose text is only known at run time")
        w = Walker(self._sink(depth), self.user_home, self.env, depth)
        w.script(src, st)

    def _sink(self, depth: int) -> Callable[[Cmd], None]:
        def sink(cmd: Cmd) -> None:
            self.on_cmd(cmd, depth)
        return sink

    # -- simple commands ----------------------------------------------------------------------------
    def on_cmd(self, cmd: Cmd, depth: int) -> None:
        st = cmd.state
        saved = self.st, self.cmd
        self.st, self.cmd = st, cmd
        try:
            for name, value in cmd.assigns:
                self.assignment(name, value, st, depth)
            for target, _append in cmd.writes:
                self.write_word(target, st, "redirects output into")
            for src in cmd.reads:
                self.read_word(src, st)
            if cmd.kind == "declaration":
                self.declaration(cmd)
            elif cmd.kind == "simple" and cmd.words:
                self.leaf(cmd.words, st, cmd, depth)
        finally:
            self.st, self.cmd = saved

    def assignment(self, name: str, value: Word, st: State, depth: int) -> None:
        if name in _EXEC_ENV_VARS and value.text:
            self.walk(value.text, st.copy(cwds=st.cwds), depth + 1)
        elif name in _OPAQUE_ENV_VARS and name not in ("PATH", "PYTHONPATH", "IFS") and value.text:
            self.deny("opaque.env", f"setting {name} makes programs load code the guardian cannot see")
        elif name == "IFS" and value.text not in ("", "\n", " \t\n", "\t", ","):
            self.deny("opaque.env", "changing IFS reshapes how later words split")

    def declaration(self, cmd: Cmd) -> None:
        words = cmd.words
        name = words[0].text if words else ""
        flags = [w.text for w in words[1:] if w.text.startswith("-")]
        names = [w for w in words[1:] if not w.text.startswith("-")]
        if name in ("export", "declare", "typeset", "readonly", "local") and not names:
            if name in ("export", "readonly") or any("p" in f or "x" in f for f in flags) or not flags:
                self.deny("creds.env-dump", f"`{name}` without names prints the environment")
        if any("p" in f for f in flags) and any(is_secret_name(n.text) for n in names):
            self.deny("creds.secret-echo", f"`{name} -p` prints a secret-looking variable")
        self.ro(f"`{name}`") if name != "local" and names else None

    # -- leaf: one program with its argv --------------------------------------------------------
    def leaf(self, words: list[Word], st: State, cmd: Cmd | None, depth: int) -> None:
        if depth > MAX_LEAF_DEPTH:
            self.deny("shell.depth", "wrappers nested too deep to follow")
        if not words:
            return
        head = words[0]
        if not head.known:
            self.deny("shell.unresolved-command", f"the program name `{head.raw}` is only known at run "
                      "time")
        if head.subst and head.raw.lstrip("\"'").startswith(("$(", "`")):
            pass  # resolved statically by the walker (e.g. $(echo rm)): judged as what it is
        prog = head.text
        name = prog.rsplit("/", 1)[-1] if "/" in prog else prog
        args = words[1:]
        if not name or (name.startswith("-") and name != "-"):
            self.deny("shell.unresolved-command", f"cannot tell which program `{prog}` runs")
        self.policy_rules(name, args, st, cmd)
        fn = self._fns.get(name)
        if fn is None:
            if PYTHONS.match(name):
                fn = self._fns["python"]
            elif name.startswith("mkfs."):
                fn = self._fns["mkfs"]
            elif name.startswith("python") or name.startswith("pip"):
                fn = self.generic
            else:
                fn = self.generic
        fn(name, args, st, cmd, depth)

    # -- policy rules ---------------------------------------------------------------------------------
    def policy_rules(self, name: str, args: list[Word], st: State, cmd: Cmd | None) -> None:
        if not self.rules:
            return
        texts = [a.text for a in args]
        paths: list[str] | None = None   # resolved once, when the first rule with a path asks
        for rule in self.rules:
            m = rule.match
            if "tool" in m:
                continue
            if "command" in m and not any(fnmatchcase(name, g) for g in m["command"]):
                continue
            if "subcommand" in m:
                posw = [t for t in texts if not t.startswith("-")]
                if not any(posw[:len(s.split())] == s.split() for s in m["subcommand"]):
                    continue
            if "args" in m and not any(fnmatchcase(t, g) for t in texts for g in m["args"]):
                continue
            if "flags" in m and not any(self._flag_present(texts, f) for f in m["flags"]):
                continue
            if "host" in m:
                hosts = [h for t in texts for h in [_host_of(t)] if h]
                if not any(fnmatchcase(h, g) for h in hosts for g in m["host"]):
                    continue
            if "path" in m:
                if paths is None:
                    paths = []
                    for t in texts:
                        tg = self.resolver.target(t, st.cwd, st.links)
                        if tg is not None:
                            paths.append(tg.path)
                    if cmd is not None:
                        for w, _ in cmd.writes:
                            tg = self.resolver.target(w.text, st.cwd, st.links)
                            if tg is not None:
                                paths.append(tg.path)
                if not any(rule.path_matches(p, self.worktree or self.cwd, self.user_home) for p in paths):
                    continue
            if rule.text_res and not any(rx.search(self.text) for rx in rule.text_res):
                continue
            self.rule_hit(rule)

    def rule_hit(self, rule: Rule) -> None:
        if rule.decision == "approval":
            if self.pending is None:
                self.pending = Decision(APPROVAL, rule.id, rule.label)
        else:
            self.deny(rule.id, rule.label)

    @staticmethod
    def _flag_present(texts: list[str], flag: str) -> bool:
        for t in texts:
            if t == flag or t.startswith(flag + "="):
                return True
            if len(flag) == 2 and flag[0] == "-" and flag[1] != "-" and _bundled(t, flag[1]) and \
                    not t.startswith("--"):
                return True
        return False

    # -- paths ------------------------------------------------------------------------------------------
    def target(self, w: Word, st: State, follow_last: bool = False) -> Target | None:
        return self.resolver.target(w.text, st.cwd, st.links, follow_last)

    def targets(self, w: Word, st: State, follow_last: bool = False) -> list[Target] | None:
        """The Target of `w` from every working directory the script may be in (None: unknown)."""
        if len(st.cwds) == 1 or w.text.startswith("/"):
            t = self.resolver.target(w.text, st.cwds[0] if len(st.cwds) == 1 else None, st.links, follow_last)
            return None if t is None else [t]
        out = []
        for c in st.cwds:
            t = self.resolver.target(w.text, c, st.links, follow_last)
            if t is None:
                return None
            out.append(t)
        return out

    def delete_word(self, w: Word, st: State, what: str) -> None:
        if w.text in ("", "-") and w.known:
            return
        ts = self.targets(w, st)
        if ts is None:
            self.deny("fs.unresolved-target", f"{what} a path only known at run time ({w.raw})")
        for t in ts:
            self.check(t, "delete", what, w)
        self.need("file_deletes", "approval.file-delete", f"{what} {w.text}")

    def write_word(self, w: Word, st: State, what: str) -> None:
        if w.known and (w.text in SAFE_DEVICES or w.text.startswith(("/dev/fd/", "/proc/self/fd/"))
                        or w.text == "-"):
            return
        ts = self.targets(w, st, follow_last=True)
        if ts is None:
            self.deny("fs.unresolved-target", f"{what} a path only known at run time ({w.raw})")
        for t in ts:
            if t.path.startswith("/dev/") and t.path not in SAFE_DEVICES and not t.path.startswith("/dev/fd/"):
                if t.path.startswith(("/dev/tcp/", "/dev/udp/")):
                    self.deny("net.raw-socket", f"{what} a network socket ({t.path})")
                self.deny("disk.device-write", f"{what} a device ({t.path})")
            self.check(t, "write", what, w)
        self.ro(f"writing {w.raw}")

    def read_word(self, w: Word, st: State, recursive: bool = False) -> None:
        ts = self.targets(w, st, follow_last=True) or [None]
        for t in ts:
            if t is not None and t.path.startswith(("/dev/tcp/", "/dev/udp/")):
                self.deny("net.raw-socket", f"opens a network socket ({t.path})")
            hit = credential_hit(t.path if t is not None else None, w.text, self.user_home,
                                 self.policy.credential_paths[len(defaults.CREDENTIAL_PATHS):],
                                 recursive or bool(t and t.children))
            if hit is not None:
                break
        if hit is not None:
            self.deny("creds.read", f"reads a credential store ({hit}); credentials never pass "
                      "through an agent")

    def check(self, t: Target, op: str, what: str, w: Word | None = None) -> None:
        """Deletes/writes: the guardian's own files, the worktree root, .git, .zen, outside."""
        path = t.path
        subtree = op == "delete"
        label = w.raw if w is not None else path
        inside = any(under(path, r) for r in self.roots)
        if t.children:
            prot = zen_protected(path, self.home, self.user_home, True) if (
                inside and self._contains_protected(path)) else zen_protected(path, self.home, self.user_home, False)
        else:
            prot = zen_protected(path, self.home, self.user_home, subtree and inside)
        if prot is not None:
            self.deny("self.protect", f"{what} {label}: {prot} is not the agent's to change")
        if self._protected is not None and self._protected.path_matches(path, self.worktree or self.cwd,
                                                                        self.user_home):
            self.deny("policy.protected-path", f"{what} {label}: the policy protects this path")
        for root in self.roots:
            if path == root and not t.children:
                if op == "delete":
                    self.deny("fs.worktree-root", f"{what} the worktree itself ({label})")
                return
            if under(path, root):
                rel = path[len(root):].lstrip("/")
                first = rel.split("/", 1)[0] if rel else ""
                if t.children and not rel:
                    for special in (".git", ".zen"):
                        if glob_hits_dot(t.pattern or "*", special):
                            self.deny("fs.git-dir" if special == ".git" else "fs.zen-dir",
                                      f"{what} {label}, which reaches the worktree's {special}")
                    return
                if first == ".git":
                    self.deny("fs.git-dir", f"{what} the worktree's .git ({label}): that destroys "
                              "history")
                if first == ".zen":
                    self.deny("fs.zen-dir", f"{what} the worktree's .zen ({label})")
                return
        where = "the job's worktree" if self.worktree else "the current directory"
        self.deny("fs.outside-worktree", f"{what} {label}, outside {where} "
                  f"({self.worktree or self.cwd})")

    def _contains_protected(self, path: str) -> bool:
        cands = []
        if self.home:
            cands.extend(self.home.rstrip("/") + "/" + p for p in ("policy", "control", "approvals",
                                                                  "evidence", "incidents", "zen.yaml",
                                                                  "jobs", "logs"))
        if self.user_home:
            cands.extend([self.user_home + "/.claude", self.user_home + "/.claude.json"])
        for root in self.roots:
            cands.append(root + "/.claude")
        return any(under(c, path) for c in cands) or path.endswith("/.claude")

    # -- codescan callbacks -------------------------------------------------------------------------------
    def argv(self, argv: list[str], where: str) -> None:
        if not argv:
            return
        self.leaf([lit(a) for a in argv], self.st, None, self.depth + 1)

    def shell_string(self, text: str, where: str) -> None:
        self.walk(text, self.st.copy(vars={}), self.depth + 1)

    def literal(self, text: str, where: str) -> None:
        if "://" in text or "." in text:
            for m in _URL_IN_TEXT.finditer(text):
                self.host_check(m.group(0), f"{where}: ")

    def sql(self, text: str, where: str) -> None:
        bad = codescan.destructive_sql(text)
        if bad:
            self.deny("sql.destructive", f"{where}: destructive SQL ({bad})")

    def py_mode(self, mode: Any, where: str) -> None:
        if not isinstance(mode, int):
            self.deny("perm.unresolved", f"{where}: sets a file mode the guardian cannot resolve")
        self.mode_int(mode, where)

    def py_net(self, fn: str, values: list[Any], where: str) -> None:
        self.ro(f"{where}: a network call")
        urls = [v for v in values if isinstance(v, str) and ("://" in v or _looks_host(v))]
        for u in urls:
            self.host_check(u, f"{where}: ")
        last = fn.rsplit(".", 1)[-1].lower()
        if not urls and last in ("get", "post", "put", "patch", "delete", "head", "options", "request",
                                 "urlopen", "stream", "fetch", "send", "request_url", "urlretrieve"):
            self.deny("net.unresolved-host", f"{where}: {fn}() reaches a host the guardian cannot "
                      "resolve")
        self.need("network_requests", "approval.network", f"{where}: {fn}()")

    def py_path(self, value: Any, kind: str, where: str) -> None:
        if kind == "read":
            if isinstance(value, str):
                self.read_word(lit(value), self.st)
            return
        if not isinstance(value, str):
            self.deny("fs.unresolved-target", f"{where} changes a path the guardian cannot resolve")
        self.ro(where)
        if kind == "delete":
            self.delete_word(lit(value), self.st, f"{where} deletes")
        else:
            self.write_word(lit(value), self.st, f"{where} writes")

    # -- shared checks ---------------------------------------------------------------------------------------
    def host_check(self, url: str, prefix: str = "") -> None:
        host, port, scheme = _url_host(url)
        if host is None:
            return
        if UNK in host or not host:
            self.deny("net.unresolved-host", f"{prefix}the host of {url.replace(UNK, '$…')!s} is only "
                      "known at run time")
        hit = self.policy.match_host(host, port, scheme)
        if hit is not None:
            _pattern, cat, integ = hit
            how = f"use `zen gate {integ} METHOD PATH`" if integ else \
                "declare an integration in policy/guardian.yaml and use `zen gate NAME`"
            self.deny("net.high-consequence", f"raw call to {host} ({cat}): {how}")

    def mode_int(self, mode: int, where: str) -> None:
        if mode & 0o002:
            self.deny("perm.world-writable", f"{where}: world-writable mode {oct(mode)}")
        if mode & 0o6000:
            self.deny("perm.setuid", f"{where}: setuid/setgid mode {oct(mode)}")

    def payload(self, words: list[Word], st: State, cmd: Cmd | None, depth: int) -> None:
        """Run a wrapped command (its argv)."""
        self.leaf(words, st, cmd, depth + 1)

    # -- handlers -----------------------------------------------------------------------------------------------
    def _register(self) -> None:
        f = self._fns
        for n in ("rm", "unlink", "rmdir", "shred", "srm", "rimraf", "trash", "trash-put", "del", "wipe"):
            f[n] = self.h_rm
        f["mv"] = self.h_mv
        for n in ("cp", "install", "ln", "link", "rsync", "scp"):
            f[n] = self.h_copy
        f["truncate"] = self.h_truncate
        f["tee"] = self.h_tee
        f["dd"] = self.h_dd
        for n in ("sed", "gsed"):
            f[n] = self.h_sed
        f["perl"] = self.h_perl
        for n in ("awk", "gawk", "mawk", "nawk"):
            f[n] = self.h_awk
        f["find"] = self.h_find
        f["xargs"] = self.h_xargs
        f["parallel"] = self.h_parallel
        for n in SHELLS:
            f[n] = self.h_shell
        f["env"] = self.h_env
        for n in _WRAPPER_VALUE_OPTS:
            f[n] = self.h_wrapper
        f["flock"] = self.h_flock
        f["watch"] = self.h_watch
        f["script"] = self.h_script
        f["ssh"] = self.h_ssh
        for n in ("docker", "podman", "nerdctl"):
            f[n] = self.h_docker
        f["kubectl"] = self.h_kubectl
        f["git"] = self.h_git
        for n in PRIVILEGE:
            f[n] = self.h_priv
        for n in ("chmod", "chown", "chgrp", "chattr", "setfacl"):
            f[n] = self.h_chmod
        for n in DISK_TOOLS:
            f[n] = self.h_disk
        for n in defaults.POWER_COMMANDS:
            f[n] = self.h_power
        f["python"] = self.h_python
        for n in ("node", "nodejs", "deno", "bun", "ts-node", "tsx"):
            f[n] = self.h_node
        f["ruby"] = self.h_ruby
        for n in ("php",):
            f[n] = self.h_php
        for n in ("lua", "luajit", "Rscript", "R", "julia", "osascript", "tclsh", "wish", "jshell",
                  "groovy", "scala", "elixir", "erl", "racket", "guile", "sbcl", "clisp", "swipl",
                  "gnuplot", "expect", "jrunscript", "jjs", "irb", "pry", "ghci", "runghc", "dotnet-script"):
            f[n] = self.h_other_interp
        for n in DB_SQL:
            f[n] = self.h_sql
        for n in MONGO:
            f[n] = self.h_mongo
        f["redis-cli"] = self.h_redis
        for n in HTTP_CLIENTS:
            f[n] = self.h_http
        for n in SOCKET_CLIENTS:
            f[n] = self.h_socket
        f["eval"] = self.h_eval
        for n in ("source", "."):
            f[n] = self.h_source
        f["trap"] = self.h_trap
        f["alias"] = self.h_alias
        f["printenv"] = self.h_printenv
        f["set"] = self.h_set
        for n in ("export", "declare", "typeset", "readonly"):
            f[n] = self.h_export
        for n in PRINTERS:
            f[n] = self.h_print
        f["tar"] = self.h_tar
        for n in ("zip", "7z", "7za", "rar", "cpio", "pax", "ar"):
            f[n] = self.h_archive
        for n in ("unzip", "bsdtar"):
            f[n] = self.h_unzip
        for n in ("mkdir", "touch", "mkfifo", "mknod", "ed", "ex", "patch", "split", "csplit"):
            f[n] = self.h_touch
        f["sort"] = self.h_sort
        f["uniq"] = self.h_uniq
        for n in ("yq",):
            f[n] = self.h_yq
        f["make"] = self.h_make
        f["gmake"] = self.h_make
        for n in PACKAGE_RUNNERS:
            f[n] = self.h_runner
        f["npm"] = self.h_npm
        for n in ("grep", "egrep", "fgrep", "rg", "ag", "ack", "zgrep", "git-grep"):
            f[n] = self.h_grep
        for n in defaults.DATA_ONLY_COMMANDS:
            f.setdefault(n, self.h_data)
        f["test"] = self.h_data
        f["["] = self.h_data
        f["command"] = self.h_command
        f["builtin"] = self.h_wrapper
        for n in ("cd", "pushd", "popd", "pwd", "true", "false", ":", "exit", "return", "shift",
                  "wait", "read", "unset", "shopt", "local", "let", "break", "continue", "umask",
                  "ulimit", "hash", "type", "getopts", "mapfile", "readarray", "dirs", "jobs", "bg",
                  "fg", "disown", "times", "enable"):
            f[n] = self.h_data
        for n in ("vi", "vim", "nvim", "view", "vimdiff", "gvim", "emacs", "nano", "pico", "micro",
                  "less", "more", "most", "man"):
            f[n] = self.h_editor
        f["umask"] = self.h_umask
        f["coproc"] = self.h_coproc
        f["kill"] = self.h_system
        f["pkill"] = self.h_system
        f["killall"] = self.h_system
        f["crontab"] = self.h_system
        f["at"] = self.h_system
        f["gh"] = self.h_gh
        f["rclone"] = self.h_generic_net
        f["base64"] = self.h_generic
        f["dropdb"] = self.h_dropdb
        f["dropuser"] = self.h_dropdb
        f["mysqladmin"] = self.h_mysqladmin

    # generic: unknown programs run (sandboxed by the worktree rules), their path arguments are
    # checked for credential stores
    def generic(self, name: str, args: list[Word], st: State, cmd: Cmd | None, depth: int) -> None:
        if name in self.policy.vendor_clis:
            self.deny("net.vendor-cli", f"`{name}` talks to a high-consequence service: declare an "
                      "integration and use `zen gate NAME`")
        if name in defaults.VENDOR_CLIS:
            self.deny("net.vendor-cli", f"`{name}` talks to a high-consequence service")
        self.cred_command(name, args)
        self.db_command(name, args)
        self.remote_destructive(name, args)
        if name not in READ_ONLY:
            self.ro(f"`{name}`")
        for a in args:
            t = a.text
            if t.startswith("-") and "=" in t:
                self.read_word(lit(t.split("=", 1)[1]), st)
            else:
                if a.procsub and name in SHELLS:
                    self.deny("opaque.exec", "runs a script from a process substitution")
                self.read_word(a, st)
            if "://" in t:
                self.host_check(t)
        if name in self.policy.system_commands:
            self.need("system_commands", "approval.system-command", f"`{name}` changes the system")
        if name in self.policy.network_commands or (name in defaults.NETWORK_SUBCOMMANDS and (
                not defaults.NETWORK_SUBCOMMANDS[name] or
                any(a.text in defaults.NETWORK_SUBCOMMANDS[name] for a in args[:2]))):
            self.need("network_requests", "approval.network", f"`{name}` reaches the network")

    h_generic = generic

    def remote_destructive(self, name: str, args: list[Word]) -> None:
        """Deleting cloud, cluster or hosted resources is beyond any worktree: denied."""
        if name not in _CLOUD_CLIS:
            return
        texts = [a.text for a in args]
        if "--" in texts:
            texts = texts[:texts.index("--")]
        posw = [t for t in texts if not t.startswith("-")]
        if posw[:1] in (["exec"], ["run"], ["ssh"], ["logs"], ["api"]):
            return
        for w in posw[:4]:
            if w in _DESTROY_WORDS or w.startswith(("delete-", "remove-", "terminate-", "destroy")):
                self.deny("remote.destructive", f"`{name} ... {w}` destroys resources outside the "
                          "worktree; a human does that")
        if name in ("terraform", "tofu", "pulumi") and any(a.text in ("-destroy", "--destroy") for a in args):
            self.deny("remote.destructive", f"`{name} -destroy` destroys infrastructure")

    def h_generic_net(self, name: str, args: list[Word], st: State, cmd: Cmd | None, depth: int) -> None:
        self.generic(name, args, st, cmd, depth)

    def cred_command(self, name: str, args: list[Word]) -> None:
        entries = self.policy.credential_commands.get(name)
        if not entries:
            return
        texts = [a.text for a in args]
        posw = [t for t in texts if not t.startswith("-")]
        for prefix, flags in entries:
            if prefix and posw[:len(prefix)] != prefix and texts[:len(prefix)] != prefix:
                continue
            if flags and not any(self._flag_present(texts, fl) for fl in flags):
                continue
            self.deny("creds.command", f"`{name} {' '.join(prefix)}` prints credentials")

    def db_command(self, name: str, args: list[Word]) -> None:
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
                        self.deny("sql.destructive-command", f"`{flat}` wipes a database")
                continue
            if texts[:len(ew)] == ew or ([t.lower() for t in texts[:len(ew)]] == ew and name == "redis-cli"):
                self.deny("sql.destructive-command", f"`{flat}` wipes a database")

    def h_data(self, name: str, args: list[Word], st: State, cmd: Cmd | None, depth: int) -> None:
        if name in ("kill", "pkill", "killall", "umask", "shift", "enable", "hash") or (
                name == "date" and any(a.text in ("-s", "--set") for a in args)):
            self.ro(f"`{name}`")
        if name in ("getent",) and args and args[0].text in ("shadow", "gshadow"):
            self.deny("creds.read", "reads the shadow password database")

    def h_command(self, name: str, args: list[Word], st: State, cmd: Cmd | None, depth: int) -> None:
        opts, pos = split_opts(args, "", frozenset(), stop_first=True)
        if _has(opts, "-v", "-V"):
            return
        self.payload(pos, st, cmd, depth)

    def h_print(self, name: str, args: list[Word], st: State, cmd: Cmd | None, depth: int) -> None:
        for a in args:
            if a.secret and not a.raw.lstrip("\"").startswith("${#"):
                self.deny("creds.secret-echo", f"`{name}` prints a secret-looking variable ({a.raw})")
        if name == "printf":
            opts, _ = split_opts(args, "v")
            v = _val(opts, "-v")
            if v is not None and not v.known:
                self.deny("shell.unresolved", "printf -v into a variable named at run time")

    def h_printenv(self, name: str, args: list[Word], st: State, cmd: Cmd | None, depth: int) -> None:
        names = [a for a in args if not a.text.startswith("-")]
        if not names:
            self.deny("creds.env-dump", "`printenv` prints the whole environment, secrets included")
        for a in names:
            if not a.known or is_secret_name(a.text):
                self.deny("creds.secret-echo", f"`printenv {a.raw}` prints a secret-looking variable")

    def h_set(self, name: str, args: list[Word], st: State, cmd: Cmd | None, depth: int) -> None:
        if not args:
            self.deny("creds.env-dump", "`set` without arguments prints every variable")

    def h_export(self, name: str, args: list[Word], st: State, cmd: Cmd | None, depth: int) -> None:
        names = [a for a in args if not a.text.startswith("-")]
        if not names:
            self.deny("creds.env-dump", f"`{name}` without names prints the environment")

    def h_env(self, name: str, args: list[Word], st: State, cmd: Cmd | None, depth: int) -> None:
        i = 0
        cwd_st = st
        while i < len(args):
            a = args[i]
            t = a.text
            if not a.known:
                self.deny("shell.unresolved-command", "env runs a command only known at run time")
            if t in ("-i", "--ignore-environment", "-0", "--null", "-v", "--debug", "-") or \
                    t.startswith(("--unset=", "--chdir=", "--default-signal", "--ignore-signal",
                                  "--block-signal", "--list-signal-handling")):
                if t.startswith("--chdir="):
                    cwd_st = st.copy(cwds=(norm(t.split("=", 1)[1], st.cwd),))
                i += 1
                continue
            if t in ("-u", "--unset"):
                i += 2
                continue
            if t in ("-C", "--chdir"):
                if i + 1 < len(args):
                    cwd_st = st.copy(cwds=(norm(args[i + 1].text, st.cwd) if args[i + 1].known else None,))
                i += 2
                continue
            if t.startswith("-S") or t.startswith("--split-string"):
                rest = t[2:] if t.startswith("-S") and len(t) > 2 else (
                    t.split("=", 1)[1] if "=" in t else (args[i + 1].text if i + 1 < len(args) else ""))
                if not (t.startswith("-S") and len(t) > 2) and "=" not in t:
                    i += 1
                tail = " ".join(_sq(w.text) for w in args[i + 1:])
                self.walk(rest + (" " + tail if tail else ""), cwd_st.copy(vars={}), depth + 1)
                return
            if t.startswith("-") and t != "--":
                i += 1
                continue
            if t == "--":
                i += 1
                break
            if "=" in t and not t.startswith("="):
                n, _, v = t.partition("=")
                self.assignment(n, lit(v), st, depth)
                i += 1
                continue
            break
        rest = args[i:]
        if not rest:
            self.deny("creds.env-dump", "`env` without a command prints the whole environment")
        self.payload(rest, cwd_st, cmd, depth)

    def h_wrapper(self, name: str, args: list[Word], st: State, cmd: Cmd | None, depth: int) -> None:
        short, long = _WRAPPER_VALUE_OPTS.get(name, ("", frozenset()))
        if name == "nice":
            args = [lit("-n"), lit(args[0].text[1:]), *args[1:]] if args and _is_num_flag(args[0]) else args
        opts, pos = split_opts(args, short, long, stop_first=True)
        if name == "exec" and not pos:
            return
        if name == "timeout" and pos:
            pos = pos[1:]            # the duration
        elif name in ("taskset", "chrt") and pos:
            pos = pos[1:] if not _has(opts, "-p", "--pid") else []
        elif name in ("strace", "ltrace", "valgrind", "gdb", "systemd-run", "firejail"):
            self.ro(f"`{name}`")
        if name == "systemd-run":
            self.need("system_commands", "approval.system-command", "`systemd-run` starts a service")
        if not pos:
            return
        self.payload(pos, st, cmd, depth)

    def h_flock(self, name: str, args: list[Word], st: State, cmd: Cmd | None, depth: int) -> None:
        opts, pos = split_opts(args, "wEc", frozenset({"--timeout", "--wait", "--conflict-exit-code",
                                                        "--command"}), stop_first=True)
        c = _val(opts, "-c", "--command")
        if c is None and len(pos) >= 3 and pos[1].text in ("-c", "--command"):
            c = pos[2]
        if c is not None:
            if not c.known:
                self.deny("opaque.exec", "`flock -c` runs a command only known at run time")
            self.walk(c.text, st.copy(vars={}), depth + 1)
            return
        if len(pos) >= 2:
            self.payload(pos[1:], st, cmd, depth)

    def h_watch(self, name: str, args: list[Word], st: State, cmd: Cmd | None, depth: int) -> None:
        opts, pos = split_opts(args, "nd", frozenset({"--interval", "--differences"}), stop_first=True)
        if pos:
            if _has(opts, "-x", "--exec"):
                self.payload(pos, st, cmd, depth)
            else:
                self.walk(" ".join(p.text for p in pos), st.copy(vars={}), depth + 1)

    def h_script(self, name: str, args: list[Word], st: State, cmd: Cmd | None, depth: int) -> None:
        opts, pos = split_opts(args, "cEIOBT", frozenset({"--command", "--log-in", "--log-out",
                                                          "--log-io", "--log-timing", "--echo"}))
        c = _val(opts, "-c", "--command")
        if c is not None:
            self.walk(c.text, st.copy(vars={}), depth + 1)
        for p in pos:
            self.write_word(p, st, "`script` writes its typescript to")
        self.ro("`script`")

    def h_priv(self, name: str, args: list[Word], st: State, cmd: Cmd | None, depth: int) -> None:
        self.deny("priv.escalation", f"`{name}` changes privileges; agents never do, not even as a probe")

    def h_power(self, name: str, args: list[Word], st: State, cmd: Cmd | None, depth: int) -> None:
        self.deny("system.power", f"`{name}` stops the machine")

    def h_disk(self, name: str, args: list[Word], st: State, cmd: Cmd | None, depth: int) -> None:
        if name in ("losetup", "fsck", "e2fsck", "hdparm", "badblocks") and all(
                a.text.startswith("-") for a in args) and args:
            return
        self.deny("disk.destructive", f"`{name}` rewrites disks or filesystems")

    def h_editor(self, name: str, args: list[Word], st: State, cmd: Cmd | None, depth: int) -> None:
        for k, a in enumerate(args):
            t = a.text
            cmdtext = t[1:] if t.startswith("+") else (args[k + 1].text if t in ("-c", "--cmd", "-S", "--eval",
                                                                             "-l", "--load") and k + 1 < len(args) else "")
            if t in ("-S", "-l", "--load", "-x", "--script", "--batch", "-es", "-Es") or "!" in cmdtext or \
                    "system(" in cmdtext or "shell" in cmdtext.lower() or not a.known:
                self.deny("opaque.exec", f"`{name}` with a command or script argument can run anything")
        if name in ("less", "more", "most", "man"):
            for a in args:
                if not a.text.startswith(("-", "+")):
                    self.read_word(a, st)
            return
        self.ro(f"`{name}`")
        for a in args:
            if not a.text.startswith(("-", "+")):
                self.read_word(a, st)
                self.write_word(a, st, f"`{name}` edits")

    def h_umask(self, name: str, args: list[Word], st: State, cmd: Cmd | None, depth: int) -> None:
        for a in args:
            if re.fullmatch(r"[0-7]{1,4}", a.text) and not int(a.text, 8) & 0o002:
                self.deny("perm.world-writable", f"`umask {a.text}` makes every new file world-writable")
            if not a.known:
                self.deny("perm.unresolved", "`umask` with a value only known at run time")

    def h_coproc(self, name: str, args: list[Word], st: State, cmd: Cmd | None, depth: int) -> None:
        self.deny("shell.unsupported", "`coproc` runs a command the guardian does not follow")

    def h_system(self, name: str, args: list[Word], st: State, cmd: Cmd | None, depth: int) -> None:
        self.ro(f"`{name}`")
        if name == "crontab" and not any(a.text == "-l" for a in args):
            self.deny("system.persistence", "`crontab` schedules commands that run outside the job")
        if name == "at":
            self.deny("system.persistence", "`at` schedules commands that run outside the job")
        self.need("system_commands", "approval.system-command", f"`{name}` affects other processes")

    # -- deletes, moves, copies, writes --------------------------------------------------------------
    def h_rm(self, name: str, args: list[Word], st: State, cmd: Cmd | None, depth: int) -> None:
        self.ro(f"`{name}`")
        short = "ns" if name == "shred" else ""
        opts, pos = split_opts(args, short, frozenset({"--iterations", "--size", "--random-source",
                                                       "--interactive"}))
        if name == "shred" and not _has(opts, "-u", "--remove", "-z") and False:
            pass
        for p in pos:
            if name == "shred":
                self.write_word(p, st, "`shred` overwrites")
            self.delete_word(p, st, f"`{name}` deletes")

    def h_mv(self, name: str, args: list[Word], st: State, cmd: Cmd | None, depth: int) -> None:
        self.ro("`mv`")
        opts, pos = split_opts(args, "tS", frozenset({"--target-directory", "--suffix", "--backup"}))
        tdir = _val(opts, "-t", "--target-directory")
        if tdir is not None:
            srcs, dest = pos, tdir
        elif len(pos) >= 2:
            srcs, dest = pos[:-1], pos[-1]
        else:
            return
        for s in srcs:
            self.delete_word(s, st, "`mv` moves away")
            self.read_word(s, st, recursive=True)
        self.write_word(dest, st, "`mv` moves into")

    def h_copy(self, name: str, args: list[Word], st: State, cmd: Cmd | None, depth: int) -> None:
        self.ro(f"`{name}`")
        if name == "rsync":
            opts, pos = split_opts(args, "eBfT", frozenset({
                "--rsh", "--rsync-path", "--filter", "--exclude", "--include", "--exclude-from",
                "--include-from", "--files-from", "--temp-dir", "--backup-dir", "--suffix", "--chmod",
                "--log-file", "--password-file", "--partial-dir", "--compare-dest", "--link-dest",
                "--copy-dest", "--out-format", "--timeout", "--port", "--bwlimit", "--max-size",
                "--min-size", "--info", "--debug", "--usermap", "--groupmap", "--chown", "--block-size"}))
            rsh = _val(opts, "-e", "--rsh")
            if rsh is not None:
                self.walk(rsh.text, st.copy(vars={}), depth + 1)
            rpath = _val(opts, "--rsync-path")
            if rpath is not None:
                self.walk(rpath.text, State((None,)), depth + 1)
            chm = _val(opts, "--chmod")
            if chm is not None:
                self.symbolic_mode(chm.text, "rsync --chmod")
        elif name == "scp":
            opts, pos = split_opts(args, "cFiJloPSDX", frozenset())
            if _val(opts, "-S") is not None:
                self.deny("opaque.exec", "scp -S runs a program in place of ssh")
        elif name in ("ln", "link"):
            opts, pos = split_opts(args, "tS", frozenset({"--target-directory", "--suffix", "--backup"}))
        else:
            opts, pos = split_opts(args, "tSmogZ" if name == "install" else "tS",
                                   frozenset({"--target-directory", "--suffix", "--mode", "--owner",
                                              "--group", "--backup", "--context", "--strip-program",
                                              "--sparse", "--reflink", "--preserve", "--no-preserve"}))
            mode = _val(opts, "-m", "--mode")
            if mode is not None:
                self.mode_text(mode, f"`{name} -m`")
        tdir = _val(opts, "-t", "--target-directory")
        if name == "install" and _has(opts, "-d", "--directory"):
            for p in pos:
                self.write_word(p, st, "`install -d` creates")
            return
        if tdir is not None:
            srcs, dest = pos, tdir
        elif len(pos) >= 2:
            srcs, dest = pos[:-1], pos[-1]
        elif len(pos) == 1 and name in ("ln", "link"):
            srcs, dest = pos, lit(".")
        else:
            for p in pos:
                self.read_word(p, st, recursive=True)
            return
        for s in srcs:
            if _remote(s.text) and name in ("rsync", "scp"):
                continue
            if not s.known and name in ("ln", "link"):
                self.deny("fs.unresolved-target", f"`{name}` links to a path only known at run time")
            self.read_word(s, st, recursive=name not in ("ln", "link"))
        if _remote(dest.text) and name in ("rsync", "scp"):
            self.need("network_requests", "approval.network", f"`{name}` copies to another host")
            return
        if name == "rsync" and any(o.startswith("--delete") or o in ("--remove-source-files",) for o, _ in opts):
            self.delete_word(dest, st, "`rsync --delete` deletes inside")
            if _has(opts, "--remove-source-files"):
                for s in srcs:
                    self.delete_word(s, st, "`rsync --remove-source-files` deletes")
        if name in ("ln", "link") and not (_has(opts, "-f", "--force") or _has(opts, "-n")):
            self.write_word(dest, st, f"`{name}` creates a link at")
            return
        self.write_word(dest, st, f"`{name}` writes")

    def h_truncate(self, name: str, args: list[Word], st: State, cmd: Cmd | None, depth: int) -> None:
        self.ro("`truncate`")
        _, pos = split_opts(args, "sr", frozenset({"--size", "--reference"}))
        for p in pos:
            self.write_word(p, st, "`truncate` empties")

    def h_tee(self, name: str, args: list[Word], st: State, cmd: Cmd | None, depth: int) -> None:
        _, pos = split_opts(args, "", frozenset({"--output-error"}))
        for p in pos:
            self.ro("`tee` into a file")
            self.write_word(p, st, "`tee` writes")

    def h_dd(self, name: str, args: list[Word], st: State, cmd: Cmd | None, depth: int) -> None:
        for a in args:
            k, eq, v = a.text.partition("=")
            if not eq:
                continue
            if k == "of":
                self.ro("`dd of=`")
                if v.startswith("/dev/") and v not in SAFE_DEVICES:
                    self.deny("disk.device-write", f"`dd of={v}` writes a device")
                self.write_word(lit(v) if a.known else Word(v), st, "`dd` writes")
            elif k == "if":
                self.read_word(lit(v), st)

    def h_touch(self, name: str, args: list[Word], st: State, cmd: Cmd | None, depth: int) -> None:
        self.ro(f"`{name}`")
        if name in ("ed", "ex"):
            if cmd is not None and cmd.stdin_text and "!" in cmd.stdin_text:
                self.deny("opaque.exec", f"`{name}` script runs shell commands")
        if name == "patch":
            opts, pos = split_opts(args, "pdioBDFrVYzgs", frozenset({
                "--directory", "--input", "--output", "--strip", "--reject-file", "--prefix"}))
            d = _val(opts, "-d", "--directory")
            if d is not None:
                self.write_word(Word(d.text.rstrip("/") + "/x", d.raw), st, "`patch -d` writes into")
            for o in (_val(opts, "-o", "--output"), *pos[:1]):
                if o is not None:
                    self.write_word(o, st, "`patch` writes")
            return
        if name in {"split", "csplit"}:
            return
        opts, pos = split_opts(args, "mrdtZ" if name != "mkdir" else "mZ",
                               frozenset({"--mode", "--reference", "--date", "--context"}))
        mode = _val(opts, "-m", "--mode")
        if mode is not None:
            self.mode_text(mode, f"`{name} -m`")
        for p in pos:
            self.write_word(p, st, f"`{name}` writes")

    def h_sort(self, name: str, args: list[Word], st: State, cmd: Cmd | None, depth: int) -> None:
        opts, pos = split_opts(args, "ktSoT", frozenset({"--key", "--field-separator", "--buffer-size",
                                                         "--output", "--temporary-directory",
                                                         "--compress-program", "--files0-from"}))
        o = _val(opts, "-o", "--output")
        if o is not None:
            self.ro("`sort -o`")
            self.write_word(o, st, "`sort -o` writes")
        if _val(opts, "--compress-program") is not None:
            self.deny("opaque.exec", "`sort --compress-program` runs a program")
        for p in pos:
            self.read_word(p, st)

    def h_uniq(self, name: str, args: list[Word], st: State, cmd: Cmd | None, depth: int) -> None:
        _, pos = split_opts(args, "fsw", frozenset({"--skip-fields", "--skip-chars", "--check-chars",
                                                     "--group", "--all-repeated"}))
        if pos:
            self.read_word(pos[0], st)
        if len(pos) > 1:
            self.ro("`uniq IN OUT`")
            self.write_word(pos[1], st, "`uniq` writes")

    def h_yq(self, name: str, args: list[Word], st: State, cmd: Cmd | None, depth: int) -> None:
        opts, pos = split_opts(args, "", frozenset())
        if _has(opts, "-i", "--inplace"):
            self.ro("`yq -i`")
            for p in pos[1:]:
                self.write_word(p, st, "`yq -i` rewrites")
        for p in pos[1:]:
            self.read_word(p, st)

    def h_grep(self, name: str, args: list[Word], st: State, cmd: Cmd | None, depth: int) -> None:
        opts, pos = split_opts(args, "efABCmdDt" if name != "rg" else "efABCmgtTMj", frozenset({
            "--regexp", "--file", "--after-context", "--before-context", "--context", "--max-count",
            "--include", "--exclude", "--exclude-dir", "--glob", "--type", "--type-not", "--label",
            "--color", "--colour", "--binary-files", "--devices", "--directories", "--pre",
            "--max-depth", "--threads", "--sort", "--sortr", "--replace", "--encoding"}))
        if _val(opts, "--pre") is not None:
            self.deny("opaque.exec", "`rg --pre` runs a program on every file")
        pattern_given = _has(opts, "-e", "--regexp", "-f", "--file")
        files = pos if pattern_given else pos[1:]
        rec = _has(opts, "-r", "-R", "--recursive", "--dereference-recursive") or name in ("rg", "ag", "ack")
        for f in (_val(opts, "-f", "--file"),):
            if f is not None:
                self.read_word(f, st)
        for p in files:
            self.read_word(p, st, recursive=rec)

    def h_tar(self, name: str, args: list[Word], st: State, cmd: Cmd | None, depth: int) -> None:
        words = list(args)
        if words and words[0].known and not words[0].text.startswith("-") and words[0].text:
            words = [lit("-" + words[0].text), *words[1:]]   # tar czf ...: old-style bundled options
        opts, pos = split_opts(words, "fCbHKLNTXgIV", frozenset({
            "--file", "--directory", "--exclude", "--files-from", "--exclude-from", "--transform",
            "--xform", "--use-compress-program", "--to-command", "--checkpoint-action",
            "--info-script", "--new-volume-script", "--rsh-command", "--owner", "--group", "--mode",
            "--format", "--label", "--newer", "--after-date", "--index-file", "--listed-incremental"}))
        for key in ("--to-command", "--checkpoint-action", "--info-script", "--new-volume-script",
                    "--rsh-command", "--use-compress-program", "-I", "-F"):
            v = _val(opts, key)
            if v is not None:
                if key in {"-I", "--use-compress-program"}:
                    if v.text.split()[0] in ("gzip", "bzip2", "xz", "zstd", "lz4", "pigz", "lzip", "lzma",
                                             "zstd -T0", "pixz", "pbzip2"):
                        continue
                if key == "--checkpoint-action" and not v.text.startswith(("exec", "sh")):
                    continue
                self.deny("opaque.exec", f"`tar {key}` runs a program")
        f = _val(opts, "-f", "--file")
        extracting = _has(opts, "-x", "--extract", "--get")
        creating = _has(opts, "-c", "--create", "-r", "--append", "-u", "--update")
        cdir = _val(opts, "-C", "--directory")
        if extracting:
            self.ro("`tar -x`")
            dest = cdir if cdir is not None else lit(".")
            self.write_word(Word(dest.text.rstrip("/") + "/x", dest.raw), st, "`tar -x` extracts into")
            if f is not None:
                self.read_word(f, st)
        elif creating:
            base = st.copy(cwds=(norm(cdir.text, st.cwd),)) if cdir is not None and cdir.known else st
            for p in pos:
                self.read_word(p, base, recursive=True)
            if f is not None and f.text != "-":
                self.ro("`tar -c`")
                self.write_word(f, st, "`tar` writes")
        else:
            for p in pos:
                self.read_word(p, st)

    def h_archive(self, name: str, args: list[Word], st: State, cmd: Cmd | None, depth: int) -> None:
        self.ro(f"`{name}`")
        opts, pos = split_opts(args, "xibnt" if name == "zip" else "", frozenset())
        if name == "zip" and ((_has(opts, "-T") and _val(opts, "--unzip-command") is not None) or
                              any(a.text in ("-TT", "--unzip-command") for a in args)):
            self.deny("opaque.exec", "`zip -TT` runs a program")
        if pos:
            if name in ("7z", "7za", "rar") and pos[0].text in ("x", "e"):
                return
            if name in ("7z", "7za", "rar") and pos[0].text in ("a", "u"):
                pos = pos[1:]
            self.write_word(pos[0], st, f"`{name}` writes")
            for p in pos[1:]:
                self.read_word(p, st, recursive=True)

    def h_unzip(self, name: str, args: list[Word], st: State, cmd: Cmd | None, depth: int) -> None:
        self.ro(f"`{name}`")
        opts, _pos = split_opts(args, "dx", frozenset())
        d = _val(opts, "-d")
        dest = d if d is not None else lit(".")
        if not _has(opts, "-l", "-t", "-v", "-p", "-Z"):
            self.write_word(Word(dest.text.rstrip("/") + "/x", dest.raw), st, f"`{name}` extracts into")

    # -- sed / perl / awk ---------------------------------------------------------------------------------
    def h_sed(self, name: str, args: list[Word], st: State, cmd: Cmd | None, depth: int) -> None:
        inplace = False
        scripts: list[str] = []
        files: list[Word] = []
        i = 0
        opts_done = False
        while i < len(args):
            a = args[i]
            t = a.text
            if not opts_done and a.known and t.startswith("-") and len(t) > 1:
                if t == "--":
                    opts_done = True
                elif t in ("-e", "--expression"):
                    if i + 1 < len(args):
                        scripts.append(args[i + 1].text)
                    i += 1
                elif t.startswith("--expression="):
                    scripts.append(t.split("=", 1)[1])
                elif t in ("-f", "--file"):
                    i += 1
                    scripts.append(UNK)
                elif t.startswith("--in-place") or (t.startswith("-i") and not t.startswith("--")):
                    inplace = True
                elif t.startswith("--"):
                    pass
                else:
                    body = t[1:]
                    if "i" in body:
                        inplace = True
                    if "e" in body and body.endswith("e") and i + 1 < len(args):
                        scripts.append(args[i + 1].text)
                        i += 1
                    if "f" in body:
                        scripts.append(UNK)
                        i += 1
            elif not scripts and not any(x.text in ("-e", "--expression") for x in args[:i]):
                scripts.append(t)
            else:
                files.append(a)
            i += 1
        for s in scripts:
            if UNK in s:
                if inplace:
                    continue
                continue
            for c, arg in codescan.sed_commands(s):
                if c == "e":
                    if arg:
                        self.walk(arg, st.copy(vars={}), depth + 1)
                    else:
                        self.deny("opaque.exec", "sed `e` runs pattern space as a command")
                elif c in "wW" and arg:
                    if arg not in ("/dev/stdout", "/dev/stderr"):
                        self.ro("`sed w`")
                        self.write_word(lit(arg), st, "sed `w` writes")
                elif c == "s" and arg:
                    flags = arg
                    if "e" in flags.split("w", 1)[0]:
                        self.deny("opaque.exec", "sed s///e runs the result as a command")
                    if "w" in flags:
                        wf = flags.split("w", 1)[1].strip()
                        if wf and wf not in ("/dev/stdout", "/dev/stderr"):
                            self.ro("`sed w`")
                            self.write_word(lit(wf), st, "sed `w` writes")
                elif c in "rR" and arg:
                    self.read_word(lit(arg), st)
        for f in files:
            if inplace:
                self.ro("`sed -i`")
                self.write_word(f, st, "`sed -i` rewrites")
            else:
                self.read_word(f, st)

    def h_perl(self, name: str, args: list[Word], st: State, cmd: Cmd | None, depth: int) -> None:
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
            self.ro("`perl -i`")
            for f in files:
                self.write_word(f, st, "`perl -i` rewrites")
        else:
            for f in files:
                self.read_word(f, st)
        if code:
            for c in code:
                if UNK in c:
                    self.deny("opaque.exec", "perl code only known at run time")
                self.ro("`perl -e`")
                codescan.scan_script(self, "perl", c, "perl -e")
        elif script_file is not None:
            self.ro("`perl`")
            self.run_script_file(script_file, "perl", st, cmd)
        else:
            self.interp_stdin("perl", cmd)

    def h_awk(self, name: str, args: list[Word], st: State, cmd: Cmd | None, depth: int) -> None:
        opts, pos = split_opts(args, "fvFW", frozenset({"--file", "--assign", "--field-separator",
                                                        "--source", "--include", "--load"}))
        progs = []
        if _val(opts, "-f", "--file") is not None:
            self.ro(f"`{name} -f`")
            return
        src = _val(opts, "--source")
        if src is not None:
            progs.append(src.text)
        elif pos:
            progs.append(pos[0].text)
            pos = pos[1:]
        for prog in progs:
            if UNK in prog:
                self.deny("opaque.exec", "awk program only known at run time")
            self.awk_program(prog, st, depth)
        for p in pos:
            if "=" in p.text and not p.text.startswith("/"):
                continue
            self.read_word(p, st)

    def awk_program(self, prog: str, st: State, depth: int) -> None:
        for m in re.finditer(r"\bsystem\s*\(", prog):
            s = _quoted_after(prog, m.end())
            if s is None:
                self.deny("opaque.exec", "awk system() with a command built at run time")
            self.ro("awk system()")
            self.walk(s, st.copy(vars={}), depth + 1)
        for m in re.finditer(r"(\"(?:[^\"\\]|\\.)*\")\s*\|\s*getline|\|\s*&?\s*(\"(?:[^\"\\]|\\.)*\"|[A-Za-z_]\w*)",
                             prog):
            body = m.group(1) or m.group(2)
            if body is None or not body.startswith('"'):
                self.deny("opaque.exec", "awk pipes to a command built at run time")
            self.ro("an awk pipe")
            self.walk(body[1:-1].replace('\\"', '"'), st.copy(vars={}), depth + 1)
        for m in re.finditer(r"(?<![<>=!])>{1,2}\s*(\"(?:[^\"\\]|\\.)*\"|[A-Za-z_$][\w$]*)", prog):
            body = m.group(1)
            if not body.startswith('"'):
                # `a > b` may be a comparison inside a condition; only print/printf redirect
                head = prog[:m.start()]
                if re.search(r"\bprintf?\b[^;{}]*$", head):
                    self.deny("fs.unresolved-target", "awk prints into a file named at run time")
                continue
            if re.search(r"\bprintf?\b[^;{}]*$", prog[:m.start()]):
                self.ro("awk print >")
                self.write_word(lit(body[1:-1]), st, "awk writes")

    # -- find / xargs / parallel -----------------------------------------------------------------------
    def h_find(self, name: str, args: list[Word], st: State, cmd: Cmd | None, depth: int) -> None:
        i = 0
        while (i < len(args) and args[i].known and args[i].text in ("-H", "-L", "-P", "-O0", "-O1", "-O2", "-O3")) \
                or (i < len(args) and args[i].text.startswith("-D") and args[i].known):
            i += 2 if args[i].text == "-D" else 1
        starts: list[Word] = []
        while i < len(args) and not (args[i].known and (args[i].text.startswith("-") or args[i].text in ("(", "!", ")", ","))):
            starts.append(args[i])
            i += 1
        expr = args[i:]
        if not starts:
            starts = [lit(".")]
        texts = [w.text for w in expr]
        filtered = any(t in ("-name", "-iname", "-path", "-ipath", "-wholename", "-iwholename", "-regex",
                             "-iregex", "-newer", "-type", "-mtime", "-mmin", "-size", "-empty", "-user",
                             "-perm", "-links") for t in texts)
        nameonly = [expr[k + 1].text for k, t in enumerate(texts[:-1]) if t in ("-name", "-iname")]
        for s in starts:
            self.read_word(s, st)
        found = []
        for s in starts:
            if filtered and not any(glob_hits_dot(p, ".git") or glob_hits_dot(p, ".zen") or p in (".git", ".zen", ".claude")
                                    for p in nameonly) and ("-type" not in texts or "-name" in texts or "-iname" in texts
                                                            or "-path" in texts):
                found.append(Word(s.text.rstrip("/") + "/" + FOUND, s.raw, glob=True))
            else:
                found.append(s)
        k = 0
        while k < len(expr):
            t = expr[k].text
            if t == "-delete":
                self.ro("`find -delete`")
                for fw in found:
                    self.delete_word(fw, st, "`find -delete` deletes")
            elif t in ("-exec", "-execdir", "-ok", "-okdir"):
                j = k + 1
                sub: list[Word] = []
                while j < len(expr) and expr[j].text not in (";", "+"):
                    sub.append(expr[j])
                    j += 1
                for fw in found:
                    replaced = [Word(w.text.replace("{}", fw.text), w.raw, glob=fw.glob or w.glob)
                                if "{}" in w.text else w for w in sub]
                    if t.endswith("dir"):
                        replaced = [Word(w.text.replace(fw.text, "./" + FOUND), w.raw, glob=True)
                                    if fw.text in w.text else w for w in replaced]
                        sub_st = st.copy(cwds=(None,)) if not fw.glob else st.copy(
                            cwds=(norm(fw.text.rsplit("/", 1)[0], st.cwd),))
                        self.leaf(replaced, sub_st, None, depth + 1)
                    else:
                        self.leaf(replaced, st, None, depth + 1)
                k = j
            elif t in ("-fprint", "-fprint0", "-fprintf", "-fls"):
                self.ro(f"`find {t}`")
                if k + 1 < len(expr):
                    self.write_word(expr[k + 1], st, f"`find {t}` writes")
            k += 1

    def _stdin_items(self, cmd: Cmd | None, st: State) -> Word:
        """What xargs/parallel read from stdin, as a stand-in word."""
        prod = cmd.piped_from if cmd is not None else None
        if isinstance(prod, Cmd) and prod.words:
            pname = prod.words[0].text.rsplit("/", 1)[-1]
            pargs = prod.words[1:]
            if pname == "find":
                starts = [w for w in pargs if not w.text.startswith("-") and w.text not in ("(", "!", ")")]
                starts = starts[:1] or [lit(".")]
                s = starts[0]
                if s.known:
                    return Word(s.text.rstrip("/") + "/" + FOUND, s.raw, glob=True)
            if pname in ("echo", "printf") and all(w.known for w in pargs) and len(pargs) == 1:
                return pargs[0]
            if pname in ("ls", "grep", "rg", "fd") and prod.state.cwd is not None and all(
                    w.known and (w.text.startswith("-") or ("/" not in w.text and w.text not in ("..", "."))) for w in pargs):
                return Word(FOUND, FOUND, glob=True)
            if pname == "git" and [w.text for w in pargs[:1]] == ["ls-files"]:
                return Word(FOUND, FOUND, glob=True)
        return Word(UNK, "<stdin>")

    def h_xargs(self, name: str, args: list[Word], st: State, cmd: Cmd | None, depth: int) -> None:
        opts, pos = split_opts(args, "aEeIiLlnPsd", frozenset({
            "--arg-file", "--eof", "--replace", "--max-lines", "--max-args", "--max-procs",
            "--max-chars", "--delimiter", "--process-slot-var"}), stop_first=True)
        item = self._stdin_items(cmd, st)
        af = _val(opts, "-a", "--arg-file")
        if af is not None:
            self.read_word(af, st)
            item = Word(UNK, "<file>")
        repl = _val(opts, "-I", "--replace", "-i")
        if not pos:
            pos = [lit("echo")]
        if repl is not None:
            r = repl.text or "{}"
            sub = [Word(w.text.replace(r, item.text), w.raw, glob=item.glob) if r in w.text else w for w in pos]
        else:
            sub = [*pos, item]
        self.leaf(sub, st, None, depth + 1)

    def h_parallel(self, name: str, args: list[Word], st: State, cmd: Cmd | None, depth: int) -> None:
        texts = [a.text for a in args]
        seps = [k for k, t in enumerate(texts) if t in (":::", "::::", ":::+", "::::+")]
        head = args[:seps[0]] if seps else args
        values: list[Word] = []
        for k in seps:
            j = k + 1
            while j < len(args) and args[j].text not in (":::", "::::", ":::+", "::::+"):
                values.append(args[j] if texts[k].startswith(":::") and not texts[k].startswith("::::") else Word(UNK))
                j += 1
        if not seps:
            values = [self._stdin_items(cmd, st)]
        opts, pos = split_opts(head, "jSIdaEn", frozenset({"--jobs", "--sshlogin", "--delimiter",
                                                           "--arg-file", "--env", "--joblog",
                                                           "--results", "--workdir", "--tmpdir"}), stop_first=True)
        if _val(opts, "-S", "--sshlogin") is not None:
            st = State((None,))
        if not pos:
            for v in values:
                self.walk(v.text, st.copy(vars={}), depth + 1)
            return
        template = " ".join(_sq(p.text) if p.known else UNK for p in pos)
        if "{" not in template:
            template += " {}"
        for v in values or [Word(UNK)]:
            if not v.known:
                self.deny("shell.unresolved", "parallel runs commands built from input only known at run time")
            text = re.sub(r"\{[^}]*\}", lambda _m, v=v: _sq(v.text), template)
            self.walk(text, st.copy(vars={}), depth + 1)

    # -- shells, env, ssh, docker ---------------------------------------------------------------------------
    def h_shell(self, name: str, args: list[Word], st: State, cmd: Cmd | None, depth: int) -> None:
        i = 0
        payload = None
        script = None
        while i < len(args):
            a = args[i]
            t = a.text
            if not a.known:
                self.deny("opaque.exec", f"`{name}` runs a script only known at run time")
            if t in ("-c",) or (t.startswith("-") and not t.startswith("--") and "c" in t[1:] and
                                not t.startswith("-o")):
                if i + 1 < len(args):
                    payload = args[i + 1]
                break
            if t in ("-o", "+o", "-O", "+O", "--rcfile", "--init-file"):
                i += 2
                continue
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
                self.deny("opaque.exec", f"`{name}` code cannot be checked (not bash)")
        if payload is not None:
            if not payload.known:
                self.deny("opaque.exec", f"`{name} -c` runs a command only known at run time")
            self.walk(payload.text, st.copy(vars={}), depth + 1)
            return
        if script is not None:
            if script.procsub:
                self.deny("opaque.exec", f"`{name}` runs a script from a process substitution")
            self.ro(f"running `{script.text}`")
            self.run_script_file(script, "sh", st, cmd)
            for w in args[args.index(script) + 1:]:
                self.read_word(w, st)
            return
        self.interp_stdin(name, cmd, shell=True, st=st, depth=depth)

    def run_script_file(self, script: Word, lang: str, st: State, cmd: Cmd | None) -> None:
        if script.text.startswith(("/dev/fd/", "/proc/self/fd/", "/dev/stdin")) or script.procsub:
            self.deny("opaque.exec", "runs a script from a pipe or process substitution")
        self.read_word(script, st)

    def interp_stdin(self, name: str, cmd: Cmd | None, shell: bool = False, st: State | None = None,
                     depth: int = 0, lang: str = "") -> None:
        """An interpreter reading its program from stdin."""
        if cmd is None or cmd.stdin is None:
            if self.observe:
                self.ro(f"`{name}`")
            return
        if cmd.stdin in ("heredoc", "herestring"):
            text = cmd.stdin_text or ""
            if UNK in text:
                self.deny("opaque.exec", f"`{name}` runs a script only known at run time")
            self.ro(f"a script fed to `{name}`")
            if shell:
                self.walk(text, (st or self.st).copy(vars={}), depth + 1)
            elif lang == "python":
                codescan.scan_python(self, text, f"{name} <<heredoc")
            elif lang in ("js", "ruby", "perl", "php"):
                codescan.scan_script(self, lang, text, f"{name} <<heredoc")
            else:
                self.deny("opaque.exec", f"`{name}` code cannot be checked")
            return
        if cmd.stdin == "pipe":
            self.deny("opaque.pipe", f"output piped into `{name}` runs as code the guardian cannot see "
                      "(opaque execution)")
        # stdin from a file: like running a script file
        self.ro(f"`{name}`")
        for r in cmd.reads:
            if r.procsub:
                self.deny("opaque.exec", f"`{name}` runs a script from a process substitution")

    def h_ssh(self, name: str, args: list[Word], st: State, cmd: Cmd | None, depth: int) -> None:
        self.ro("`ssh`")
        opts, pos = split_opts(args, "BbcDEeFIiJLlmOoPpQRSWw", frozenset(), stop_first=True)
        for o, v in opts:
            if o == "-o" and v is not None and re.match(r"(?i)(ProxyCommand|LocalCommand|PermitLocalCommand|KnownHostsCommand)\b", v.text):
                self.deny("opaque.exec", f"`ssh -o {v.text.split('=')[0]}` runs a local command")
        if _has(opts, "-F"):
            pass
        self.need("network_requests", "approval.network", "`ssh` reaches another host")
        if len(pos) < 2:
            if cmd is not None and cmd.stdin in ("heredoc", "herestring"):
                text = cmd.stdin_text or ""
                if UNK in text:
                    self.deny("opaque.exec", "ssh runs a remote script only known at run time")
                self.walk(text, State((None,)), depth + 1)
            elif cmd is not None and cmd.stdin == "pipe" and len(pos) == 1:
                self.deny("opaque.pipe", "output piped into a remote shell runs as code the guardian cannot see")
            return
        remote = " ".join(p.text for p in pos[1:])
        if any(not p.known for p in pos[1:]):
            self.deny("opaque.exec", "ssh runs a remote command only known at run time")
        self.walk(remote, State((None,)), depth + 1)

    def h_docker(self, name: str, args: list[Word], st: State, cmd: Cmd | None, depth: int) -> None:
        self.ro(f"`{name}`")
        _gopts, pos = split_opts(args, "cHl", frozenset({"--context", "--host", "--config", "--log-level"}),
                                stop_first=True)
        if not pos:
            return
        sub = pos[0].text
        rest = pos[1:]
        if sub == "container" and rest:
            sub, rest = rest[0].text, rest[1:]
        if sub in ("exec", "run", "create"):
            vshort = "eiuvwlpcmhd" if sub != "exec" else "euwd"
            opts, p2 = split_opts(rest, vshort.replace("d", ""), frozenset({
                "--env", "--user", "--volume", "--workdir", "--label", "--publish", "--cpus", "--memory",
                "--hostname", "--name", "--network", "--mount", "--entrypoint", "--env-file", "--platform",
                "--detach-keys", "--add-host", "--cap-add", "--cap-drop", "--device", "--pull", "--restart",
                "--security-opt", "--ulimit", "--shm-size", "--ipc", "--pid", "--runtime", "--gpus",
                "--tmpfs", "--volumes-from", "--log-driver", "--log-opt", "--stop-signal"}), stop_first=True)
            for o, v in opts:
                if o in ("-v", "--volume") and v is not None:
                    self.volume(v.text, st)
                elif o == "--mount" and v is not None:
                    m = re.search(r"(?:source|src)=([^,]+)", v.text)
                    if m:
                        self.volume(m.group(1) + (":x:ro" if "readonly" in v.text or "ro=true" in v.text else ":x"), st)
                elif o == "--privileged" or (o == "--cap-add" and v is not None and v.text.upper() in ("ALL", "SYS_ADMIN")):
                    self.deny("priv.escalation", f"`{name} {sub} {o}` gives the container the host")
                elif o in ("--pid", "--ipc", "--network", "--userns", "--uts") and v is not None and v.text == "host" and o == "--pid":
                    self.deny("priv.escalation", f"`{name} {sub} --pid=host` reaches host processes")
                elif o == "--device":
                    self.deny("disk.device-write", f"`{name} {sub} --device` hands a device to the container")
                elif o == "--env-file" and v is not None:
                    self.read_word(v, st)
            if _has(opts, "--privileged"):
                self.deny("priv.escalation", f"`{name} {sub} --privileged` gives the container the host")
            if sub == "exec" and len(p2) >= 2:
                self.leaf(p2[1:], State((None,)), None, depth + 1)
            return
        if sub == "cp" and len(rest) >= 2:
            dst = rest[-1]
            if ":" not in dst.text.split("/")[0]:
                self.write_word(dst, st, f"`{name} cp` writes")
            for s in rest[:-1]:
                if ":" not in s.text.split("/")[0]:
                    self.read_word(s, st, recursive=True)
            return
        if sub in ("build",):
            opts, p2 = split_opts(rest, "ft", frozenset({"--file", "--tag", "--build-arg", "--secret",
                                                         "--target", "--platform"}))
            for p in p2:
                self.read_word(p, st, recursive=True)
            return
        if sub in ("system", "volume", "image", "container", "network", "builder") and rest and \
                rest[0].text in ("prune", "rm") and (sub == "volume" or any(
                    a.text in ("--volumes", "-a", "--all", "-af", "-fa") for a in rest)):
            self.deny("remote.destructive", f"`{name} {sub} {rest[0].text}` deletes volumes or images "
                      "outside the worktree")
        if sub in ("login",):
            self.need("network_requests", "approval.network", f"`{name} login`")
        if (sub in ("system", "volume", "image", "container", "network", "builder") and rest and rest[0].text == "prune") or sub in {"rmi", "rm"}:
            pass
        if sub in ("pull", "push", "login"):
            self.need("network_requests", "approval.network", f"`{name} {sub}` reaches a registry")

    def volume(self, spec: str, st: State) -> None:
        parts = spec.split(":")
        src = parts[0]
        if not src.startswith(("/", ".", "~")) and UNK not in src:
            return   # a named volume
        ro = len(parts) >= 3 and "ro" in parts[2].split(",")
        w = Word(src)
        if src == "/var/run/docker.sock" or src.endswith("/docker.sock"):
            self.deny("priv.escalation", "mounting the docker socket hands over the host")
        if not ro:
            t = self.target(w, st, True)
            if t is None:
                self.deny("fs.unresolved-target", f"mounts a path only known at run time ({src})")
            self.check(t, "write", "mounts writable", w)
            for p in (self.home, self.user_home):
                if p and under(p, t.path) and not any(under(t.path, r) for r in self.roots):
                    self.deny("fs.outside-worktree", f"mounts {src} writable into a container")
        self.read_word(w, st, recursive=True)

    def h_kubectl(self, name: str, args: list[Word], st: State, cmd: Cmd | None, depth: int) -> None:
        self.cred_command(name, args)
        self.remote_destructive(name, args)
        texts = [a.text for a in args]
        posw = [t for t in texts if not t.startswith("-")]
        if posw[:1] in (["get"], ["describe"], ["logs"], ["top"], ["explain"], ["version"], ["api-resources"]) \
                or posw[:2] == ["config", "view"] or posw[:2] == ["config", "get-contexts"]:
            if posw[:2] == ["get", "secret"] or posw[:2] == ["get", "secrets"]:
                if any(t in ("-o", "--output") or t.startswith(("-o", "--output")) for t in texts):
                    self.deny("creds.command", "`kubectl get secret -o ...` prints secrets")
            return
        self.ro("`kubectl`")
        if "--" in texts and posw[:1] == ["exec"]:
            k = texts.index("--")
            self.leaf(args[k + 1:], State((None,)), None, depth + 1)
        if posw[:1] in (["delete"],) or posw[:2] == ["drain", ]:
            pass
        self.need("network_requests", "approval.network", "`kubectl` changes a cluster")

    # -- privilege, modes ----------------------------------------------------------------------------------
    def h_chmod(self, name: str, args: list[Word], st: State, cmd: Cmd | None, depth: int) -> None:
        self.ro(f"`{name}`")
        _opts, pos = split_opts([a for a in args if not (name == "chmod" and _is_mode_word(a))],
                               "", frozenset({"--reference", "--from"}))
        if name == "chmod":
            modes = [a for a in args if _is_mode_word(a)]
            if not modes and pos:
                modes, pos = [pos[0]], pos[1:]
            for m in modes:
                self.mode_text(m, "`chmod`")
        elif name in ("chown", "chgrp") and pos:
            pos = pos[1:]
        elif name == "setfacl":
            pos = [p for p in pos if "/" in p.text or p.text.startswith(".") or not re.match(r"^[ugmo]:", p.text)]
        for p in pos:
            self.write_word(p, st, f"`{name}` changes")

    def mode_text(self, w: Word, where: str) -> None:
        if not w.known:
            self.deny("perm.unresolved", f"{where}: a mode only known at run time")
        t = w.text
        if re.fullmatch(r"[0-7]{1,5}", t):
            self.mode_int(int(t, 8), where)
        else:
            self.symbolic_mode(t, where)

    def symbolic_mode(self, text: str, where: str) -> None:
        for clause in text.split(","):
            m = re.match(r"^([ugoa]*)([-+=])(.*)$", clause)
            if not m:
                if re.fullmatch(r"[0-7]{1,5}", clause):
                    self.mode_int(int(clause, 8), where)
                continue
            who, op, perms = m.groups()
            if op == "-":
                continue
            if "s" in perms:
                self.deny("perm.setuid", f"{where}: {clause} sets setuid/setgid")
            if "w" in perms and ("o" in who or "a" in who):
                self.deny("perm.world-writable", f"{where}: {clause} makes files world-writable")

    # -- interpreters ---------------------------------------------------------------------------------------
    def h_python(self, name: str, args: list[Word], st: State, cmd: Cmd | None, depth: int) -> None:
        i = 0
        while i < len(args):
            a = args[i]
            t = a.text
            if not a.known:
                self.deny("opaque.exec", "python runs code only known at run time")
            if t == "-c" or (t.startswith("-") and not t.startswith("--") and t.endswith("c") and
                             set(t[1:]) <= set("BdEhiIOPqsSuvVxc")):
                if i + 1 >= len(args):
                    return
                code = args[i + 1]
                if not code.known:
                    self.deny("opaque.exec", "python -c code only known at run time")
                self.ro("`python -c`")
                codescan.scan_python(self, code.text, "python -c")
                return
            if t == "-m" or (t.startswith("-m") and len(t) > 2):
                mod = t[2:] if len(t) > 2 else (args[i + 1].text if i + 1 < len(args) else "")
                rest = args[i + 2:] if len(t) == 2 else args[i + 1:]
                self.python_module(mod, rest, st, cmd, depth)
                return
            if t in ("-W", "-X", "--check-hash-based-pycs"):
                i += 2
                continue
            if t.startswith("-") and t != "-":
                i += 1
                continue
            if t == "-":
                self.interp_stdin(name, cmd, lang="python")
                return
            # a script file
            base = t.rsplit("/", 1)[-1]
            if base in ("manage.py", "django-admin.py"):
                self.policy_rules(base, args[i + 1:], st, cmd)
                self.db_command(base, args[i + 1:])
            if a.procsub:
                self.deny("opaque.exec", "python runs a script from a process substitution")
            self.ro(f"`{name} {t}`")
            for w in args[i:]:
                self.read_word(w, st)
            return
        self.interp_stdin(name, cmd, lang="python")

    def python_module(self, mod: str, rest: list[Word], st: State, cmd: Cmd | None, depth: int) -> None:
        if mod in ("json.tool", "tokenize", "pydoc", "this", "timeit", "calendar", "platform",
                   "sysconfig", "site", "tabnanny", "py_compile", "compileall", "dis", "pickletools"):
            return
        if mod in ("pip", "pip3"):
            self.ro("`pip`")
            if rest and rest[0].text in ("install", "download", "wheel"):
                self.need("network_requests", "approval.network", "`pip install` reaches the network")
            return
        if mod in ("http.server", "SimpleHTTPServer", "smtpd"):
            self.ro(f"`python -m {mod}`")
            return
        self.ro(f"`python -m {mod}`")
        self.leaf([lit(mod.split(".", maxsplit=1)[0]), *rest], st, cmd, depth + 1) if mod in (
            "pytest", "mypy", "ruff", "black", "isort", "flake8", "pylint", "unittest", "venv",
            "build", "twine", "coverage") else None

    def _script_lang(self, name: str, lang: str, eval_flags: tuple[str, ...], args: list[Word],
                     st: State, cmd: Cmd | None, value_flags: tuple[str, ...] = ()) -> None:
        i = 0
        while i < len(args):
            a = args[i]
            t = a.text
            if not a.known:
                self.deny("opaque.exec", f"`{name}` runs code only known at run time")
            if t in eval_flags or any(t.startswith(f + "=") for f in eval_flags if f.startswith("--")):
                code = t.split("=", 1)[1] if "=" in t else (args[i + 1].text if i + 1 < len(args) else "")
                if UNK in code:
                    self.deny("opaque.exec", f"`{name}` code only known at run time")
                self.ro(f"`{name} {t}`")
                codescan.scan_script(self, lang, code, f"{name} {t.split('=')[0]}")
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
                    self.deny("opaque.exec", "deno eval code only known at run time")
                self.ro("`deno eval`")
                codescan.scan_script(self, lang, code, "deno eval")
                return
            if name in ("deno", "bun") and t in ("run", "x", "test", "install", "add", "task", "fmt",
                                                 "lint", "check", "compile", "build"):
                i += 1
                if t != "run":
                    self.ro(f"`{name} {t}`")
                    return
                continue
            if a.procsub:
                self.deny("opaque.exec", f"`{name}` runs a script from a process substitution")
            self.ro(f"`{name} {t}`")
            for w in args[i:]:
                self.read_word(w, st)
            return
        self.interp_stdin(name, cmd, lang=lang)

    def h_node(self, name: str, args: list[Word], st: State, cmd: Cmd | None, depth: int) -> None:
        self._script_lang(name, "js", ("-e", "--eval", "-p", "--print", "-pe"), args, st, cmd,
                          ("-r", "--require", "--import", "--loader", "--experimental-loader"))

    def h_ruby(self, name: str, args: list[Word], st: State, cmd: Cmd | None, depth: int) -> None:
        self._script_lang(name, "ruby", ("-e",), args, st, cmd, ("-r", "-I", "-C"))

    def h_php(self, name: str, args: list[Word], st: State, cmd: Cmd | None, depth: int) -> None:
        self._script_lang(name, "php", ("-r",), args, st, cmd, ("-d", "-c"))

    def h_other_interp(self, name: str, args: list[Word], st: State, cmd: Cmd | None, depth: int) -> None:
        texts = [a.text for a in args]
        if any(t in ("-e", "-c", "--eval", "-E", "-x") for t in texts) or (cmd is not None and cmd.stdin in (
                "pipe", "heredoc", "herestring")) or (name in ("osascript", "expect") and not texts):
            self.deny("opaque.exec", f"`{name}` code cannot be checked by the guardian")
        self.ro(f"`{name}`")

    # -- databases --------------------------------------------------------------------------------------------
    def h_sql(self, name: str, args: list[Word], st: State, cmd: Cmd | None, depth: int) -> None:
        self.ro(f"`{name}`")
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
                    self.write_word(args[i + 1], st, f"`{name} -o` writes")
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
                self.deny("sql.unresolved", f"`{name}` runs SQL only known at run time")
            bad = codescan.destructive_sql(w.text)
            if bad:
                self.deny("sql.destructive", f"`{name}`: destructive SQL ({bad})")
        if cmd is not None and cmd.stdin in ("heredoc", "herestring"):
            text = cmd.stdin_text or ""
            if UNK in text:
                self.deny("sql.unresolved", f"SQL fed to `{name}` is only known at run time")
            bad = codescan.destructive_sql(text)
            if bad:
                self.deny("sql.destructive", f"`{name}`: destructive SQL ({bad})")
        elif cmd is not None and cmd.stdin == "pipe":
            prod = cmd.piped_from
            if isinstance(prod, Cmd) and prod.words and prod.words[0].text in ("echo", "printf"):
                text = " ".join(w.text for w in prod.words[1:])
                if UNK in text:
                    self.deny("sql.unresolved", f"SQL piped into `{name}` is only known at run time")
                bad = codescan.destructive_sql(text)
                if bad:
                    self.deny("sql.destructive", f"`{name}`: destructive SQL ({bad})")
            elif isinstance(prod, Cmd) and prod.words and prod.words[0].text.rsplit("/", 1)[-1] in (
                    "base64", "xxd", "openssl", "gunzip", "zcat", "curl", "wget", "eval"):
                self.deny("opaque.pipe", f"decoded or downloaded text piped into `{name}`")

    def h_mongo(self, name: str, args: list[Word], st: State, cmd: Cmd | None, depth: int) -> None:
        self.ro(f"`{name}`")
        for k, a in enumerate(args):
            if a.text in ("--eval",) and k + 1 < len(args):
                code = args[k + 1]
                if not code.known:
                    self.deny("sql.unresolved", f"`{name} --eval` code only known at run time")
                bad = codescan.destructive_mongo(code.text)
                if bad:
                    self.deny("sql.destructive", f"`{name}`: {bad} destroys data")
        if cmd is not None and cmd.stdin in ("heredoc", "herestring"):
            bad = codescan.destructive_mongo(cmd.stdin_text or "")
            if bad or UNK in (cmd.stdin_text or ""):
                self.deny("sql.destructive", f"`{name}`: {bad or 'a script only known at run time'}")

    def h_redis(self, name: str, args: list[Word], st: State, cmd: Cmd | None, depth: int) -> None:
        _, pos = split_opts(args, "hpanusrid", frozenset({"--user", "--pass", "--tls", "--cacert"}))
        self.ro("`redis-cli`")
        texts = [p.text for p in pos]
        if any(not p.known for p in pos[:1]):
            self.deny("sql.unresolved", "`redis-cli` command only known at run time")
        bad = codescan.destructive_redis(texts)
        if bad is None and cmd is not None and cmd.stdin in ("heredoc", "herestring"):
            bad = codescan.destructive_redis((cmd.stdin_text or "").split())
        if bad is None and texts and texts[0].upper() == "CONFIG" and len(texts) > 1 and texts[1].upper() == "SET":
            bad = "CONFIG SET"
        if bad is None and texts and texts[0].upper() in ("SHUTDOWN", "DEBUG", "SLAVEOF", "REPLICAOF", "MODULE"):
            bad = texts[0].upper()
        if bad:
            self.deny("sql.destructive", f"`redis-cli {bad}` destroys data")

    def h_dropdb(self, name: str, args: list[Word], st: State, cmd: Cmd | None, depth: int) -> None:
        self.deny("sql.destructive-command", f"`{name}` drops a database")

    def h_mysqladmin(self, name: str, args: list[Word], st: State, cmd: Cmd | None, depth: int) -> None:
        if any(a.text.lower() in ("drop", "shutdown") for a in args):
            self.deny("sql.destructive-command", "`mysqladmin drop` drops a database")
        self.ro("`mysqladmin`")

    # -- network ------------------------------------------------------------------------------------------------
    def h_http(self, name: str, args: list[Word], st: State, cmd: Cmd | None, depth: int) -> None:
        self.ro(f"`{name}`")
        if name == "curl":
            short, long = "dHXoueAbcDEFKrTxYyzCmQwPtUhq", frozenset({
                "--data", "--data-raw", "--data-binary", "--data-urlencode", "--data-ascii", "--json",
                "--header", "--request", "--output", "--user", "--referer", "--user-agent", "--cookie",
                "--cookie-jar", "--dump-header", "--form", "--form-string", "--config", "--range",
                "--upload-file", "--proxy", "--url", "--max-time", "--connect-timeout", "--retry",
                "--resolve", "--connect-to", "--cacert", "--cert", "--key", "--output-dir",
                "--write-out", "--unix-socket", "--proxy-user", "--oauth2-bearer", "--aws-sigv4",
                "--variable", "--expand-url", "--netrc-file", "--trace", "--trace-ascii", "--stderr",
                "--create-dirs", "--limit-rate", "--max-filesize", "--retry-delay", "--retry-max-time",
                "--interface", "--local-port", "--ciphers", "--tls-max", "--hostpubmd5", "--pubkey",
                "--socks5", "--socks5-hostname", "--preproxy", "--noproxy", "--doh-url", "--capath"})
        elif name == "wget":
            short, long = "OoaPtTUeiBYwQlADRIX", frozenset({
                "--output-document", "--output-file", "--append-output", "--directory-prefix",
                "--tries", "--timeout", "--user-agent", "--header", "--post-data", "--post-file",
                "--body-data", "--body-file", "--method", "--user", "--password", "--http-user",
                "--http-password", "--input-file", "--load-cookies", "--save-cookies", "--execute",
                "--level", "--accept", "--reject", "--domains", "--base", "--ca-certificate",
                "--certificate", "--private-key", "--referer", "--wait", "--limit-rate", "--quota"})
        else:
            short, long = "oaAv", frozenset({"--output", "--auth", "--auth-type", "--session",
                                              "--session-read-only", "--verify", "--cert", "--cert-key",
                                              "--proxy", "--timeout", "--format-options", "--pretty",
                                              "--style", "--print", "--max-redirects", "--download"})
        opts, pos = split_opts(args, short, long)
        urls: list[Word] = []
        for o, v in opts:
            if v is None:
                continue
            if (o in ("-o", "--output", "-O", "--output-document", "-D", "--dump-header", "-c", "--cookie-jar",
                     "--trace", "--trace-ascii", "--stderr", "--output-file", "-a", "--append-output",
                     "--save-cookies", "--session") and name != "wget") or (
                    name == "wget" and o in ("-O", "--output-document", "-o", "--output-file", "-a",
                                             "--append-output", "--save-cookies")):
                if v.text != "-":
                    self.write_word(v, st, f"`{name} {o}` writes")
            elif o in ("-P", "--directory-prefix", "--output-dir") and (name == "wget" or o == "--output-dir"):
                self.write_word(Word(v.text.rstrip("/") + "/x", v.raw), st, f"`{name} {o}` writes into")
            elif o in ("-d", "--data", "--data-binary", "--data-urlencode", "--data-ascii", "--json",
                       "-F", "--form", "-T", "--upload-file", "--post-file", "--body-file", "-b", "--cookie",
                       "--data-raw", "--form-string") or (o == "-i" and name == "wget") or o == "--input-file":
                txt = v.text
                if o in ("-T", "--upload-file", "--post-file", "--body-file", "-i", "--input-file"):
                    self.read_word(v, st)
                elif "@" in txt and o not in ("--data-raw", "--form-string"):
                    ref = txt.split("@", 1)[1].split(";", 1)[0]
                    if ref and ref != "-":
                        self.read_word(Word(ref), st)
            elif o in ("-K", "--config", "-e", "--execute") and name in ("curl", "wget"):
                if (o in ("-e", "--execute") and name == "wget") or o in ("-K", "--config"):
                    self.deny("net.unresolved-host", f"`{name} {o}` takes its targets from elsewhere")
            elif o in ("--url",):
                urls.append(v)
            elif o in ("-x", "--proxy", "--preproxy", "--socks5", "--socks5-hostname", "--connect-to",
                       "--resolve", "--doh-url", "--unix-socket"):
                if o in ("--connect-to", "--resolve"):
                    parts = v.text.split(":")
                    if len(parts) >= 3:
                        self.host_check("https://" + parts[-1 if o == "--resolve" else 2])
                        self.host_check("https://" + parts[0])
                else:
                    self.host_check(v.text if "://" in v.text else "http://" + v.text)
            elif o in ("--netrc-file", "--cert", "--key", "--cacert", "--certificate", "--private-key",
                       "--load-cookies"):
                self.read_word(v, st)
        if (_has(opts, "-n", "--netrc") and name == "curl") or _has(opts, "--netrc-optional"):
            self.deny("creds.read", f"`{name} --netrc` sends stored credentials")
        if name in ("http", "https", "httpie", "xh", "xhs", "curlie"):
            # httpie: [METHOD] URL [items...]; items like @file / field=@file read files
            posw = list(pos)
            if posw and posw[0].known and posw[0].text.upper() in ("GET", "POST", "PUT", "PATCH", "DELETE",
                                                                     "HEAD", "OPTIONS"):
                posw = posw[1:]
            if posw:
                urls.append(posw[0])
                for item in posw[1:]:
                    if "@" in item.text:
                        self.read_word(Word(item.text.split("@", 1)[1]), st)
        else:
            urls.extend(pos)
        if not urls and not pos:
            return
        for u in urls:
            text = u.text
            if name in ("http", "https", "xh", "httpie", "curlie") and text.startswith(":"):
                text = "http://localhost" + text
            elif "://" not in text:
                text = ("https://" if name == "https" else "http://") + text
            self.host_check(text)
        self.need("network_requests", "approval.network", f"`{name}` reaches the network")

    def h_socket(self, name: str, args: list[Word], st: State, cmd: Cmd | None, depth: int) -> None:
        if name == "openssl":
            sub = args[0].text if args else ""
            if sub in ("s_client",):
                for k, a in enumerate(args):
                    if a.text == "-connect" and k + 1 < len(args):
                        self.host_check("https://" + args[k + 1].text)
                self.ro("`openssl s_client`")
                return
            _opts, _pos = split_opts(args[1:], "", frozenset())
            for k, a in enumerate(args):
                if a.text in ("-out",) and k + 1 < len(args):
                    self.ro("`openssl -out`")
                    self.write_word(args[k + 1], st, "`openssl -out` writes")
                if a.text in ("-in", "-inkey", "-key") and k + 1 < len(args):
                    self.read_word(args[k + 1], st)
            return
        self.ro(f"`{name}`")
        if name == "socat":
            for a in args:
                if re.match(r"(?i)^(exec|system):", a.text):
                    self.deny("opaque.exec", "`socat EXEC:` runs a program")
        texts = [a for a in args if not a.text.startswith("-")]
        if any(a.text in ("-e", "-c", "--exec", "--sh-exec", "--lua-exec") for a in args):
            self.deny("opaque.exec", f"`{name} -e` runs a program")
        for a in texts[:1]:
            h = a.text
            if re.match(r"(?i)^(tcp|udp|ssl|openssl)[46]?:", h):
                h = h.split(":", 1)[1]
            if not a.known:
                self.deny("net.unresolved-host", f"`{name}` reaches a host only known at run time")
            self.host_check("tcp://" + h.split(":")[0])
        self.need("network_requests", "approval.network", f"`{name}` opens a connection")

    def h_gh(self, name: str, args: list[Word], st: State, cmd: Cmd | None, depth: int) -> None:
        self.cred_command(name, args)
        self.remote_destructive(name, args)
        texts = [a.text for a in args]
        if texts[:1] in (["auth"],) and texts[1:2] in (["token"],):
            self.deny("creds.command", "`gh auth token` prints credentials")
        read_only = texts[:1] in (["status"],) or texts[:2] in (
            ["pr", "view"], ["pr", "list"], ["pr", "diff"], ["pr", "checks"], ["pr", "status"],
            ["issue", "view"], ["issue", "list"], ["repo", "view"], ["run", "list"], ["run", "view"],
            ["auth", "status"], ["release", "list"], ["release", "view"], ["search", "issues"],
            ["search", "prs"], ["search", "code"], ["search", "repos"])
        if texts[:1] == ["api"]:
            if not any(t in ("-X", "--method", "-f", "-F", "--field", "--raw-field", "--input") or
                       t.startswith(("-X", "--method=")) for t in texts):
                read_only = True
        if not read_only:
            self.ro("`gh`")
        self.need("network_requests", "approval.network", "`gh` reaches GitHub")

    # -- opaque execution ------------------------------------------------------------------------------------
    def h_eval(self, name: str, args: list[Word], st: State, cmd: Cmd | None, depth: int) -> None:
        if any(not a.known or a.subst for a in args):
            self.deny("opaque.eval", "`eval` of text only known at run time (opaque execution)")
        self.walk(" ".join(a.text for a in args), st, depth + 1)

    def h_source(self, name: str, args: list[Word], st: State, cmd: Cmd | None, depth: int) -> None:
        if not args:
            return
        f = args[0]
        if f.procsub or not f.known or f.text.startswith(("/dev/fd/", "/dev/stdin", "/proc/self/fd")):
            self.deny("opaque.exec", f"`{name}` of generated text (opaque execution)")
        self.read_word(f, st)
        self.ro(f"`{name} {f.text}`")

    def h_trap(self, name: str, args: list[Word], st: State, cmd: Cmd | None, depth: int) -> None:
        opts, pos = split_opts(args, "", frozenset())
        if _has(opts, "-p", "-l") or not pos:
            return
        if not pos[0].known:
            self.deny("opaque.exec", "`trap` runs a command only known at run time")
        self.walk(pos[0].text, st.copy(vars={}), depth + 1)

    def h_alias(self, name: str, args: list[Word], st: State, cmd: Cmd | None, depth: int) -> None:
        for a in args:
            if "=" in a.text:
                body = a.text.split("=", 1)[1]
                if not a.known:
                    self.deny("opaque.exec", "an alias whose body is only known at run time")
                self.walk(body, st.copy(vars={}), depth + 1)

    # -- build tools and package runners ----------------------------------------------------------------
    def h_make(self, name: str, args: list[Word], st: State, cmd: Cmd | None, depth: int) -> None:
        opts, _pos = split_opts(args, "fCIjlowW", frozenset({"--file", "--makefile", "--directory",
                                                             "--include-dir", "--jobs", "--eval"}))
        f = _val(opts, "-f", "--file", "--makefile")
        if (f is not None and f.text in ("-", "/dev/stdin")) or _val(opts, "--eval") is not None:
            self.deny("opaque.exec", "`make -f -` / `--eval` runs rules the guardian cannot see")
        if f is not None and f.procsub:
            self.deny("opaque.exec", "`make -f <(...)` runs generated rules")
        self.ro("`make`")

    def h_runner(self, name: str, args: list[Word], st: State, cmd: Cmd | None, depth: int) -> None:
        _opts, pos = split_opts(args, "p" if name in ("npx",) else "", frozenset({"--package"}), stop_first=True)
        if name in ("yarn", "pnpm", "bun") and pos and pos[0].text in ("run", "test", "build", "lint", "start",
                                                                       "dev", "install", "add", "remove",
                                                                       "why", "list", "ls", "outdated"):
            self.ro(f"`{name} {pos[0].text}`")
            if pos[0].text in ("install", "add"):
                self.need("network_requests", "approval.network", f"`{name} {pos[0].text}`")
            return
        if name in ("yarn", "pnpm", "bun") and pos and pos[0].text in ("dlx", "exec", "x"):
            pos = pos[1:]
        elif name in ("poetry", "pipenv", "pdm", "hatch", "rye", "uv", "conda", "mamba", "pixi",
                      "bundle", "direnv"):
            if not pos or pos[0].text not in ("run", "exec"):
                self.ro(f"`{name}`")
                if pos and pos[0].text in ("add", "install", "sync", "update", "lock", "pip"):
                    self.need("network_requests", "approval.network", f"`{name} {pos[0].text}`")
                return
            pos = pos[1:]
            _o2, pos = split_opts(pos, "np" if name in ("conda", "mamba") else "", frozenset({"--with", "--python", "--env", "--name", "--prefix"}), stop_first=True)
        elif name == "dotenv":
            self.deny("creds.read", "`dotenv` loads a .env file into a command")
        if not pos:
            return
        self.leaf(pos, st, cmd, depth + 1)

    def h_npm(self, name: str, args: list[Word], st: State, cmd: Cmd | None, depth: int) -> None:
        texts = [a.text for a in args]
        if texts[:1] in (["exec"], ["x"]):
            _, pos = split_opts(args[1:], "c", frozenset({"--package", "--call"}), stop_first=True)
            c = next((args[k + 2] for k, t in enumerate(texts[1:]) if t in ("-c", "--call") and k + 2 < len(args)), None)
            if c is not None:
                self.walk(c.text, st.copy(vars={}), depth + 1)
            elif pos:
                self.leaf(pos, st, cmd, depth + 1)
            return
        if (texts[:1] in (["config"],) and texts[1:2] in (["get"], ["list"], ["ls"]) and any(
                "token" in t.lower() or "auth" in t.lower() for t in texts)) or (texts[:2] == ["config", "list"] and "-l" in texts):
            self.deny("creds.command", "`npm config get` of an auth token prints credentials")
        if texts[:2] in (["token", "list"], ["token", "create"]):
            self.deny("creds.command", "`npm token` prints credentials")
        if texts[:1] not in (["ls"], ["list"], ["view"], ["info"], ["outdated"], ["why"], ["explain"],
                             ["help"], ["search"], ["--version"], ["-v"]):
            self.ro("`npm`")
        if texts[:1] and texts[0] in defaults.NETWORK_SUBCOMMANDS["npm"]:
            self.need("network_requests", "approval.network", f"`npm {texts[0]}`")

    # -- git ---------------------------------------------------------------------------------------------------
    def h_git(self, name: str, args: list[Word], st: State, cmd: Cmd | None, depth: int) -> None:
        from zen.guard.rules_git import check_git

        check_git(self, args, st, cmd, depth)


# ---------------------------------------------------------------------------------------------
# helpers

_URL_IN_TEXT = re.compile(r"(?i)\b(?:https?|wss?|ftp)://[^\s'\"<>`]+")


def _looks_host(v: str) -> bool:
    return bool(re.match(r"^[A-Za-z0-9-]+(\.[A-Za-z0-9-]+)+(:\d+)?(/|$)", v)) and "/" not in v.split(".", maxsplit=1)[0]


def _url_host(url: str) -> tuple[str | None, int | None, str | None]:
    u = url.strip()
    if "://" not in u:
        u = "http://" + u
    scheme, _, rest = u.partition("://")
    hostpart = re.split(r"[/?#]", rest, maxsplit=1)[0]
    if "@" in hostpart:
        hostpart = hostpart.rsplit("@", 1)[1]
    port = None
    if hostpart.startswith("["):
        host = hostpart.split("]", 1)[0] + "]"
    else:
        host, _, p = hostpart.partition(":")
        if p.isdigit():
            port = int(p)
    host = host.strip().lower().rstrip(".")
    if host.startswith("{") or host == "":
        return (UNK if UNK in rest.split("/")[0] or not host else None), None, None
    return host, port, scheme.lower()


def _host_of(text: str) -> str | None:
    if "://" not in text:
        return None
    h, _, _ = _url_host(text)
    return h


def _sq(s: str) -> str:
    return "'" + s.replace("'", "'\\''") + "'"


def _remote(text: str) -> bool:
    head = text.split("/", 1)[0]
    return ":" in head and not text.startswith(("/", ".", "~"))


def _is_num_flag(w: Word) -> bool:
    return w.known and len(w.text) > 1 and w.text[0] == "-" and w.text[1:].isdigit()


def _is_mode_word(w: Word) -> bool:
    return w.known and bool(re.fullmatch(r"([0-7]{1,5}|([ugoa]*[-+=][rwxXstugo]*)(,[ugoa]*[-+=][rwxXstugo]*)*)", w.text)) \
        and not w.text.startswith("--")


def _quoted_after(prog: str, pos: int) -> str | None:
    m = re.match(r"\s*\"((?:[^\"\\]|\\.)*)\"\s*\)", prog[pos:])
    if m:
        return m.group(1).replace('\\"', '"')
    return None


def decide_bash(an: Analyser, command: str) -> None:
    try:
        an.bash(command)
    except ShellError as exc:
        an.deny(exc.rule, exc.reason)


__all__ = ["Analyser", "Denied", "decide_bash", "split_opts", "strictly_under"]

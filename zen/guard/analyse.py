"""The analyser core: what every simple command (after unwrapping) would do, judged by the policy.

The bash walker (shell.py) emits every simple command; `Analyser.on_cmd` checks its redirects and
assignments and hands its argv to `leaf()`, which applies the policy's own rules and then the rule
handler of the program (zen/guard/rules: one module per command family, one table from program
name to handler). Handlers unwrap launchers (bash -c, env, xargs, find -exec, ssh, ...) by calling
`leaf()` or `walk()` again, and report through the verbs here:

    deny(rule, reason)         raises Denied: the decision is deny
    need(switch, rule, reason) an approval, when the policy's require_approval switch is on
    beyond(rule, what)         an action past the worktree (autonomy levels, DESIGN section 6)
    ro(what)                   not read-only: denied at observe (and under the kill switch)
    delete_word / write_word / read_word   the path rules (worktree, .git, the guardian's own
                               files, credential stores)
    host_check(url)            the policy's high-consequence hosts

Code handed to interpreters and databases goes through scan/code.py, which calls back into the
same analyser (argv, shell_string, literal, sql, py_*).

Lean on purpose (imported by the hook): stdlib + tree-sitter + zen.guard only.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from importlib import import_module
from typing import TYPE_CHECKING, Any, NoReturn

from zen.guard.api import ALLOW, APPROVAL, DENY, Context, Decision
from zen.guard.paths.checks import PathChecks
from zen.guard.paths.resolve import Resolver, Target, norm, under
from zen.guard.policy import defaults
from zen.guard.policy.load import Policy
from zen.guard.policy.match import PolicyRules
from zen.guard.policy.rule import Rule
from zen.guard.rules import runs
from zen.guard.rules.table import HANDLERS, MULTICALL, SENDS_ARGUMENTS, script_identity
from zen.guard.scan.callbacks import CodeCallbacks
from zen.guard.scan.scripts import ScriptRuns, output_text
from zen.guard.shell.walk import Walker
from zen.guard.shell.words import UNK, Cmd, ShellError, State, Word, is_secret_name

MAX_LEAF_DEPTH = 12
# shell builtins: a file of the same name on $PATH does not run in their place
_BUILTINS = frozenset({"cd", "pushd", "popd", "echo", "printf", "test", "[", "[[", "true", "false", ":",
                       "export", "declare", "typeset", "local", "readonly", "unset", "set", "shift",
                       "source", ".", "eval", "exec", "exit", "return", "read", "wait", "trap", "alias",
                       "unalias", "hash", "type", "command", "builtin", "let", "shopt", "umask", "ulimit",
                       "jobs", "bg", "fg", "kill", "getopts", "mapfile", "readarray", "dirs", "times",
                       "enable", "break", "continue", "pwd", "history", "disown", "suspend", "caller",
                       "compgen", "complete", "compopt", "coproc", "fc", "help", "logout", "bind"})


class Denied(Exception):
    def __init__(self, decision: Decision) -> None:
        super().__init__(decision.reason)
        self.decision = decision


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


# interpreter options that load no code: NODE_OPTIONS=--max-old-space-size=4096 is fine,
# --require / --import / --loader / --inspect are not
_NO_CODE_OPTIONS = {
    "NODE_OPTIONS": re.compile(r"^--(max-old-space-size|max-semi-space-size|stack-size|enable-source-maps|"
                               r"no-warnings|trace-warnings|unhandled-rejections|dns-result-order|no-deprecation|"
                               r"trace-deprecation|throw-deprecation|openssl-legacy-provider|use-openssl-ca|"
                               r"experimental-vm-modules|experimental-specifier-resolution|"
                               r"no-experimental-fetch|max-http-header-size|title|report-on-signal|"
                               r"heapsnapshot-signal|trace-uncaught|abort-on-uncaught-exception)(=[\w.:-]*)?$"),
    "RUBYOPT": re.compile(r"^-(W[0-2]?|w|v|-enable=frozen-string-literal|-disable=did_you_mean)$"),
    "PERL5OPT": re.compile(r"^-(w|W|X|T|t)$"),
}


# variables that name programs or the folders programs, libraries and configuration come from
_PATH_LIKE = re.compile(r"PATH|LIB|DIRS?$|HOME$|_CMD$|COMMAND$|PROGRAM$|_BIN$|_EXE$|PAGER$|EDITOR$|SHELL$|"
                        r"BROWSER$|CONFIG|^(CC|CXX|CPP|LD|AR|AS|FC|MAKE|PYTHON\d?|NODE|PERL|RUBY|TERMINAL)$")
_JOB_TMP = re.compile(r"/tmp/zen-wall-\d+/[0-9a-f]{16}")   # zen.adapters.sandbox.run_dir_for
_SYSTEM_DIRS = ("/usr/", "/bin/", "/sbin/", "/lib/", "/lib64/", "/opt/", "/snap/", "/nix/store/")
_NULL_REDIRECT = re.compile(r"(?:\d*|&)>>?\s*/dev/null\b|\d*>&\s*\d+|\d*<&\s*\d+")


def _loads_no_code(name: str, value: Word) -> bool:
    pattern = _NO_CODE_OPTIONS.get(name)
    return pattern is not None and value.known and all(pattern.match(t) for t in value.text.split())


_FOLDERS: dict[tuple[str, str | None, tuple[str, ...]], list[str | None]] = {}


def _path_folders(value: str, cwd: str | None, roots: tuple[str, ...]) -> list[str | None]:
    """The folders of $PATH `value` inside `roots`, in order; None for a relative folder when
    the directory is unknown. The same for every command of a script (and of a batch)."""
    key = (value, cwd, roots)
    hit = _FOLDERS.get(key)
    if hit is None:
        hit = []
        for entry in value.split(":"):
            folder = norm(entry or ".", cwd) if (entry.startswith("/") or cwd) else None
            if folder is None or any(under(folder, r) for r in roots):
                hit.append(folder)
        if len(_FOLDERS) > 256:
            _FOLDERS.clear()
        _FOLDERS[key] = hit
    return hit


class Analyser(PathChecks, ScriptRuns, CodeCallbacks, PolicyRules):
    """One decision's worth of analysis (not reused across calls)."""

    def __init__(self, ctx: Context, policy: Policy, handler: Callable[[str], Handler]) -> None:
        # handler: program name -> the rule that judges it (zen.guard.rules.handler, the one table)
        self.handler = handler
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
        tmp = (ctx.env or {}).get("TMPDIR") or ""   # a Claude job's private one is the job's own
        if wt and _JOB_TMP.fullmatch(tmp):
            roots.append(tmp)
        self.roots = roots
        self.pending: Decision | None = None
        self.report: Decision | None = None
        # (op, Target) of every write and delete judged, for the coordinator's lease check
        self.writes: list[tuple[str, Target]] | None = None
        self._protected: Rule | None = None
        if policy.protected_paths:
            self._protected = getattr(policy, "_protected_rule", None)
            if self._protected is None:
                self._protected = Rule.from_dict({"id": "protected", "reason": "", "decision": "deny",
                                                  "match": {"path": list(policy.protected_paths)}})
                policy._protected_rule = self._protected  # type: ignore[attr-defined]
        self.rules = policy.rules_for(ctx.domain, self.level)
        self.text = ""
        self.st = State((self.cwd,))
        self.cmd: Cmd | None = None
        self.depth = 0
        self.env = dict(ctx.env) if ctx.env else {}
        self.aliases: set[str] = set()      # aliases the script defines (run by a later line)
        self.written: dict[str, str | None] = {}   # files the command writes: their text, if seen
        self.trees: list[str] = []          # folders it fills with files it cannot see
        self.memo: dict[str, Any] = {}      # what rule modules remember within one decision
        self._text_hits: dict[str, bool] = {}

    # -- outcomes ---------------------------------------------------------------------------------
    def deny(self, rule: str, reason: str) -> NoReturn:
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

    # -- entry points -----------------------------------------------------------------------------
    def bash(self, command: str) -> None:
        # policy `text:` rules see the command without its redirects into /dev/null or onto another
        # descriptor: `test -f .env 2>/dev/null` writes nothing, whatever a rule's `>` says
        # (each such redirect has a > or a <&: most commands have neither, and skip the search)
        self.text = _NULL_REDIRECT.sub(" ", command) if ">" in command or "<" in command else command
        self._text_hits = {}
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
            for target, append in cmd.writes:
                self.write_word(target, st, "redirects output into", output_text(cmd), append)
            for src in cmd.reads:
                self.read_word(src, st)
            if cmd.kind == "declaration":
                self.declaration(cmd)
            elif cmd.kind == "simple" and cmd.words:
                self.leaf(cmd.words, st, cmd, depth)
        finally:
            self.st, self.cmd = saved

    def assignment(self, name: str, value: Word, st: State, depth: int) -> None:
        if self.observe and (name in _EXEC_ENV_VARS or name in _OPAQUE_ENV_VARS or _PATH_LIKE.search(name)):
            self.ro(f"setting {name} (it names programs or where they are found)")
        if name in defaults.PACKAGE_SOURCE_VARS:
            self.package_var(name, value)
        if name in _EXEC_ENV_VARS and value.text:
            self.walk(value.text, st.copy(cwds=st.cwds), depth + 1)
        elif name in _OPAQUE_ENV_VARS and name not in ("PATH", "PYTHONPATH", "IFS") and value.text and \
                not _loads_no_code(name, value):
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
        for n in names:
            var, eq, value = n.text.partition("=")
            if eq and var in defaults.PACKAGE_SOURCE_VARS:
                self.package_var(var, Word(value, n.raw))
        if any("p" in f for f in flags) and any(is_secret_name(n.text) for n in names):
            self.deny("creds.secret-echo", f"`{name} -p` prints a secret-looking variable")
        self.ro(f"`{name}`") if name != "local" and names else None

    def package_var(self, name: str, value: Word) -> None:
        # the package rules load only when a command sets an installer's index variable (lean hook)
        import_module("zen.guard.rules.pkg").env_source(self, name, value)

    def package_config(self, path: str, content: str | None) -> None:
        """A package manager's configuration file written (.npmrc, pip.conf, ...): its indexes."""
        import_module("zen.guard.rules.pkg").config_file(self, path, content)   # loaded as above

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
        prog = head.text
        if head.glob and prog not in ("[", "[["):
            self.deny("shell.unresolved-command", f"the program name `{head.raw}` is a pattern: which "
                      "program runs depends on the files it matches")
        name = prog.rsplit("/", 1)[-1] if "/" in prog else prog
        args = words[1:]
        if not name or (name.startswith("-") and name != "-"):
            self.deny("shell.unresolved-command", f"cannot tell which program `{prog}` runs")
        if "/" not in prog and name not in _BUILTINS:
            found = self.on_search_path(name, st, cmd)
            if found is not None:    # a file the agent can write, found on $PATH before the system's
                prog, head = found, Word(found, head.raw)
        if "/" in prog:
            if self.observe:
                self.observe_program(prog, st)
            name = self.program_name(prog, name, st)
            if name != "zen":        # zen's own script (or a copy of it) is judged as zen
                self.run_file(head, st, None, f"`{prog}`", args)
        elif name in self.aliases and head.raw == prog:
            self.deny("shell.alias", f"`{name}` is an alias the same command defines: what it runs is "
                      "not what it says")
        self._secrets(name, args, cmd)
        self.policy_rules(name, args, st, cmd)
        if name in runs.CONCERNS:
            runs.before(self, name, args, st, cmd, depth)
        self.handler(name)(self, name, args, st, cmd, depth)

    def observe_program(self, prog: str, st: State) -> None:
        """At observe, a program outside the system's folders (in the worktree, where the agent
        writes it) is not read-only, whatever its name (`./ls`, `PATH=.:$PATH ls`)."""
        t = self.resolver.target(prog, st.cwd, st.links, follow_last=True)
        if t is None or not t.path.startswith(_SYSTEM_DIRS) or any(under(t.path, r) for r in self.roots):
            self.ro(f"`{prog}` (a program outside the system's folders)")

    def _secrets(self, name: str, args: list[Word], cmd: Cmd | None) -> None:
        """A secret-looking variable sent to another host, or fed to a program on its input."""
        if name in SENDS_ARGUMENTS:
            for a in args:
                if a.secret and not a.raw.lstrip("\"").startswith("${#"):
                    self.deny("creds.exfil", f"`{name}` sends a secret-looking variable ({a.raw}) to another "
                              "host; credentials never pass through an agent (a gate holds them: zen gate)")
        if cmd is not None and cmd.stdin_secret:
            self.deny("creds.secret-echo", f"feeds a secret-looking variable to `{name}` on its input, which "
                      "can print or send it")

    def on_search_path(self, name: str, st: State, cmd: Cmd | None) -> str | None:
        """The file `name` runs when $PATH holds a folder of the worktree (or a relative one) where
        this command writes it or it exists; None when every folder on $PATH is the system's."""
        value: str | None
        assigned = dict(cmd.assigns).get("PATH") if cmd is not None else None
        if assigned is not None:
            value = assigned.text if assigned.known else None
        elif "PATH" in st.vars:
            value = st.vars["PATH"]
        else:
            value = self.env.get("PATH", "")
        if value is None or UNK in value:
            self.deny("shell.unresolved-command", f"`{name}` is looked up in a $PATH only known at run time")
        for folder in _path_folders(value, st.cwd, tuple(self.roots)):
            if folder is None:
                self.deny("shell.unresolved-command", f"`{name}` is looked up in a relative $PATH folder "
                          "from a directory only known at run time")
            path = folder.rstrip("/") + "/" + name
            known, _ = self._written(path)
            if known:
                return path
            if self.ctx.read is not None:
                try:
                    if self.ctx.read(path) is not None:
                        return path
                except OSError:
                    return path
        return None

    def program_name(self, prog: str, name: str, st: State) -> str:
        """The name a program path is judged by: through links (made earlier in the script or on
        disk) the program they reach, when the handler table knows it (`ln -s /bin/rm x; ./x`);
        a script whose first bytes say what it is (a copy of zen's console script is zen)."""
        t = self.resolver.target(prog, st.cwd, st.links, follow_last=True)
        if t is None:
            return name
        real = t.path.rsplit("/", 1)[-1]
        if real != name and real not in MULTICALL and (real in HANDLERS or real == "zen"):
            return real
        if self.ctx.read is not None and name not in HANDLERS:
            try:
                head = self.ctx.read(t.path)
            except OSError:
                head = None
            if head:
                return script_identity(head) or name
        return name

    def payload(self, words: list[Word], st: State, cmd: Cmd | None, depth: int) -> None:
        """Run a wrapped command (its argv)."""
        self.leaf(words, st, cmd, depth + 1)


if TYPE_CHECKING:
    # a rule handler (zen/guard/rules): (analyser, program, args, state, command, depth)
    Handler = Callable[[Analyser, str, list[Word], State, Cmd | None, int], None]


def decide_bash(an: Analyser, command: str) -> None:
    try:
        an.bash(command)
    except ShellError as exc:
        an.deny(exc.rule, exc.reason)

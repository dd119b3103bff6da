"""The analyser's callbacks from the code scanners, and the checks they share with the rules.

scan/code.py (Python, JS, shell, SQL handed to an interpreter or a database) reports what the code
would do through these verbs; the rule handlers call the shared checks too:

    argv / shell_string        a command the code would run: judged like one on the command line
    literal / sql / py_*       a string, a SQL text, a file mode, a network call, a link, an
                               import, a path the code would touch
    sdk(lang, module)          the SDK of a high-consequence API: denied (use a gate)
    host_check(url)            the policy's high-consequence hosts and zen serve's own API
    mode_int / mode_text / symbolic_mode   world-writable and setuid modes

A mixin of Analyser (analyse.py), which supplies the verbs (deny, need, ro, leaf, walk) and the
decision's context; PathChecks and ScriptRuns supply the path verbs.

Lean on purpose: imported by the hook (stdlib + zen.guard only).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, NoReturn, cast

from zen.guard.api import Context
from zen.guard.paths.resolve import norm
from zen.guard.policy import defaults
from zen.guard.scan import sql as sqlscan
from zen.guard.scan.hosted import mutating_call
from zen.guard.shell.urls import URL_IN_TEXT, is_loopback, looks_host, url_host
from zen.guard.shell.words import UNK, Cmd, State, Word, lit
from zen.store import layout

if TYPE_CHECKING:
    from zen.guard.analyse import Analyser
    from zen.guard.policy.load import Policy


class CodeCallbacks:
    """What the code scanners report, judged (Analyser supplies the attributes and the verbs)."""

    ctx: Context
    policy: Policy
    st: State
    depth: int
    # supplied by Analyser, PathChecks and ScriptRuns (annotations only: a stub here would win the MRO)
    deny: Callable[[str, str], NoReturn]
    need: Callable[[str, str, str], None]
    ro: Callable[[str], None]
    leaf: Callable[[list[Word], State, Cmd | None, int], None]
    walk: Callable[[str, State, int], None]
    literal_paths: Callable[[str, str], None]
    link_target: Callable[..., None]
    write_word: Callable[..., None]
    read_word: Callable[..., None]
    delete_word: Callable[..., None]
    # -- codescan callbacks ------------------------------------------------------------------------
    def argv(self, argv: list[str], where: str) -> None:
        if not argv:
            return
        self.leaf([lit(a) for a in argv], self.st, None, self.depth + 1)

    def shell_string(self, text: str, where: str) -> None:
        self.walk(text, self.st.copy(vars={}), self.depth + 1)

    def literal(self, text: str, where: str) -> None:
        self.literal_paths(text, where)
        if "://" in text or "." in text:
            for m in URL_IN_TEXT.finditer(text):
                self.host_check(m.group(0), f"{where}: ")

    def sql(self, text: str, where: str) -> None:
        bad = sqlscan.destructive_sql(text)
        if bad:
            self.deny("sql.destructive", f"{where}: destructive SQL ({bad})")

    def py_mode(self, mode: Any, where: str) -> None:
        if not isinstance(mode, int):
            self.deny("perm.unresolved", f"{where}: sets a file mode the guardian cannot resolve")
        self.mode_int(mode, where)

    def py_net(self, fn: str, values: list[Any], where: str, method: str | None = None) -> None:
        self.ro(f"{where}: a network call")
        flat = [x for v in values for x in (v if isinstance(v, (list, tuple)) else [v])]   # (host, port)
        urls = [v for v in flat if isinstance(v, str) and ("://" in v or looks_host(v))]
        for u in urls:
            self.host_check(u, f"{where}: ")
            self.py_hosted(u if "://" in u else "https://" + u, method, f"{where}: {fn}()")
        last = fn.rsplit(".", 1)[-1].lower()
        if not urls and last in ("get", "post", "put", "patch", "delete", "head", "options", "request",
                                 "urlopen", "stream", "fetch", "send", "request_url", "urlretrieve"):
            self.deny("net.unresolved-host", f"{where}: {fn}() reaches a host the guardian cannot "
                      "resolve")
        self.need("network_requests", "approval.network", f"{where}: {fn}()")

    def py_hosted(self, url: str, method: str | None, where: str) -> None:
        mutating_call(cast("Analyser", self), url, method, where)

    def py_link(self, target: Any, link: Any, hard: bool, where: str) -> None:
        if not isinstance(target, str) or not isinstance(link, str):
            self.deny("fs.unresolved-target", f"{where} makes a link the guardian cannot resolve")
        self.ro(where)
        base = norm(link, self.st.cwd)
        bases = [base.rsplit("/", 1)[0] or "/" if base else None] if not hard else list(self.st.cwds)
        self.link_target(lit(target), bases, self.st, hard, where)
        self.write_word(lit(link), self.st, f"{where} creates a link at")

    def sdk(self, lang: str, module: str, where: str) -> None:
        """Code that imports the SDK of a high-consequence API calls it raw: denied (use a gate)."""
        top = module if lang == "js" and module.startswith("@") else module.split(".", maxsplit=1)[0].split("/", maxsplit=1)[0]
        if lang == "js" and module.startswith("@"):
            top = "/".join(module.split("/")[:2])
        if top in defaults.HIGH_CONSEQUENCE_SDKS.get(lang, ()):
            self.deny("net.sdk", f"{where}: uses {top}, the SDK of a high-consequence API (payments, "
                      "marketing, email/SMS, helpdesk): declare an integration and use `zen gate NAME`")

    def py_import(self, module: str, where: str) -> None:
        self.sdk("python", module, where)
        if module == "zen" or module.startswith("zen."):
            if self.ctx.agent:
                self.deny("self.zen-command", f"{where}: imports zen's own code ({module}), and an agent is "
                          "never a human: use the zen CLI's read-only commands")
            self.ro(f"{where}: zen's own code")

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

    # -- shared checks -----------------------------------------------------------------------------
    def host_check(self, url: str, prefix: str = "") -> None:
        host, port, scheme = url_host(url)
        if host is None:
            return
        if UNK in host or not host:
            self.deny("net.unresolved-host", f"{prefix}the host of {url.replace(UNK, '$…')!s} is only "
                      "known at run time")
        if self.ctx.agent and is_loopback(host) and (port or (443 if scheme in ("https", "wss") else 80)) \
                in self.zen_ports():
            self.deny("self.zen-api", f"{prefix}{url} is zen serve's API, the human's controls, and an agent "
                      "is never a human: use the zen CLI's read-only commands")
        hit = self.policy.match_host(host, port, scheme)
        if hit is not None:
            _pattern, cat, integ = hit
            how = f"use `zen gate {integ} METHOD PATH`" if integ else \
                "declare an integration in policy/guardian.yaml and use `zen gate NAME`"
            self.deny("net.high-consequence", f"raw call to {host} ({cat}): {how}")

    def zen_ports(self) -> set[int]:
        """The ports of this home's zen serve: the default and the one it runs on."""
        ports = {layout.SERVER_PORT}
        if self.ctx.home:
            try:
                with open(f"{self.ctx.home}/{layout.CONTROL}/{layout.SERVER_INFO}", "rb") as f:
                    found = re.search(rb'"port"\s*:\s*(\d+)', f.read(4096))
                if found:
                    ports.add(int(found.group(1)))
            except OSError:
                pass
        return ports

    def mode_int(self, mode: int, where: str) -> None:
        if mode & 0o002:
            self.deny("perm.world-writable", f"{where}: world-writable mode {oct(mode)}")
        if mode & 0o6000:
            self.deny("perm.setuid", f"{where}: setuid/setgid mode {oct(mode)}")

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

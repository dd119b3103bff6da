"""The analyser's path checks: where a delete, write, read or link lands, and whether it may.

    delete_word / write_word / read_word / link_target   one word's every possible target
    check(target, op)     the guardian's own files, the worktree root, .git, .zen, outside

A path is resolved lexically from every working directory the script may be in, then through
the links the script made and the symlinks on disk (paths.Resolver). A mixin of Analyser
(analyse.py), which supplies the verbs (deny, need, ro) and the decision's context.

Lean on purpose: imported by the hook (stdlib + zen.guard only).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, NoReturn

from zen.guard.api import Context
from zen.guard.paths.records import record_hit
from zen.guard.paths.resolve import (
    HOME_PROTECTED,
    HOME_SECRETS,
    SAFE_DEVICES,
    Resolver,
    Target,
    credential_hit,
    glob_hits_dot,
    under,
    zen_protected,
)
from zen.guard.policy import defaults
from zen.guard.shell.words import FOUND, UNK, State, Word
from zen.store.layout import WORKTREE_PRIVATE, WORKTREE_TMP

if TYPE_CHECKING:
    from zen.guard.policy.load import Policy
    from zen.guard.policy.rule import Rule


class PathChecks:
    """The path rules of one decision (Analyser supplies the attributes and the verbs)."""

    ctx: Context
    policy: Policy
    resolver: Resolver
    roots: list[str]
    home: str | None
    user_home: str | None
    worktree: str | None
    cwd: str
    _protected: Rule | None
    writes: list[tuple[str, Target]] | None    # (op, Target) judged, for the coordinator's lease check
    # supplied by Analyser and ScriptRuns (annotations only: a stub here would win the MRO)
    deny: Callable[[str, str], NoReturn]
    need: Callable[[str, str, str], None]
    ro: Callable[[str], None]
    record_write: Callable[..., None]
    package_config: Callable[[str, str | None], None]

    # -- paths --------------------------------------------------------------------------------------
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
        # the reason a human reads: the stand-ins for unknown text and find's files spelled out
        shown = w.text.replace(UNK, "$…").replace(FOUND, "…")
        self.need("file_deletes", "approval.file-delete", f"{what} {shown}")

    def write_word(self, w: Word, st: State, what: str, content: str | None = None, append: bool = False,
                   keep: bool = False) -> None:
        """`what` writes `w` (`content`: the text written, when the guardian can see it; `keep`: the
        text stays what it was, e.g. chmod, touch)."""
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
            if not keep:
                self.record_write(t, content, append)
                if t.path.rsplit("/", 1)[-1] in defaults.PACKAGE_CONFIG_FILES:
                    self.package_config(t.path, content)
        self.ro(f"writing {w.raw}")

    def read_word(self, w: Word, st: State, recursive: bool = False) -> None:
        found = self.targets(w, st, follow_last=True)
        ts: list[Target | None] = list(found) if found else [None]
        for t in ts:
            if t is not None and t.path.startswith(("/dev/tcp/", "/dev/udp/")):
                self.deny("net.raw-socket", f"opens a network socket ({t.path})")
            if t is not None and self.home:
                self._home_secret(t, recursive or t.children)
            hit = credential_hit(t.path if t is not None else None, w.text, self.user_home,
                                 self.policy.credential_paths[len(defaults.CREDENTIAL_PATHS):],
                                 recursive or bool(t and t.children))
            if hit is not None:
                break
        if hit is not None:
            self.deny("creds.read", f"reads a credential store ({hit}); credentials never pass "
                      "through an agent")

    def link_target(self, target: Word, bases: list[str | None], st: State, hard: bool, what: str) -> None:
        """A link about to be made to `target` (read from each of `bases`): never to the guardian's
        own files, and a hard link never to anything outside the worktree, since a write through
        it could not be seen afterwards."""
        for base in bases or [None]:
            t = self.resolver.target(target.text, base, st.links, follow_last=True)
            if t is None:
                self.deny("fs.unresolved-target", f"{what} links to a path only known at run time "
                          f"({target.raw})")
            prot = zen_protected(t.path, self.home, self.user_home, False)
            if prot is not None:
                self.deny("fs.link-protected", f"{what} links to {target.raw}: {prot} must not be "
                          "reachable through a link")
            if self._protected is not None and self._protected.path_matches(t.path, self.worktree or self.cwd,
                                                                            self.user_home):
                self.deny("policy.protected-path", f"{what} links to {target.raw}, which the policy protects")
            if hard and not any(under(t.path, r) for r in self.roots):
                self.deny("fs.link-outside", f"{what} makes a hard link to {target.raw}, outside the "
                          "worktree: a write through it could not be seen")

    def _home_secret(self, t: Target, recursive: bool) -> None:
        for name in HOME_SECRETS:
            secret = f"{(self.home or '').rstrip('/')}/{name}"
            if under(t.path, secret) or (recursive and under(secret, t.path)):
                self.deny("creds.read", f"reads zen's {name} (a human's key to every zen command); "
                          "an agent never holds it")
        hit = record_hit(t.path, recursive, self.home or "/", self.ctx.job_id, self.roots, self.ctx.read)
        if hit is not None and self.ctx.agent:
            self.deny("self.records", f"reads {hit}")

    def check(self, t: Target, op: str, what: str, w: Word | None = None) -> None:
        """Deletes/writes: the guardian's own files, the worktree root, .git, .zen, outside."""
        if self.writes is not None:
            self.writes.append((op, t))
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
                                                                        self.user_home) and not any(
                under(path, f"{r}/{WORKTREE_TMP}") for r in self.roots):   # a copy in $TMPDIR is not it
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
                    for special in (".git", WORKTREE_PRIVATE):
                        if glob_hits_dot(t.pattern or "*", special):
                            self.deny("fs.git-dir" if special == ".git" else "fs.zen-dir",
                                      f"{what} {label}, which reaches the worktree's {special}")
                    return
                if first == ".git":
                    self.deny("fs.git-dir", f"{what} the worktree's .git ({label}): that destroys "
                              "history")
                if first == WORKTREE_PRIVATE:
                    self.deny("fs.zen-dir", f"{what} the worktree's {WORKTREE_PRIVATE} ({label})")
                return
        where = "the job's worktree" if self.worktree else "the current directory"
        self.deny("fs.outside-worktree", f"{what} {label}, outside {where} "
                  f"({self.worktree or self.cwd})")

    def _contains_protected(self, path: str) -> bool:
        cands: list[str] = []
        if self.home:
            cands.extend(self.home.rstrip("/") + "/" + p for p in HOME_PROTECTED)
        if self.user_home:
            cands.extend([self.user_home + "/.claude", self.user_home + "/.claude.json"])
        for root in self.roots:
            cands.append(root + "/.claude")
        return any(under(c, path) for c in cands) or path.endswith("/.claude")

"""Path facts for the guardian: resolution (lexical, then symlinks where they exist), the
worktree sandbox, the guardian's own files and the credential stores.

Lean on purpose (imported by the hook): stdlib only.
"""

from __future__ import annotations

import fnmatch
import functools
import posixpath
import re
from collections.abc import Callable
from fnmatch import fnmatchcase

from zen.guard.paths.procfs import proc_hit
from zen.guard.policy import defaults
from zen.guard.shell.words import FOUND, UNK
from zen.store import layout

_GLOB = re.compile(r"[*?\[]")

# Files in the zen home the guardian depends on: never written, deleted, moved or chmod-ed.
HOME_PROTECTED = (layout.POLICY, layout.CONTROL, layout.APPROVALS, layout.EVIDENCE, layout.INCIDENTS,
                  layout.CONFIG, layout.LOGS, layout.SPOOL, layout.JOBS, layout.COORD)
# read by no agent either: zen serve's bearer token is a human's key to every zen command; the
# telemetry secret would let an agent report (and so spend against limits) as any other job; the
# team key would let it speak for any job to zen's MCP server (zen.store.teamkey)
HOME_SECRETS = (f"{layout.CONTROL}/{layout.API_TOKEN}", f"{layout.CONTROL}/{layout.OTLP_SECRET}",
                f"{layout.CONTROL}/{layout.TEAM_KEY}")
_SETTINGS_RE = re.compile(r"(^|/)\.claude/settings[^/]*\.json$")
_JOB_SETTINGS_RE = re.compile(rf"^{layout.JOBS}/[^/]+/{re.escape(layout.CLAUDE_SETTINGS)}$")
# agent CLIs' configuration (hooks, MCP servers, commands): written by no agent, wherever it is
AGENT_CONFIG_DIRS = frozenset({".claude", ".codex", ".gemini"})
AGENT_CONFIG_FILES = frozenset({".mcp.json"})
SAFE_DEVICES = ("/dev/null", "/dev/stdout", "/dev/stderr", "/dev/tty", "/dev/zero")


def under(path: str, root: str) -> bool:
    """`path` is `root` or inside it."""
    return path == root or path.startswith(root.rstrip("/") + "/") or root == "/"


def strictly_under(path: str, root: str) -> bool:
    return path != root and under(path, root)


# The pure functions below are cached: a batch, or the resident guardian, asks them about the
# same few paths over and over (the bash walker resolves every word of every command).
_CACHED = 8192


@functools.lru_cache(maxsize=_CACHED)
def norm(path: str, base: str | None) -> str | None:
    """The absolute, normalised form of `path` (None when relative to an unknown base)."""
    if not path.startswith("/"):
        if base is None:
            return None
        path = base.rstrip("/") + "/" + path
    out = posixpath.normpath(path)
    return "/" + out.lstrip("/") if out.startswith("//") else out


class Target:
    """One path an operation touches. `children`: a glob or find/xargs stand-in below `path`
    (the operation reaches what is inside, not `path` itself); `pattern` is that glob part."""

    __slots__ = ("children", "path", "pattern")

    def __init__(self, path: str, children: bool = False, pattern: str = "") -> None:
        self.path = path
        self.children = children
        self.pattern = pattern

    def __repr__(self) -> str:
        return f"Target({self.path!r}{', children' if self.children else ''})"


class Resolver:
    def __init__(self, realpath: Callable[[str], str] | None) -> None:
        self._realpath = realpath
        self._memo: dict[str, str] = {}
        self.realpath = self._cached if realpath is not None else None

    def _cached(self, path: str) -> str:
        """One decision asks about the same few directories many times: each lstat chain once."""
        hit = self._memo.get(path)
        if hit is None:
            assert self._realpath is not None
            hit = self._memo[path] = self._realpath(path)
        return hit

    def real(self, path: str, links: dict[str, str], follow_last: bool) -> str:
        """Resolve links made earlier in the script and symlinks on disk (where they exist)."""
        for _ in range(8):
            changed = False
            for link, dest in links.items():
                if path == link and not follow_last:
                    continue
                if under(path, link) and link != "/":
                    path = dest + path[len(link):]
                    changed = True
            if not changed:
                break
        if self.realpath is not None:
            try:
                if follow_last:
                    path = self.realpath(path)
                else:
                    head, tail = posixpath.split(path)
                    path = posixpath.join(self.realpath(head or "/"), tail) if tail else self.realpath(path)
            except (OSError, ValueError):
                pass
        return path

    def target(self, text: str, cwd: str | None, links: dict[str, str], follow_last: bool = False
               ) -> Target | None:
        """The Target of a word (None when its value or base is unknown)."""
        if UNK in text or text == "":
            return None
        trailing = text.endswith("/")
        if FOUND in text or _GLOB.search(text):
            parts = text.split("/")
            fixed: list[str] = []
            pattern = ""
            for p in parts:
                if FOUND in p or _GLOB.search(p):
                    pattern = p.replace(FOUND, "*")
                    break
                fixed.append(p)
            base = "/".join(fixed) if fixed != [""] else "/"
            if base == "":
                base = "."
            path = norm(base, cwd)
            if path is None:
                return None
            return Target(self.real(path, links, True), True, pattern)
        path = norm(text, cwd)
        if path is None:
            return None
        return Target(self.real(path, links, follow_last or trailing), False)


def glob_hits_dot(pattern: str, name: str) -> bool:
    """Would the shell glob `pattern` match the dot-file `name` (dotglob off)?"""
    return pattern.startswith(".") and fnmatchcase(name, pattern)


@functools.lru_cache(maxsize=_CACHED)
def zen_protected(path: str, home: str | None, user_home: str | None, subtree: bool) -> str | None:
    """What of zen's own files `path` touches (None when nothing). `subtree`: the operation
    reaches everything below `path` (a delete or move)."""
    if _SETTINGS_RE.search(path):
        return "Claude Code settings (the hook registration)"
    if subtree and path.rsplit("/", 1)[-1] == ".claude":
        return "a .claude directory (the hook registration)"
    hit = _agent_config(path)
    if hit is not None:
        return hit
    if user_home:
        uh = user_home.rstrip("/")
        if path == uh + "/.claude.json" or (subtree and under(uh + "/.claude.json", path)):
            return "~/.claude.json"
        if subtree and under(uh + "/.claude", path):
            return "~/.claude (the hook registration)"
    if home:
        h = home.rstrip("/") or "/"
        for name in HOME_PROTECTED:
            p = h + "/" + name
            if under(path, p) or (subtree and under(p, path)):
                return f"zen's own files ({name})"
        if under(path, h + "/" + layout.JOBS):
            rel = path[len(h) + 1:]
            if _JOB_SETTINGS_RE.match(rel) or (subtree and (rel == "jobs" or rel.count("/") <= 1)):
                return f"a job's hook registration ({layout.JOBS}/*/{layout.CLAUDE_SETTINGS})"
    return None


def _agent_config(path: str) -> str | None:
    """An agent CLI's configuration: .claude/**, .codex/**, .gemini/** and .mcp.json, wherever they
    are (the worktree's are read by the next session, and by every job once the branch lands): the
    directory itself too, so a folder renamed, copied or linked into place is judged by where it
    lands (`mv c2 .claude`, `cp -r d .claude`, `ln -s d .claude`; security-findings M12)."""
    if "/." not in path:
        return None
    for part in path.split("/"):
        if part in AGENT_CONFIG_DIRS:
            return f"an agent's configuration ({part}/: hooks, MCP servers and commands it runs unguarded)"
        if part in AGENT_CONFIG_FILES:
            return f"an agent's configuration ({part}: the MCP servers it starts)"
    return None


@functools.lru_cache(maxsize=_CACHED)
def credential_hit(path: str | None, text: str, user_home: str | None, extra: tuple[str, ...] = (),
                   recursive: bool = False) -> str | None:
    """The credential store a read of `path` (or of the word `text`) reaches, else None."""
    if (path is not None and path.startswith("/proc")) or text.startswith("/proc"):
        hit = proc_hit(path, text, recursive)
        if hit is not None:
            return hit
    uh = (user_home or "").rstrip("/")
    cands: list[str] = []
    if path is not None:
        cands.append(path)
    name_src = (path or "") + "/" + text.replace(UNK, "/")
    comps = [c for c in name_src.split("/") if c]
    base = comps[-1] if comps else ""
    any_name = _name_patterns(extra)
    if _surely_no_entry(path, comps, uh, extra, recursive, any_name):
        entries: tuple[str, ...] = ()
    else:
        entries = (*defaults.CREDENTIAL_PATHS, *extra)
    for entry in entries:
        if entry.startswith("~/"):
            if not uh or path is None:
                continue
            p = uh + entry[1:]
            if under(path, p) or (recursive and strictly_under(p, path)):
                return entry
        elif entry.startswith("/"):
            if path is None:
                continue
            if _GLOB.search(entry):
                parts = entry.split("/")
                pp = path.split("/")
                if len(pp) >= len(parts) and all(fnmatchcase(a, b) for a, b in zip(pp, parts, strict=False)):
                    return entry
            elif under(path, entry) or (recursive and strictly_under(entry, path)):
                return entry
        else:  # a bare name: one combined pattern first, this entry only on a hit
            for c in comps:
                if any_name.match(c) and fnmatchcase(c, entry) and not _template(c):
                    return entry
    if path is None and text.startswith("/") and UNK in text:
        probe = text.replace(UNK, "x")
        for entry in (*defaults.CREDENTIAL_PATHS, *extra):
            if entry.startswith("/") and _GLOB.search(entry):
                parts = entry.split("/")
                pp = probe.split("/")
                if len(pp) >= len(parts) and all(fnmatchcase(a, b) for a, b in zip(pp, parts, strict=False)):
                    return entry
    for c in [*comps[:-1], base]:
        if c in defaults.CREDENTIAL_DIR_NAMES:
            return c
    return None


@functools.lru_cache(maxsize=8)
def _fixed_paths(uh: str, extra: tuple[str, ...]) -> tuple[frozenset[str], tuple[str, ...]]:
    """The credential entries that are plain paths (home ones expanded), as a set and a tuple."""
    out = []
    for e in (*defaults.CREDENTIAL_PATHS, *extra):
        if e.startswith("~/") and uh:
            out.append(uh + e[1:])
        elif e.startswith("/") and not _GLOB.search(e):
            out.append(e)
    return frozenset(out), tuple(out)


def _surely_no_entry(path: str | None, comps: list[str], uh: str, extra: tuple[str, ...], recursive: bool,
                     any_name: re.Pattern[str]) -> bool:
    """A quick negative answer for the common case (no credential anywhere near): the full scan
    of the entry list, which also names the entry that matched, runs only when this says maybe."""
    if any(any_name.match(c) for c in comps):
        return False
    if path is None:
        return True
    exact, listed = _fixed_paths(uh, extra)
    probe = path.rstrip("/") or "/"
    while True:
        if probe in exact:
            return False
        if probe in ("/", ""):
            break
        probe = probe.rsplit("/", 1)[0] or "/"
    if recursive and any(strictly_under(e, path) for e in listed):
        return False
    pp = path.split("/")
    for e in (*defaults.CREDENTIAL_PATHS, *extra):
        if e.startswith("/") and _GLOB.search(e):
            parts = e.split("/")
            if len(pp) >= len(parts) and all(fnmatchcase(a, b) for a, b in zip(pp, parts, strict=False)):
                return False
    return True


@functools.lru_cache(maxsize=8)
def _name_patterns(extra: tuple[str, ...]) -> re.Pattern[str]:
    """Every bare-name credential pattern as one regex, so most words are ruled out in one match."""
    names = [e for e in (*defaults.CREDENTIAL_PATHS, *extra) if not e.startswith(("~/", "/"))]
    return re.compile("|".join(f"(?:{fnmatch.translate(n)})" for n in names) or "(?!)")


def _template(name: str) -> bool:
    return any(fnmatchcase(name, e) for e in defaults.CREDENTIAL_EXCEPTIONS)

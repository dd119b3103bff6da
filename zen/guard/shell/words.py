"""The shell walker's data and its pure helpers: words, states, simple commands, decoders.

A `Word` is one argument after expansion; UNK marks what cannot be known statically and FOUND
stands for "whatever find/xargs feeds in". A `State` is what the walker knows at one point of a
script (possible working directories, literal variables, links, functions); `join` merges the
states of several paths. A `Cmd` is one simple command as bash would run it. The decoders
(ANSI-C strings, double-quote escapes, brace expansion) and `is_secret_name` are pure functions.

Lean on purpose: runs inside the PreToolUse hook (stdlib only).
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterable
from typing import Any

UNK = "\x00"        # a character whose value cannot be known statically
FOUND = "\x01"      # a path component standing for "whatever find/xargs feeds in"

# Quoted characters that would otherwise be special to brace/glob/tilde expansion are carried
# through expansion as private-use stand-ins, then mapped back.
MARK = {"{": "\ue000", "}": "\ue001", ",": "\ue002", "*": "\ue003", "?": "\ue004", "[": "\ue005",
         "~": "\ue006"}
UNMARK = {v: k for k, v in MARK.items()}
MARK_ALL = str.maketrans(MARK)
MARK_NOGLOB = str.maketrans({k: v for k, v in MARK.items() if k in "{},~"})
UNMARK_T = str.maketrans(UNMARK)

MAX_DEPTH = 6          # nested shells (bash -c "bash -c ...") before we give up and deny
MAX_CWDS = 4           # possible working directories tracked at once
MAX_BRACE = 256        # words one brace expression may produce
MAX_LOOP_VALUES = 16   # for-loop values walked one by one

_SECRET_TOKENS = frozenset({
    "KEY", "APIKEY", "TOKEN", "SECRET", "SECRETS", "PASSWORD", "PASSWD", "PASS", "PASSPHRASE",
    "CREDENTIAL", "CREDENTIALS", "CREDS", "AUTH", "PRIVATE", "SESSION", "COOKIE", "DSN", "PAT",
    "SIGNATURE", "SALT", "BEARER", "JWT", "OTP",
})
_NOT_SECRET = frozenset({"PWD", "OLDPWD", "KEYMAP", "SSH_AUTH_SOCK", "XAUTHORITY", "PASS_MAX_DAYS"})


def is_secret_name(name: str) -> bool:
    """A variable whose name says it holds a secret (API_KEY, GITHUB_TOKEN, DB_PASSWORD, ...)."""
    upper = name.upper()
    if upper in _NOT_SECRET:
        return False
    parts = [p for p in upper.replace("-", "_").split("_") if p]
    if any(p in _SECRET_TOKENS for p in parts):
        return True
    return upper in ("DATABASE_URL", "REDIS_URL", "MONGO_URL", "MONGODB_URI", "AMQP_URL")


class ShellError(Exception):
    """The script cannot be analysed with confidence: the caller denies with this rule."""

    def __init__(self, rule: str, reason: str) -> None:
        super().__init__(reason)
        self.rule = rule
        self.reason = reason


class Word:
    """One argument after expansion. `text` holds UNK where the value is unknown."""

    __slots__ = ("glob", "procsub", "raw", "secret", "subst", "text")

    def __init__(self, text: str, raw: str = "", glob: bool = False, secret: bool = False,
                 subst: bool = False, procsub: bool = False) -> None:
        self.text = text
        self.raw = raw or text
        self.glob = glob
        self.secret = secret
        self.subst = subst
        self.procsub = procsub

    @property
    def known(self) -> bool:
        return UNK not in self.text

    def __repr__(self) -> str:
        return f"Word({self.text!r})"


def lit(text: str) -> Word:
    return Word(text, text)


class State:
    """What the walker knows at one point of the script (copied on change, never mutated)."""

    __slots__ = ("cwds", "funcs", "links", "oldpwd", "opaque", "vars")

    def __init__(self, cwds: tuple[str | None, ...], vars: dict[str, str | None] | None = None,
                 links: dict[str, str] | None = None, funcs: frozenset[str] = frozenset(),
                 oldpwd: str | None = None, opaque: bool = False) -> None:
        self.cwds = cwds
        self.vars = vars or {}
        self.links = links or {}
        self.funcs = funcs
        self.oldpwd = oldpwd
        self.opaque = opaque

    def copy(self, **changes: Any) -> State:
        new = State(self.cwds, self.vars, self.links, self.funcs, self.oldpwd, self.opaque)
        for k, v in changes.items():
            setattr(new, k, v)
        return new

    @property
    def cwd(self) -> str | None:
        """The working directory when only one is possible, else None."""
        return self.cwds[0] if len(self.cwds) == 1 else None

    def set_vars(self, pairs: Iterable[tuple[str, str | None]]) -> State:
        merged = dict(self.vars)
        merged.update(pairs)
        return self.copy(vars=merged)


_ABSENT = object()


def join(*states: State) -> State:
    """The state after one of several paths: what differs becomes unknown."""
    first = states[0]
    if all(s is first for s in states):
        return first
    cwds: list[str | None] = []
    for s in states:
        for c in s.cwds:
            if c not in cwds:
                cwds.append(c)
    if None in cwds or len(cwds) > MAX_CWDS:
        cwds = [None]
    keys: set[str] = set()
    for s in states:
        keys.update(s.vars)
    merged: dict[str, str | None] = {}
    for k in keys:
        values: set[object] = {s.vars.get(k, _ABSENT) for s in states}
        one = values.pop() if len(values) == 1 else None
        merged[k] = one if isinstance(one, str) else None
    links: dict[str, str] = {}
    funcs: frozenset[str] = frozenset()
    for s in states:
        links.update(s.links)
        funcs |= s.funcs
    oldpwds = {s.oldpwd for s in states}
    return State(tuple(cwds), merged, links, funcs, oldpwds.pop() if len(oldpwds) == 1 else None,
                 any(s.opaque for s in states))


class Cmd:
    """One simple command as bash would run it."""

    __slots__ = ("assigns", "kind", "piped_from", "reads", "src", "state", "stdin", "stdin_secret", "stdin_text",
                 "words", "writes")

    def __init__(self, kind: str, words: list[Word], state: State, src: str) -> None:
        self.kind = kind                  # simple | declaration | unset | test | assign | redirect
        self.words = words
        self.state = state
        self.src = src
        self.assigns: list[tuple[str, Word]] = []
        self.writes: list[tuple[Word, bool]] = []   # output redirect targets, (word, append)
        self.reads: list[Word] = []                 # `< file` sources
        self.stdin: str | None = None               # pipe | heredoc | herestring | file | None
        self.stdin_text: str | None = None          # heredoc / here-string text (UNK if dynamic)
        self.stdin_secret = False                   # that text holds a secret-looking variable
        self.piped_from: Cmd | str | None = None    # the producer of a pipe ("complex" if unknown)

    @property
    def name(self) -> str:
        return self.words[0].text if self.words else ""

    def __repr__(self) -> str:
        return f"Cmd({self.kind}, {[w.text for w in self.words]!r}, cwds={self.state.cwds})"


# --------------------------------------------------------------------------------------------
# small decoders

def decode_ansi_c(body: str) -> str:
    """The value of $'...' (body without the quotes)."""
    out: list[str] = []
    i, n = 0, len(body)
    simple = {"a": "\a", "b": "\b", "e": "\x1b", "E": "\x1b", "f": "\f", "n": "\n", "r": "\r",
              "t": "\t", "v": "\v", "\\": "\\", "'": "'", '"': '"', "?": "?"}
    while i < n:
        c = body[i]
        if c != "\\" or i + 1 >= n:
            out.append(c)
            i += 1
            continue
        d = body[i + 1]
        if d in simple:
            out.append(simple[d])
            i += 2
        elif d == "x":
            j = i + 2
            while j < n and j < i + 4 and body[j] in "0123456789abcdefABCDEF":
                j += 1
            out.append(chr(int(body[i + 2:j], 16)) if j > i + 2 else "\\x")
            i = j
        elif d in "uU":
            width = 4 if d == "u" else 8
            j = i + 2
            while j < n and j < i + 2 + width and body[j] in "0123456789abcdefABCDEF":
                j += 1
            try:
                out.append(chr(int(body[i + 2:j], 16)) if j > i + 2 else "\\" + d)
            except (ValueError, OverflowError):
                out.append(UNK)
            i = j
        elif d in "01234567":
            j = i + 1
            while j < n and j < i + 4 and body[j] in "01234567":
                j += 1
            out.append(chr(int(body[i + 1:j], 8) & 0xFF))
            i = j
        elif d == "c" and i + 2 < n:
            out.append(chr(ord(body[i + 2]) & 0x1F))
            i += 3
        else:
            out.append("\\" + d)
            i += 2
    return "".join(out)


def dq_unescape(s: str) -> str:
    """Backslash removal inside double quotes: only before $ ` " \\ and newline."""
    if "\\" not in s:
        return s
    out: list[str] = []
    i, n = 0, len(s)
    while i < n:
        c = s[i]
        if c == "\\" and i + 1 < n and s[i + 1] in '$`"\\\n':
            if s[i + 1] != "\n":
                out.append(s[i + 1])
            i += 2
        else:
            out.append(c)
            i += 1
    return "".join(out)


def brace_expand(s: str) -> list[str]:
    """Bash brace expansion over a marked string (quoted braces are already stand-ins)."""
    results = [s]
    done: list[str] = []
    while results:
        cur = results.pop()
        expanded = _brace_once(cur)
        if expanded is None:
            done.append(cur)
        else:
            results.extend(reversed(expanded))
        if len(done) + len(results) > MAX_BRACE:
            return [UNK]
    return done


def _brace_once(s: str) -> list[str] | None:
    start = 0
    while True:
        i = s.find("{", start)
        if i < 0:
            return None
        depth, j, commas = 0, i, []
        close = -1
        while j < len(s):
            c = s[j]
            if c == "{":
                depth += 1
            elif c == "}":
                depth -= 1
                if depth == 0:
                    close = j
                    break
            elif c == "," and depth == 1:
                commas.append(j)
            j += 1
        if close < 0:
            return None
        pre, body, post = s[:i], s[i + 1:close], s[close + 1:]
        if commas:
            parts: list[str] = []
            last = i + 1
            for k in commas:
                parts.append(s[last:k])
                last = k + 1
            parts.append(s[last:close])
            return [pre + p + post for p in parts]
        seq = _brace_seq(body)
        if seq is not None:
            return [pre + p + post for p in seq]
        start = i + 1


def _brace_seq(body: str) -> list[str] | None:
    parts = body.split("..")
    if len(parts) not in (2, 3):
        return None
    a, b = parts[0], parts[1]
    try:
        step = abs(int(parts[2])) if len(parts) == 3 else 1
    except ValueError:
        return None
    step = step or 1
    try:
        x, y = int(a), int(b)
        if abs(y - x) // step > MAX_BRACE:
            return [UNK]
        rng = range(x, y + 1, step) if x <= y else range(x, y - 1, -step)
        width = _zero_pad(a, b)
        return [str(v) if not width else ("-" if v < 0 else "") + f"{abs(v):0{width - (v < 0)}d}" for v in rng]
    except ValueError:
        pass
    if len(a) == 1 and len(b) == 1 and a.isascii() and a.isalpha() and b.isascii() and b.isalpha():
        x, y = ord(a), ord(b)
        rng = range(x, y + 1, step) if x <= y else range(x, y - 1, -step)
        return [chr(v) for v in rng]
    return None


def _zero_pad(a: str, b: str) -> int:
    """The width bash pads a numeric sequence to: `{01..10}` is 01 02 ... 10, `{-01..1}` -01 000 001."""
    def padded(end: str) -> bool:
        digits = end.lstrip("+-")
        return len(digits) > 1 and digits.startswith("0")
    return max(len(a), len(b)) if padded(a) or padded(b) else 0


def link_pairs(args: list[Word], cwd: str | None, symbolic_only: bool = True) -> dict[str, str]:
    """{link path: target path} of the symbolic links `ln ARGS` (or `cp -s ARGS`) makes in `cwd`,
    every place a link may land included (`ln -s T D` makes D, or D/T when D is a directory);
    empty when none is symbolic or a word is only known at run time."""
    symbolic = relative = no_dir = False
    target_dir: str | None = None
    pos: list[Word] = []
    i = 0
    while i < len(args):
        a = args[i]
        t = a.text
        i += 1
        if a.known and t == "--":
            pos.extend(args[i:])
            break
        if a.known and t.startswith("--"):
            name, _, value = t.partition("=")
            symbolic |= name in ("--symbolic", "--symbolic-link")
            relative |= name == "--relative"
            no_dir |= name == "--no-target-directory"
            if name == "--target-directory":
                target_dir = value if value else (args[i].text if i < len(args) else None)
                i += 0 if value else 1
            elif name == "--suffix" and not value:
                i += 1
            continue
        if a.known and t.startswith("-") and len(t) > 1:
            for k, c in enumerate(t[1:]):
                symbolic |= c == "s"
                relative |= c == "r"
                no_dir |= c == "T"
                if c in "tS":
                    value = t[k + 2:] or (args[i].text if i < len(args) else "")
                    if not t[k + 2:]:
                        i += 1
                    if c == "t":
                        target_dir = value
                    break
            continue
        pos.append(a)
    if (symbolic_only and not symbolic) or cwd is None or not pos or not all(p.known and not p.glob for p in pos):
        return {}
    texts = [p.text for p in pos]
    if target_dir is not None:
        places = [(x, posixpath.join(target_dir, posixpath.basename(x.rstrip("/")))) for x in texts]
    elif len(texts) == 1:
        places = [(texts[0], posixpath.basename(texts[0].rstrip("/")))]
    elif len(texts) == 2:
        places = [(texts[0], texts[1])]
        if not no_dir:
            places.append((texts[0], posixpath.join(texts[1], posixpath.basename(texts[0].rstrip("/")))))
    else:
        places = [(x, posixpath.join(texts[-1], posixpath.basename(x.rstrip("/")))) for x in texts[:-1]]
    out: dict[str, str] = {}
    for target, link in places:
        link_abs = posixpath.normpath(posixpath.join(cwd, link))
        base = cwd if relative else posixpath.dirname(link_abs)
        out[link_abs] = posixpath.normpath(posixpath.join(base, target))
    return out


def join_continuations(src: str) -> str:
    """`src` with every backslash-newline outside single quotes removed, as bash reads it before
    splitting words (`r\\<newline>m -rf ~` is rm; tree-sitter would make two words of it)."""
    if "\\\n" not in src:
        return src
    out: list[str] = []
    i, n = 0, len(src)
    single = double = False
    while i < n:
        c = src[i]
        if single:
            out.append(c)
            single = c != "'"
        elif c == "\\" and i + 1 < n:
            if src[i + 1] != "\n":
                out.append(src[i:i + 2])
            i += 2
            continue
        elif c == "#" and not double and (i == 0 or src[i - 1] in " \t\n;&|()"):
            end = src.find("\n", i)      # a comment: its quotes quote nothing
            end = n if end < 0 else end
            out.append(src[i:end])
            i = end
            continue
        else:
            if c == "'" and not double:
                single = True
            elif c == '"':
                double = not double
            out.append(c)
        i += 1
    return "".join(out)


_COMMAND_BRACE = re.compile(r"(^|[;&|(\n]\s*)(\{[^\s{}]*,[^\s{}]*\}[^\s;&|()]*)(?=\s|$|[;&|)])")


def expand_command_braces(src: str) -> str:
    """Brace expansion in a command word (`{rm,-rf,~}`, `{r,}m`) done as bash does it, the words
    it makes separated by spaces; `src` unchanged when there is none."""
    def one(m: re.Match[str]) -> str:
        words = brace_expand(m.group(2))
        return m.group(1) + (" ".join(words) if UNK not in words else m.group(2))
    return _COMMAND_BRACE.sub(one, src)

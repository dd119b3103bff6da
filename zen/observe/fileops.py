"""File operations from the guardian's decisions: what a tool call read, wrote or deleted.

A file tool is one operation on its file (Write, Edit, MultiEdit, NotebookEdit write; Read,
NotebookRead read). A shell command is read word by word, command by command (split at `;`,
`&&`, `||`, `|`, newlines): each file operand of a command that reads (`cat`, `grep`, ...),
writes (`cp`, `mv`, `touch`, `sed -i`, `tee`, ...) or deletes (`rm`, `unlink`, `git rm`, ...)
counts once, and so does each `>` / `>>` redirection target. It is an estimate of what the
command touches (a glob counts once, a script's own file access is not seen), enough to tell a
job that edits three files from one that rewrites the tree.

Pure and stdlib only; fast enough to run over every guard event of a fleet.
"""

from __future__ import annotations

import functools
import shlex
from collections.abc import Mapping
from typing import Any

READ, WRITE, DELETE = "read", "write", "delete"
OPS = (READ, WRITE, DELETE)

WRITE_TOOLS = frozenset({"Write", "Edit", "MultiEdit", "NotebookEdit", "apply_patch"})
READ_TOOLS = frozenset({"Read", "NotebookRead"})

_READERS = frozenset({"cat", "head", "tail", "less", "more", "grep", "egrep", "fgrep", "rg", "wc",
                      "diff", "cmp", "sort", "uniq", "cut", "nl", "od", "xxd", "hexdump", "file",
                      "stat", "md5sum", "sha1sum", "sha256sum", "strings", "jq", "yq", "awk", "bat"})
_WRITERS = frozenset({"touch", "cp", "mv", "mkdir", "tee", "install", "ln", "truncate", "chmod",
                      "chown", "dd"})
_DELETERS = frozenset({"rm", "rmdir", "unlink", "shred"})
_GIT = {"rm": DELETE, "mv": WRITE, "show": READ, "diff": READ}
_SEPARATORS = frozenset({"|", "||", "&&", ";", "&", "\n", "|&", ";;"})
_REDIRECTS = frozenset({">", ">>", ">|", "&>", "&>>"})
_PATTERN_FIRST = frozenset({"grep", "egrep", "fgrep", "rg", "awk", "jq", "yq"})


def _tokens(command: str) -> list[str]:
    lex = shlex.shlex(command.replace("\n", " ; "), posix=True, punctuation_chars=";&|<>")
    lex.whitespace_split = True
    lex.commenters = "#"
    try:
        return list(lex)
    except ValueError:           # an unterminated quote: read what splits plainly
        return command.split()


def _segments(command: str) -> tuple[list[list[str]], int]:
    """The command's simple commands (words, redirections removed) and how many redirections
    write a file."""
    segments: list[list[str]] = [[]]
    writes = 0
    tokens = _tokens(command)
    i = 0
    while i < len(tokens):
        tok = tokens[i]
        if tok in _SEPARATORS:
            segments.append([])
        elif tok in _REDIRECTS or (tok[:-1].isdigit() and tok[-1:] == ">"):
            target = tokens[i + 1] if i + 1 < len(tokens) else ""
            if target and target != "/dev/null" and not target.startswith("&"):
                writes += 1
            i += 1
        elif tok in ("<", "<<", "<<<"):        # input, a here-doc or here-string: the next word is no file
            i += 1
        elif tok.isdigit() and i + 1 < len(tokens) and tokens[i + 1] in _REDIRECTS:
            pass                 # the fd number of `2>`: the redirection comes next
        else:
            segments[-1].append(tok)
        i += 1
    return [s for s in segments if s], writes


def _command(words: list[str]) -> list[str]:
    while words and (("=" in words[0] and not words[0].startswith("="))
                     or words[0] in ("sudo", "env", "command", "exec", "nice", "time")):
        words = words[1:]   # VAR=value prefixes and wrappers: the command comes after them
    return words


def _operands(words: list[str], skip: int = 0) -> int:
    files = [w for w in words[1:] if not w.startswith("-")]
    return max(1, len(files) - skip)


def shell_ops(command: str) -> dict[str, int]:
    """Counts of file reads, writes and deletes a shell command line makes (see above)."""
    return dict(zip(OPS, _shell_ops(command), strict=True))


@functools.lru_cache(maxsize=4096)      # agents run the same commands over and over
def _shell_ops(command: str) -> tuple[int, int, int]:
    out = dict.fromkeys(OPS, 0)
    segments, out[WRITE] = _segments(command)
    for raw in segments:
        words = _command(raw)
        if not words:
            continue
        name = words[0].rsplit("/", 1)[-1]
        operands = [w for w in words[1:] if not w.startswith("-")]
        if name in _DELETERS:
            out[DELETE] += _operands(words)
        elif name == "sed" and any(w.startswith("-i") for w in words[1:]):
            out[WRITE] += 1
        elif name in ("cp", "install") and len(operands) > 1:
            out[READ] += len(operands) - 1
            out[WRITE] += 1
        elif name in _WRITERS:
            out[WRITE] += _operands(words)
        elif name in _READERS and operands[1 if name in _PATTERN_FIRST else 0:]:
            out[READ] += len(operands) - (1 if name in _PATTERN_FIRST else 0)
        elif name == "git" and len(words) > 1 and words[1] in _GIT:
            out[_GIT[words[1]]] += 1
    return out[READ], out[WRITE], out[DELETE]


def ops_of(ev: Mapping[str, Any]) -> dict[str, int] | None:
    """File operations of one guard.allowed event (None: it touched no file zen can tell)."""
    tool = str(ev.get("tool") or "")
    if tool in WRITE_TOOLS:
        return {READ: 0, WRITE: 1, DELETE: 0}
    if tool in READ_TOOLS:
        return {READ: 1, WRITE: 0, DELETE: 0}
    command = ev.get("command")
    if isinstance(command, str) and command:
        got = shell_ops(command)
        return got if any(got.values()) else None
    return None

"""Filesystem: deletes, moves, copies and links, writes, truncation, permission changes.

Every target goes through the analyser's path checks (inside the worktree: free; its root,
.git, .zen, the guardian's own files and anything outside: denied).
"""

from __future__ import annotations

import os
import re
from typing import TYPE_CHECKING

from zen.guard.paths.resolve import AGENT_CONFIG_DIRS, AGENT_CONFIG_FILES, SAFE_DEVICES, norm
from zen.guard.rules.table import HANDLERS
from zen.guard.scan.scripts import stdin_text
from zen.guard.shell.options import has, is_mode_word, remote, split_opts, val
from zen.guard.shell.words import Cmd, State, Word, lit

if TYPE_CHECKING:
    from zen.guard.analyse import Analyser

SYSTEM_BIN = frozenset({"/bin", "/sbin", "/usr/bin", "/usr/sbin", "/usr/local/bin", "/usr/local/sbin"})


def rm(an: Analyser, name: str, args: list[Word], st: State, cmd: Cmd | None, depth: int) -> None:
    an.ro(f"`{name}`")
    short = "ns" if name == "shred" else ""
    opts, pos = split_opts(args, short, frozenset({"--iterations", "--size", "--random-source",
                                                   "--interactive"}))
    if name == "shred" and not has(opts, "-u", "--remove", "-z") and False:
        pass
    for p in pos:
        if name == "shred":
            an.write_word(p, st, "`shred` overwrites")
        an.delete_word(p, st, f"`{name}` deletes")


def mv(an: Analyser, name: str, args: list[Word], st: State, cmd: Cmd | None, depth: int) -> None:
    an.ro("`mv`")
    opts, pos = split_opts(args, "tS", frozenset({"--target-directory", "--suffix", "--backup"}))
    tdir = val(opts, "-t", "--target-directory")
    if tdir is not None:
        srcs, dest = pos, tdir
    elif len(pos) >= 2:
        srcs, dest = pos[:-1], pos[-1]
    else:
        return
    for s in srcs:
        an.delete_word(s, st, "`mv` moves away")
        an.read_word(s, st, recursive=True)
    an.write_word(dest, st, "`mv` moves into")


def copy(an: Analyser, name: str, args: list[Word], st: State, cmd: Cmd | None, depth: int) -> None:
    an.ro(f"`{name}`")
    if name == "rsync":
        opts, pos = split_opts(args, "eBfT", frozenset({
            "--rsh", "--rsync-path", "--filter", "--exclude", "--include", "--exclude-from",
            "--include-from", "--files-from", "--temp-dir", "--backup-dir", "--suffix", "--chmod",
            "--log-file", "--password-file", "--partial-dir", "--compare-dest", "--link-dest",
            "--copy-dest", "--out-format", "--timeout", "--port", "--bwlimit", "--max-size",
            "--min-size", "--info", "--debug", "--usermap", "--groupmap", "--chown", "--block-size"}))
        rsh = val(opts, "-e", "--rsh")
        if rsh is not None:
            an.walk(rsh.text, st.copy(vars={}), depth + 1)
        rpath = val(opts, "--rsync-path")
        if rpath is not None:
            an.walk(rpath.text, State((None,)), depth + 1)
        chm = val(opts, "--chmod")
        if chm is not None:
            an.symbolic_mode(chm.text, "rsync --chmod")
    elif name == "scp":
        opts, pos = split_opts(args, "cFiJloPSDX", frozenset())
        if val(opts, "-S") is not None:
            an.deny("opaque.exec", "scp -S runs a program in place of ssh")
    else:
        opts, pos = split_opts(args, "tSmogZ" if name == "install" else "tS",
                               frozenset({"--target-directory", "--suffix", "--mode", "--owner",
                                          "--group", "--backup", "--context", "--strip-program",
                                          "--sparse", "--reflink", "--preserve", "--no-preserve"}))
        mode = val(opts, "-m", "--mode")
        if mode is not None:
            an.mode_text(mode, f"`{name} -m`")
    tdir = val(opts, "-t", "--target-directory")
    if name == "install" and has(opts, "-d", "--directory"):
        for p in pos:
            an.write_word(p, st, "`install -d` creates")
        return
    if tdir is not None:
        srcs, dest = pos, tdir
    elif len(pos) >= 2:
        srcs, dest = pos[:-1], pos[-1]
    else:
        for p in pos:
            an.read_word(p, st, recursive=True)
        return
    for s in srcs:
        if remote(s.text) and name in ("rsync", "scp"):
            continue
        an.read_word(s, st, recursive=True)
        _program_copy(an, name, s, dest, len(srcs) > 1 or tdir is not None)
    _copy_links(an, name, opts, srcs, dest, st)
    _copies_agent_config(an, name, srcs, st)
    if remote(dest.text) and name in ("rsync", "scp"):
        an.need("network_requests", "approval.network", f"`{name}` copies to another host")
        return
    if name == "rsync" and any(o.startswith("--delete") or o in ("--remove-source-files",) for o, _ in opts):
        an.delete_word(dest, st, "`rsync --delete` deletes inside")
        if has(opts, "--remove-source-files"):
            for s in srcs:
                an.delete_word(s, st, "`rsync --remove-source-files` deletes")
    an.write_word(dest, st, f"`{name}` writes")


def link(an: Analyser, name: str, args: list[Word], st: State, cmd: Cmd | None, depth: int) -> None:
    """ln / link: a link is never made to the guardian's own files, and a hard link never to
    anything outside the worktree (a write through it could not be seen)."""
    an.ro(f"`{name}`")
    opts, pos = split_opts(args, "tS", frozenset({"--target-directory", "--suffix", "--backup"}))
    tdir = val(opts, "-t", "--target-directory")
    if tdir is not None:
        srcs, dest = pos, tdir
    elif len(pos) >= 2:
        srcs, dest = pos[:-1], pos[-1]
    elif len(pos) == 1:
        srcs, dest = pos, lit(".")
    else:
        return
    symbolic = name == "ln" and has(opts, "-s", "--symbolic")
    relative = has(opts, "-r", "--relative")
    for s in srcs:
        if not s.known:
            an.deny("fs.unresolved-target", f"`{name}` links to a path only known at run time")
        an.read_word(s, st)
        if symbolic and not relative and not s.text.startswith("/"):
            # a relative target is read from the link's own directory: DEST, or DEST's parent
            bases: list[str | None] = [norm(dest.text, c) for c in st.cwds] if dest.known else [None]
            places = [*bases, *[None if b is None else b.rsplit("/", 1)[0] or "/" for b in bases]]
        else:
            places = list(st.cwds)
        an.link_target(s, places, st, hard=not symbolic, what=f"`{name}`")
    if not (has(opts, "-f", "--force") or has(opts, "-n")):
        an.write_word(dest, st, f"`{name}` creates a link at")
        return
    an.write_word(dest, st, f"`{name}` writes")


def _copies_agent_config(an: Analyser, name: str, srcs: list[Word], st: State) -> None:
    """A folder copied whole carries what is in it: one holding .claude/, .codex/, .gemini/ or
    .mcp.json puts an agent's configuration wherever it lands (`cp -r template/. .`; M12). Asked
    of the disk when the guardian may read it."""
    if an.ctx.read is None:
        return
    for s in srcs:
        if not s.known or (name in ("rsync", "scp") and remote(s.text)):
            continue
        t = an.target(s, st, follow_last=True)
        if t is None or t.children:
            continue
        for entry in (*AGENT_CONFIG_DIRS, *AGENT_CONFIG_FILES):
            if os.path.lexists(f"{t.path.rstrip('/')}/{entry}"):
                an.deny("self.protect", f"`{name}` copies {s.raw}, which holds {entry}: an agent's configuration "
                        "(hooks, MCP servers, commands it runs unguarded) is not the agent's to place")


def _program_copy(an: Analyser, name: str, src: Word, dest: Word, into_dir: bool) -> None:
    """A program of the system copied under another name (`cp /bin/rm ./ls`): what `./ls` runs then
    is not what its name says."""
    if not src.known or not dest.known:
        return
    folder, _, base = src.text.rstrip("/").rpartition("/")
    if folder not in SYSTEM_BIN or base not in HANDLERS:
        return
    new = base if into_dir or dest.text.endswith("/") or dest.text in (".", "..") else dest.text.rstrip("/").rsplit("/", 1)[-1]
    if new != base:
        an.deny("fs.program-copy", f"`{name}` copies the program {base} under the name {new}: what "
                f"{new} runs would not be what its name says")


def _copy_links(an: Analyser, name: str, opts: list[tuple[str, Word | None]], srcs: list[Word], dest: Word,
                st: State) -> None:
    """cp -l / -s and rsync --link-dest make links: the same rules as ln."""
    if name == "cp" and (has(opts, "-l", "--link") or has(opts, "-s", "--symbolic-link")):
        for s in srcs:
            an.link_target(s, list(st.cwds), st, hard=has(opts, "-l", "--link"), what=f"`{name}`")
    if name == "rsync":
        for o, v in opts:
            if o == "--link-dest" and v is not None:
                base: list[str | None] = [norm(dest.text, c) for c in st.cwds] if dest.known else [None]
                an.link_target(v, base, st, hard=True, what="`rsync --link-dest`")


def truncate(an: Analyser, name: str, args: list[Word], st: State, cmd: Cmd | None, depth: int) -> None:
    an.ro("`truncate`")
    _, pos = split_opts(args, "sr", frozenset({"--size", "--reference"}))
    for p in pos:
        an.write_word(p, st, "`truncate` empties")


def tee(an: Analyser, name: str, args: list[Word], st: State, cmd: Cmd | None, depth: int) -> None:
    opts, pos = split_opts(args, "", frozenset({"--output-error"}))
    text = stdin_text(cmd)
    for p in pos:
        an.ro("`tee` into a file")
        an.write_word(p, st, "`tee` writes", text, has(opts, "-a", "--append"))


def dd(an: Analyser, name: str, args: list[Word], st: State, cmd: Cmd | None, depth: int) -> None:
    for a in args:
        k, eq, v = a.text.partition("=")
        if not eq:
            continue
        if k == "of":
            an.ro("`dd of=`")
            if v.startswith("/dev/") and v not in SAFE_DEVICES:
                an.deny("disk.device-write", f"`dd of={v}` writes a device")
            an.write_word(lit(v) if a.known else Word(v), st, "`dd` writes")
        elif k == "if":
            an.read_word(lit(v), st)


def touch(an: Analyser, name: str, args: list[Word], st: State, cmd: Cmd | None, depth: int) -> None:
    an.ro(f"`{name}`")
    if name in ("ed", "ex"):
        if cmd is not None and cmd.stdin_text and "!" in cmd.stdin_text:
            an.deny("opaque.exec", f"`{name}` script runs shell commands")
    if name == "patch":
        opts, pos = split_opts(args, "pdioBDFrVYzgs", frozenset({
            "--directory", "--input", "--output", "--strip", "--reject-file", "--prefix"}))
        d = val(opts, "-d", "--directory")
        if d is not None:
            an.write_word(Word(d.text.rstrip("/") + "/x", d.raw), st, "`patch -d` writes into")
        for o in (val(opts, "-o", "--output"), *pos[:1]):
            if o is not None:
                an.write_word(o, st, "`patch` writes")
        return
    if name in {"split", "csplit"}:
        _split(an, name, args, st, depth)
        return
    opts, pos = split_opts(args, "mrdtZ" if name != "mkdir" else "mZ",
                           frozenset({"--mode", "--reference", "--date", "--context"}))
    mode = val(opts, "-m", "--mode")
    if mode is not None:
        an.mode_text(mode, f"`{name} -m`")
    for p in pos:
        an.write_word(p, st, f"`{name}` writes", keep=name in ("touch", "mkdir", "mkfifo", "mknod"))


def _split(an: Analyser, name: str, args: list[Word], st: State, depth: int) -> None:
    """split FILE PREFIX / csplit -f PREFIX write PREFIXaa, PREFIX00, ... (x / xx in the cwd);
    split --filter runs a shell command for each piece."""
    if name == "split":
        opts, pos = split_opts(args, "abClnt", frozenset({
            "--suffix-length", "--bytes", "--line-bytes", "--lines", "--number", "--separator",
            "--additional-suffix", "--filter"}))
        f = val(opts, "--filter")
        if f is not None or any(a.text.startswith("--fi") and not a.known for a in args):
            if f is None or not f.known:
                an.deny("opaque.exec", "`split --filter` runs a command only known at run time")
            an.walk(f.text, st.copy(vars={}), depth + 1)
        prefix = pos[1] if len(pos) > 1 else lit("x")
    else:
        opts, pos = split_opts(args, "fbn", frozenset({"--prefix", "--suffix-format", "--digits"}))
        prefix = val(opts, "-f", "--prefix") or lit("xx")
    an.write_word(Word(prefix.text + "00", prefix.raw), st, f"`{name}` writes")


def chmod(an: Analyser, name: str, args: list[Word], st: State, cmd: Cmd | None, depth: int) -> None:
    an.ro(f"`{name}`")
    _opts, pos = split_opts([a for a in args if not (name == "chmod" and is_mode_word(a))],
                           "", frozenset({"--reference", "--from"}))
    if name == "chmod":
        modes = [a for a in args if is_mode_word(a)]
        if not modes and pos:
            modes, pos = [pos[0]], pos[1:]
        for m in modes:
            an.mode_text(m, "`chmod`")
    elif name in ("chown", "chgrp") and pos:
        pos = pos[1:]
    elif name == "setfacl":
        pos = [p for p in pos if "/" in p.text or p.text.startswith(".") or not re.match(r"^[ugmo]:", p.text)]
    for p in pos:
        an.write_word(p, st, f"`{name}` changes", keep=True)

"""Archives: tar, zip/7z/rar/cpio/pax/ar, unzip.

What they read is checked for credential stores, where they extract or write for the path
rules, and options that run a program (--to-command, --checkpoint-action=exec, zip -TT) are
denied.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from zen.guard.paths.resolve import norm
from zen.guard.shell.options import complete_long, has, split_opts, val
from zen.guard.shell.words import Cmd, State, Word, lit

if TYPE_CHECKING:
    from zen.guard.analyse import Analyser

# GNU tar 1.34's long options (`tar --help`): it takes any unique prefix of them (--remove-f)
TAR_LONG_OPTIONS = (
    "absolute-names", "acls", "add-file", "after-date", "anchored", "append",
    "atime-preserve", "auto-compress", "backup", "block-number", "blocking-factor", "bzip2",
    "catenate", "check-device", "check-links", "checkpoint", "checkpoint-action", "clamp-mtime",
    "compare", "compress", "concatenate", "confirmation", "create", "delay-directory-restore",
    "delete", "dereference", "diff", "directory", "exclude", "exclude-backups", "exclude-caches",
    "exclude-caches-all", "exclude-caches-under", "exclude-from", "exclude-ignore",
    "exclude-ignore-recursive", "exclude-tag", "exclude-tag-all", "exclude-tag-under", "exclude-vcs",
    "exclude-vcs-ignores", "extract", "file", "files-from", "force-local", "format", "full-time",
    "get", "group", "group-map", "gunzip", "gzip", "hard-dereference", "help", "hole-detection",
    "ignore-case", "ignore-command-error", "ignore-failed-read", "ignore-zeros", "incremental",
    "index-file", "info-script", "interactive", "keep-directory-symlink", "keep-newer-files",
    "keep-old-files", "label", "level", "list", "listed-incremental", "lzip", "lzma", "lzop", "mode",
    "mtime", "multi-volume", "new-volume-script", "newer", "newer-mtime", "no-acls", "no-anchored",
    "no-auto-compress", "no-check-device", "no-delay-directory-restore", "no-ignore-case",
    "no-ignore-command-error", "no-null", "no-overwrite-dir", "no-quote-chars", "no-recursion",
    "no-same-owner", "no-same-permissions", "no-seek", "no-selinux", "no-unquote",
    "no-verbatim-files-from", "no-wildcards", "no-wildcards-match-slash", "no-xattrs", "null",
    "numeric-owner", "occurrence", "old-archive", "one-file-system", "one-top-level", "overwrite",
    "overwrite-dir", "owner", "owner-map", "pax-option", "portability", "posix", "preserve-order",
    "preserve-permissions", "quote-chars", "quoting-style", "read-full-records", "record-size",
    "recursion", "recursive-unlink", "remove-files", "restrict", "rmt-command", "rsh-command",
    "same-order", "same-owner", "same-permissions", "seek", "selinux", "show-defaults",
    "show-omitted-dirs", "show-snapshot-field-ranges", "show-stored-names", "show-transformed-names",
    "skip-old-files", "sort", "sparse", "sparse-version", "starting-file", "strip-components",
    "suffix", "tape-length", "test-label", "to-command", "to-stdout", "totals", "touch", "transform",
    "uncompress", "ungzip", "unlink-first", "unquote", "update", "usage", "use-compress-program",
    "utc", "verbatim-files-from", "verbose", "verify", "version", "volno-file", "warning", "wildcards",
    "wildcards-match-slash", "xattrs", "xattrs-exclude", "xattrs-include", "xform", "xz", "zstd")


def tar(an: Analyser, name: str, args: list[Word], st: State, cmd: Cmd | None, depth: int) -> None:
    words = list(args)
    if words and words[0].known and not words[0].text.startswith("-") and words[0].text:
        words = [lit("-" + words[0].text), *words[1:]]   # tar czf ...: old-style bundled options
    words = [Word(complete_long(w.text, TAR_LONG_OPTIONS), w.raw) if w.known and w.text.startswith("--") else w
             for w in words]
    opts, pos = split_opts(words, "fCbHKLNTXgIV", frozenset({
        "--file", "--directory", "--exclude", "--files-from", "--exclude-from", "--transform",
        "--xform", "--use-compress-program", "--to-command", "--checkpoint-action",
        "--info-script", "--new-volume-script", "--rsh-command", "--owner", "--group", "--mode",
        "--format", "--label", "--newer", "--after-date", "--index-file", "--listed-incremental"}))
    for key in ("--to-command", "--checkpoint-action", "--info-script", "--new-volume-script",
                "--rsh-command", "--use-compress-program", "-I", "-F"):
        v = val(opts, key)
        if v is not None:
            if key in {"-I", "--use-compress-program"}:
                if v.text.split()[0] in ("gzip", "bzip2", "xz", "zstd", "lz4", "pigz", "lzip", "lzma",
                                         "zstd -T0", "pixz", "pbzip2"):
                    continue
            if key == "--checkpoint-action" and not v.text.startswith(("exec", "sh")):
                continue
            an.deny("opaque.exec", f"`tar {key}` runs a program")
    f = val(opts, "-f", "--file")
    extracting = has(opts, "-x", "--extract", "--get")
    creating = has(opts, "-c", "--create", "-r", "--append", "-u", "--update")
    cdir = val(opts, "-C", "--directory")
    if extracting:
        an.ro("`tar -x`")
        dest = cdir if cdir is not None else lit(".")
        an.write_word(Word(dest.text.rstrip("/") + "/x", dest.raw), st, "`tar -x` extracts into")
        an.unknown_tree(dest, st)
        if f is not None:
            an.read_word(f, st)
    elif creating:
        base = st.copy(cwds=(norm(cdir.text, st.cwd),)) if cdir is not None and cdir.known else st
        for p in pos:
            an.read_word(p, base, recursive=True)
            if has(opts, "--remove-files"):
                an.delete_word(p, base, "`tar --remove-files` deletes")
        if f is not None and f.text != "-":
            an.ro("`tar -c`")
            an.write_word(f, st, "`tar` writes")
    else:
        for p in pos:
            an.read_word(p, st)


def archive(an: Analyser, name: str, args: list[Word], st: State, cmd: Cmd | None, depth: int) -> None:
    an.ro(f"`{name}`")
    opts, pos = split_opts(args, "xibnt" if name == "zip" else "", frozenset())
    if name == "zip" and ((has(opts, "-T") and val(opts, "--unzip-command") is not None) or
                          any(a.text in ("-TT", "--unzip-command") for a in args)):
        an.deny("opaque.exec", "`zip -TT` runs a program")
    if pos:
        if name in ("7z", "7za", "rar") and pos[0].text in ("x", "e"):
            outs = [a.text[2:] for a in args if a.known and a.text.startswith("-o") and len(a.text) > 2]
            if name == "rar" and len(pos) > 2 and pos[-1].text.endswith("/"):
                outs.append(pos[-1].text)
            dest = Word(outs[-1]) if outs else lit(".")
            an.write_word(Word(dest.text.rstrip("/") + "/x", dest.raw), st, f"`{name} x` extracts into")
            an.unknown_tree(dest, st)
            return
        moves = name == "zip" and has(opts, "-m", "--move")
        if name in ("7z", "7za", "rar") and pos[0].text in ("a", "u", "m"):
            moves = pos[0].text == "m" or any(a.text == "-sdel" for a in args)
            pos = pos[1:]
        an.write_word(pos[0], st, f"`{name}` writes")
        for p in pos[1:]:
            an.read_word(p, st, recursive=True)
            if moves:
                an.delete_word(p, st, f"`{name}` moves into the archive, deleting")


def unzip(an: Analyser, name: str, args: list[Word], st: State, cmd: Cmd | None, depth: int) -> None:
    an.ro(f"`{name}`")
    opts, _pos = split_opts(args, "dx", frozenset())
    d = val(opts, "-d")
    dest = d if d is not None else lit(".")
    if not has(opts, "-l", "-t", "-v", "-p", "-Z"):
        an.write_word(Word(dest.text.rstrip("/") + "/x", dest.raw), st, f"`{name}` extracts into")
        an.unknown_tree(dest, st)

"""Copies to and from other hosts: rsync and scp (then judged as copies by fs.copy), sftp, rclone,
lftp.

What lands on another host is past the worktree: a copy there is an action beyond it (denied at
suggest, reported at act-and-report), and one that deletes there (rsync --delete, rclone sync /
purge / delete, an sftp or lftp `rm`, a reverse mirror with --delete) is denied outright. Options
that run a local program (ssh's ProxyCommand, scp -S, sftp -S/-D, an lftp `!command`) are judged
or denied as the program. Downloads into the worktree stay ordinary writes.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from zen.guard.rules import fs, secrets
from zen.guard.scan.scripts import output_text
from zen.guard.shell.options import has, remote, split_opts, val
from zen.guard.shell.words import UNK, Cmd, State, Word, lit

if TYPE_CHECKING:
    from zen.guard.analyse import Analyser

_SSH_EXEC_OPT = re.compile(r"(?i)\s*(ProxyCommand|LocalCommand|PermitLocalCommand|KnownHostsCommand)\b")
_RSYNC_LONG = frozenset({
    "--rsh", "--rsync-path", "--filter", "--exclude", "--include", "--exclude-from", "--include-from",
    "--files-from", "--temp-dir", "--backup-dir", "--suffix", "--chmod", "--log-file", "--password-file",
    "--partial-dir", "--compare-dest", "--link-dest", "--copy-dest", "--out-format", "--timeout", "--port",
    "--bwlimit", "--max-size", "--min-size", "--info", "--debug", "--usermap", "--groupmap", "--chown",
    "--block-size"})


def _ssh_options(an: Analyser, name: str, opts: list[tuple[str, Word | None]]) -> None:
    for o, v in opts:
        if o == "-o" and v is not None:
            if not v.known or _SSH_EXEC_OPT.match(v.text):
                an.deny("opaque.exec", f"`{name} -o {v.text.split('=')[0].strip()}` runs a local command")
        elif o in ("-S", "-D") and v is not None:
            an.deny("opaque.exec", f"`{name} {o}` runs a program in place of ssh")


def transfer(an: Analyser, name: str, args: list[Word], st: State, cmd: Cmd | None, depth: int) -> None:
    """rsync and scp: to another host is beyond the worktree (with --delete: denied); then the
    copy's own rules (what it reads, -e/--rsh, links, local writes)."""
    if name == "scp":
        opts, pos = split_opts(args, "cFiJloPSDX", frozenset())
        _ssh_options(an, name, opts)
    else:
        opts, pos = split_opts(args, "eBfT", _RSYNC_LONG)
    dest = pos[-1] if len(pos) >= 2 else None
    if dest is not None and remote(dest.text) and not has(opts, "-n", "--dry-run"):
        if name == "rsync" and any(o.startswith("--del") for o, _ in opts):
            an.deny("remote.destructive", f"`rsync {next(o for o, _ in opts if o.startswith('--del'))}` to "
                    f"{dest.text} deletes files on another host; a human does that")
        an.beyond("report.remote-copy", f"`{name}` writes files on another host ({dest.text})")
    fs.copy(an, name, args, st, cmd, depth)


def sftp(an: Analyser, name: str, args: list[Word], st: State, cmd: Cmd | None, depth: int) -> None:
    """sftp: the commands of its batch file (-b FILE) or its input; a removal there is denied, an
    upload is beyond the worktree, `!command` runs locally."""
    an.ro("`sftp`")
    opts, pos = split_opts(args, "BbcDFiJloPRSs", frozenset())
    _ssh_options(an, name, opts)
    batch = val(opts, "-b")
    text: str | None = None
    if batch is not None and batch.text != "-":
        _kind, text = an.file_text(batch, st)
        if text is None:
            an.deny("remote.destructive", f"`sftp -b {batch.raw}` runs a batch of remote commands the guardian "
                    "cannot see")
    elif cmd is not None and cmd.stdin in ("heredoc", "herestring"):
        text = cmd.stdin_text or ""
    elif cmd is not None and cmd.stdin == "pipe":
        text = output_text(cmd.piped_from) if isinstance(cmd.piped_from, Cmd) else None
        if text is None:
            an.deny("remote.destructive", "commands piped into `sftp` are only known at run time")
    if text is not None:
        if UNK in text:
            an.deny("remote.destructive", "commands fed to `sftp` are only known at run time")
        _sftp_lines(an, text, st, depth)
    for p in pos[1:]:
        an.write_word(p, st, "`sftp` downloads into")
    an.need("network_requests", "approval.network", "`sftp` reaches another host")


_SFTP_BEYOND = frozenset({"put", "reput", "mput", "mkdir", "chmod", "chown", "chgrp", "ln", "symlink",
                          "rename", "hardlink", "copy", "cp"})


def _sftp_lines(an: Analyser, text: str, st: State, depth: int) -> None:
    for line in text.splitlines():
        line = line.strip().lstrip("-@").strip()
        if not line or line.startswith("#"):
            continue
        if line.startswith("!"):
            an.walk(line[1:], st.copy(vars={}), depth + 1)
            continue
        words = line.split()
        verb = words[0].lower()
        if verb in ("rm", "rmdir"):
            an.deny("remote.destructive", f"sftp `{verb}` deletes files on another host; a human does that")
        if verb in _SFTP_BEYOND:
            an.beyond("report.remote-copy", f"sftp `{verb}` changes files on another host")
        if verb in ("get", "reget", "mget") and len(words) >= 2:
            local = words[2] if len(words) >= 3 else words[1].rstrip("/").rsplit("/", 1)[-1]
            an.write_word(lit(local), st, f"sftp `{verb}` writes")


# rclone's subcommands by what they do to their destination
_RCLONE_DELETES = frozenset({"sync", "bisync", "purge", "delete", "deletefile", "rmdir", "rmdirs", "cleanup",
                             "move", "moveto", "dedupe"})
_RCLONE_WRITES = frozenset({"copy", "copyto", "copyurl", "mkdir", "touch", "settier", "link", "rcat", "backend",
                            "mount", "nfsmount", "rc", "rcd"})
_RCLONE_LONG = frozenset({
    "--config", "--exclude", "--include", "--filter", "--transfers", "--checkers", "--bwlimit", "--log-file",
    "--log-level", "--backup-dir", "--suffix", "--max-age", "--min-age", "--max-size", "--min-size",
    "--files-from", "--exclude-from", "--include-from", "--filter-from", "--max-depth", "--order-by",
    "--stats", "--retries", "--timeout", "--contimeout", "--user-agent", "--max-transfer", "--compare-dest",
    "--copy-dest", "--cache-dir", "--header", "--drive-root-folder-id"})


def _rclone_remote(text: str) -> bool:
    """remote:path (or :backend:path), not a local path."""
    return text.startswith(":") or (bool(re.match(r"^[\w][\w. -]*:", text)) and not text.startswith(("/", ".", "~")))


def rclone(an: Analyser, name: str, args: list[Word], st: State, cmd: Cmd | None, depth: int) -> None:
    secrets.check(an, name, args)          # rclone config show / dump print the remotes' keys
    opts, pos = split_opts(args, "", _RCLONE_LONG)
    conf = val(opts, "--config")
    if conf is not None:
        an.read_word(conf, st)
    sub = pos[0].text if pos else ""
    rest = pos[1:]
    if not rest and sub in ("", "version", "listremotes", "help", "config"):
        return
    local_srcs = rest[:-1] if sub in _RCLONE_DELETES | _RCLONE_WRITES and len(rest) >= 2 else rest
    for p in local_srcs:
        if not _rclone_remote(p.text):
            an.read_word(p, st, recursive=True)
    if sub in ("serve",):
        an.ro("`rclone serve`")
        an.need("network_requests", "approval.network", "`rclone serve` serves files over the network")
        return
    if sub in _RCLONE_DELETES or sub in _RCLONE_WRITES:
        an.ro(f"`rclone {sub}`")
    if has(opts, "-n", "--dry-run") or not rest:
        an.need("network_requests", "approval.network", "`rclone` reaches another host")
        return
    if sub in _RCLONE_DELETES:
        _rclone_deletes(an, sub, rest, st)
    elif sub in _RCLONE_WRITES:
        dest = rest[-1]
        if _rclone_remote(dest.text) or sub in ("link", "backend", "rc", "rcd", "mount", "nfsmount"):
            an.beyond("report.remote-copy", f"`rclone {sub}` changes files on another host ({dest.text})")
        else:
            an.write_word(dest, st, f"`rclone {sub}` writes")
    an.need("network_requests", "approval.network", "`rclone` reaches another host")


def _rclone_deletes(an: Analyser, sub: str, rest: list[Word], st: State) -> None:
    dest = rest[-1]
    two_way = sub in ("sync", "bisync", "move", "moveto") and len(rest) >= 2
    hit = [p for p in (rest if sub in ("bisync", "move", "moveto") or not two_way else [dest])
           if _rclone_remote(p.text)]
    if hit:
        an.deny("remote.destructive", f"`rclone {sub}` deletes files on another host ({hit[0].text}); a human "
                "does that")
    for p in (rest if sub in ("bisync", "move", "moveto") or not two_way else [dest]):
        an.delete_word(p, st, f"`rclone {sub}` deletes inside")
    if two_way:
        an.write_word(dest, st, f"`rclone {sub}` writes")


_LFTP_DELETES = re.compile(r"^(rm|rmdir|mrm)$")
_LFTP_BEYOND = frozenset({"put", "mput", "reput", "mkdir", "chmod", "mv", "mmv", "ln", "edit"})


def lftp(an: Analyser, name: str, args: list[Word], st: State, cmd: Cmd | None, depth: int) -> None:
    """lftp's commands (-e / -c text, -f FILE, its input): removals and reverse mirrors with
    --delete are denied, uploads are beyond the worktree, `!command` runs locally."""
    an.ro("`lftp`")
    scripts: list[str] = []
    for k, a in enumerate(args[:-1]):
        v = args[k + 1]
        if a.text in ("-e", "-c"):
            if not v.known:
                an.deny("remote.destructive", f"`lftp {a.text}` runs commands only known at run time")
            scripts.append(v.text)
        elif a.text == "-f":
            _kind, text = an.file_text(v, st)
            if text is None:
                an.deny("remote.destructive", f"`lftp -f {v.raw}` runs commands the guardian cannot see")
            scripts.append(text)
    if cmd is not None and cmd.stdin in ("heredoc", "herestring"):
        scripts.append(cmd.stdin_text or "")
    for text in scripts:
        if UNK in text:
            an.deny("remote.destructive", "commands fed to `lftp` are only known at run time")
        for part in re.split(r"[;\n]|&&|\|\|", text):
            _lftp_command(an, part.strip(), st, depth)
    an.need("network_requests", "approval.network", "`lftp` reaches another host")


def _lftp_command(an: Analyser, line: str, st: State, depth: int) -> None:
    if line.startswith("!"):
        an.walk(line[1:], st.copy(vars={}), depth + 1)
        return
    words = line.split()
    if not words:
        return
    if words[0] == "glob" and len(words) > 1:
        words = words[1:]
    verb = words[0]
    if _LFTP_DELETES.match(verb):
        an.deny("remote.destructive", f"lftp `{verb}` deletes files on another host; a human does that")
    if verb == "mirror" and any(w in ("-R", "--reverse") or (w.startswith("-") and not w.startswith("--")
                                                            and "R" in w) for w in words[1:]):
        if any(w in ("--delete", "-e") or w.startswith("--delete") for w in words[1:]):
            an.deny("remote.destructive", "lftp `mirror -R --delete` deletes files on another host; a human "
                    "does that")
        an.beyond("report.remote-copy", "lftp `mirror -R` uploads files to another host")
    elif verb in _LFTP_BEYOND:
        an.beyond("report.remote-copy", f"lftp `{verb}` changes files on another host")

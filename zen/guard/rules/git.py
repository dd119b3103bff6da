"""git: what destroys work or shared history, what smuggles a command in through config.

Denied even inside the worktree: reset --hard, checkout of paths / -f / ., restore of the work
tree, switch --discard-changes, clean -f, stash drop/clear, branch -D / -f, update-ref, reflog
expire/delete, filter-branch / filter-repo, worktree remove/prune, gc --prune=now, prune.
Pushes: any --force / -f / +refspec; --force-with-lease only to the job's own branch
zen/<job_id>; --mirror, --prune, --delete, :branch, --all; a destination only known at run
time. A plain push of a named branch is allowed (the remote keeps every commit; the shipped
incident rule additionally denies pushes to main, master, release/* and production).
Config: `-c` / `git config` of alias.*, core.sshCommand, core.pager, hooksPath, ... is denied
(those keys run commands); `git -C`, `--git-dir`, `--work-tree` elsewhere are denied.

`git()` reads git's global options, then hands the subcommand to its function in SUBCOMMANDS
(the subcommand as a `Sub`: gitsub.py; those that reach other repositories, hosts and files:
gitremote.py; refs and branches: gitrefs.py).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import TYPE_CHECKING

from zen.guard.paths.resolve import norm, under
from zen.guard.rules import env, gitalias, gitrefs
from zen.guard.rules.gitremote import (
    _archive,
    _clone_init,
    _credential,
    _fetch,
    _log,
    _push,
    _remote,
    _send_email,
)
from zen.guard.rules.gitsub import Sub, _values
from zen.guard.shell.words import Cmd, State, Word

if TYPE_CHECKING:
    from zen.guard.analyse import Analyser

# config keys whose values git runs as commands (or that change what it runs); compiled on
# first use (by re's cache), since most git commands never set config
_SMUGGLE_KEYS = (
    r"^(alias\..*|core\.(sshcommand|pager|editor|hookspath|fsmonitor|askpass|gitproxy|worktree|"
    r"attributesfile|excludesfile)|pager\..*|diff\..*\.(textconv|command)|diff\.external|"
    r"merge\..*\.driver|filter\..*|credential\..*|sequence\.editor|gpg\..*program|"
    r"gpg\.program|uploadpack\..*|receive\..*|protocol\..*allow|clean\.requireforce|"
    r"include\..*|includeif\..*|http\..*proxy.*|remote\..*\.(receivepack|uploadpack|proxy|push|mirror)|"
    r"ssh\.variant|init\.templatedir|web\.browser|browser\..*|man\..*|instaweb\..*|"
    r"difftool\..*|mergetool\..*|interactive\.difffilter|color\.pager|log\.showsignature|"
    r"gc\.(.*\.)?(reflogexpire|reflogexpireunreachable|pruneexpire|worktreepruneexpire))$")
# pagers that only show text: `git -c core.pager=cat log` runs nothing else
_PLAIN_PAGERS = re.compile(r"^(cat|less|more|)(\s+-[A-Za-z]+)*$")


def smuggles(key: str) -> bool:
    """`git -c key=...` / `git config key ...` of a key that runs a command."""
    return re.match(_SMUGGLE_KEYS, key, re.I) is not None


_GLOBAL_VALUE = {"-C", "-c", "--git-dir", "--work-tree", "--namespace", "--exec-path",
                 "--super-prefix", "--config-env", "--list-cmds", "--attr-source"}
READ_ONLY = frozenset({
    "status", "log", "diff", "show", "rev-parse", "ls-files", "blame", "grep", "describe",
    "shortlog", "ls-tree", "cat-file", "rev-list", "whatchanged", "name-rev", "merge-base",
    "for-each-ref", "count-objects", "var", "help", "version", "check-ignore", "check-attr",
    "diff-tree", "diff-files", "diff-index", "show-ref", "show-branch", "annotate", "cherry",
    "range-diff", "verify-commit", "verify-tag", "ls-remote", "--version", "--help", "-h",
})
_READS_PATHS = frozenset({"add", "diff", "blame", "hash-object", "show", "stage", "annotate"})


def git(an: Analyser, name: str, args: list[Word], st: State, cmd: Cmd | None, depth: int) -> None:
    i, st, zen_home = _global_options(an, args, st, depth)
    rest = args[i:]
    if not rest:
        return
    if i:   # policy rules see the subcommand even behind global options (git -C . push ...)
        an.policy_rules("git", rest, st, cmd)
    sub = Sub(rest[0].text, rest[1:], st, depth)
    if gitalias.run_alias(an, sub.name, rest[1:], st, depth):
        return
    env.cred_command(an, "git", rest)
    if sub.name not in READ_ONLY and not _read_only(sub):
        if an.ctx.agent and not zen_home and not all(c is not None and any(under(c, r) for r in an.roots)
                                                     for c in st.cwds):
            an.deny("git.other-repo", f"`git {sub.name}` outside the job's worktree (the lane's own checkout "
                    "and other jobs' worktrees are not the agent's): run it in the worktree")
        if zen_home:
            an.deny("git.other-repo", f"`git {sub.name}` in zen's home: only read-only git commands reach it")
        an.ro(f"`git {sub.name}`")
    handle = SUBCOMMANDS.get(sub.name)
    if handle is not None:
        handle(an, sub)
    elif sub.name.startswith("credential-"):
        _credential(an, sub)
    if sub.name in _READS_PATHS:
        for p in sub.pos:
            an.read_word(p, st)
    # apply / am write only inside the repository git runs in (checked above with -C / cwd)


def _global_options(an: Analyser, args: list[Word], st: State, depth: int) -> tuple[int, State, bool]:
    """The index of the subcommand, the state git runs it in (after -C), and whether it runs in
    zen's home (where only read-only commands may)."""
    zen_home = False
    i = 0
    while i < len(args):
        a = args[i]
        t = a.text
        if not a.known:
            an.deny("git.unresolved", "git with an option or subcommand only known at run time")
        if not t.startswith("-"):
            break
        name, eq, val = t.partition("=")
        value: str | None = val if eq else None
        if name in _GLOBAL_VALUE and not eq:
            if i + 1 >= len(args):
                break
            nxt = args[i + 1]
            if not nxt.known:
                an.deny("git.unresolved", f"`git {name}` with a value only known at run time")
            value = nxt.text
            i += 1
        if name == "-c" and value is not None:
            key, _, setting = value.partition("=")
            plain_pager = re.match(r"(?i)^(core\.pager|pager\.[a-z-]+)$", key) and _PLAIN_PAGERS.match(setting.strip())
            if plain_pager or _git_alias(an, key, setting, st, depth):
                pass
            elif smuggles(key):
                an.deny("git.config-smuggle", f"`git -c {key}=...` can run commands or change what git "
                        "does; not allowed")
        elif name == "--config-env":
            an.deny("git.config-smuggle", "`git --config-env` sets config from the environment")
        elif name in ("-C", "--git-dir", "--work-tree") and value is not None:
            p = norm(value, st.cwd) if st.cwd or value.startswith("/") else None
            if p is None:
                an.deny("git.other-repo", f"`git {name}` to a directory the guardian cannot resolve")
            if not any(under(p, r) for r in an.roots):
                if an.home and under(p, an.home):
                    zen_home = True
                else:
                    an.deny("git.other-repo", f"`git {name} {value}`: another repository, outside the "
                            "job's worktree")
            if name == "-C":
                st = st.copy(cwds=(p,))
        elif name == "--exec-path" and value is not None:
            an.deny("git.config-smuggle", "`git --exec-path=` swaps git's own programs")
        i += 1
    return i, st, zen_home


def _git_alias(an: Analyser, key: str, value: str, st: State, depth: int) -> bool:
    """An alias of git's own commands (`alias.st=status`) is judged as the command it stands for;
    True when `key` is such an alias. A `!` alias runs the shell: the caller denies it."""
    if not key.lower().startswith("alias.") or not value.strip():
        return False
    gitalias.record(an, key.split(".", 1)[1], value)
    if value.lstrip().startswith("!"):
        return False
    an.walk("git " + value, st.copy(vars={}), depth + 1)
    return True


def _read_only(sub: Sub) -> bool:
    flags, ptexts = sub.flags, sub.ptexts
    name = sub.name
    if name == "branch":
        return not ptexts or (any(f in ("-l", "--list", "-a", "-r", "--contains", "--merged", "--no-merged",
                                       "--show-current", "-v", "-vv") for f in flags) and not any(
            f in ("-d", "-D", "-m", "-M", "-c", "-C", "-f", "--delete", "--move", "--copy", "--force",
                  "-u", "--set-upstream-to", "--unset-upstream", "--edit-description") for f in flags))
    if name == "remote":
        return not ptexts or ptexts[0] in ("show", "get-url", "-v")
    if name == "tag":
        return not ptexts or "-l" in flags or "--list" in flags
    if name == "stash":
        return ptexts[:1] in (["list"], ["show"])
    if name == "config":
        return any(f in ("--get", "--get-all", "--get-regexp", "-l", "--list", "--show-origin", "--show-scope")
                   for f in flags) or (ptexts[:1] in (["get"], ["list"])) or (len(ptexts) == 1 and not flags)
    if name == "worktree":
        return ptexts[:1] == ["list"]
    if name == "reflog":
        return not ptexts or ptexts[0] in ("show",)
    if name == "submodule":
        return not ptexts or ptexts[0] == "status"
    if name == "notes":
        return not ptexts or ptexts[0] in ("list", "show")
    return False


# -- work in the worktree ---------------------------------------------------------------------

def _reset(an: Analyser, s: Sub) -> None:
    if "--hard" in s.flags or "--merge" in s.flags:
        an.deny("git.reset-hard", "`git reset --hard` throws away uncommitted work irrecoverably")


def _checkout(an: Analyser, s: Sub) -> None:
    flags, ptexts = s.flags, s.ptexts
    if "--force" in flags or s.short("f"):
        an.deny("git.discard", "`git checkout -f` throws away uncommitted changes")
    if "-B" in flags:
        an.deny("git.branch-force", "`git checkout -B` resets an existing branch")
    if "--" in [a.text for a in s.args]:
        an.deny("git.discard", "`git checkout -- <paths>` overwrites uncommitted changes")
    if "." in ptexts or any(p.endswith("/.") or p == "*" for p in ptexts):
        an.deny("git.discard", "`git checkout .` overwrites every uncommitted change")
    value_opts = {"-b", "-B", "--orphan", "--conflict", "--track", "-t"}
    plain = []
    skip = False
    for a in s.args:
        if skip:
            skip = False
            continue
        if a.text in value_opts and a.text not in ("-t", "--track"):
            skip = True
            continue
        if not a.text.startswith("-"):
            plain.append(a.text)
    if len(plain) >= 2 or "--pathspec-from-file" in " ".join(flags) or "--ours" in flags or \
            "--theirs" in flags or "-p" in flags or "--patch" in flags:
        an.deny("git.discard", "`git checkout <tree> <paths>` overwrites uncommitted changes")
    gitrefs.switch_target(an, s, [a for a in s.pos if a.text in plain])


def _restore(an: Analyser, s: Sub) -> None:
    staged = "--staged" in s.flags or s.short("S")
    worktree = "--worktree" in s.flags or s.short("W")
    if not staged or worktree:
        an.deny("git.discard", "`git restore` of the work tree overwrites uncommitted changes")


def _switch(an: Analyser, s: Sub) -> None:
    if "--discard-changes" in s.flags or "--force" in s.flags or s.short("f") or \
            s.short("C") or any(f.split("=", 1)[0] == "--force-create" for f in s.flags):
        an.deny("git.discard", "`git switch --discard-changes/-f/-C` throws away work")
    gitrefs.switch_target(an, s, [a for a in s.pos if a not in _values(s, ("-c", "--create", "--orphan"))])


def _clean(an: Analyser, s: Sub) -> None:
    dry = "--dry-run" in s.flags or s.short("n")
    force = "--force" in s.flags or s.short("f")
    if force and not dry:
        an.deny("git.clean", "`git clean -f` deletes untracked files irrecoverably")


def _stash(an: Analyser, s: Sub) -> None:
    if s.ptexts[:1] in (["drop"], ["clear"]):
        an.deny("git.stash-drop", f"`git stash {s.ptexts[0]}` destroys stashed work")
    if s.ptexts[:1] == ["branch"] and len(s.pos) > 1:
        gitrefs.deny_protected(an, s.pos[1], "`git stash branch` creates")


def _branch(an: Analyser, s: Sub) -> None:
    flags = s.flags
    if "-D" in flags or s.short("D") or (("--delete" in flags or s.short("d")) and
                                         ("--force" in flags or s.short("f"))):
        an.deny("git.branch-delete", "`git branch -D` deletes unmerged work")
    if ("--force" in flags or s.short("f")) or "-M" in flags or "-C" in flags:
        an.deny("git.branch-force", "`git branch -f/-M/-C` moves or overwrites a branch")
    gitrefs.branch(an, s)


def _tag(an: Analyser, s: Sub) -> None:
    if "-f" in s.flags or "--force" in s.flags or s.short("f"):
        an.deny("git.tag-force", "`git tag -f` moves a published tag")
    if "--delete" in s.flags or s.short("d"):
        # tags are shared by every worktree of the lane's repository, and a lightweight tag is
        # the only name of its commit
        an.deny("git.tag-delete", "`git tag -d` deletes a tag of the lane's repository")


def _rm_mv(an: Analyser, s: Sub) -> None:
    for p in s.pos:
        if s.name == "rm" or p is not s.pos[-1]:
            an.delete_word(p, s.st, f"`git {s.name}` removes")
    if s.name == "mv" and s.pos:
        an.write_word(s.pos[-1], s.st, "`git mv` moves into")


# -- history ----------------------------------------------------------------------------------

def _update_ref(an: Analyser, s: Sub) -> None:
    an.deny("git.update-ref", "`git update-ref` rewrites refs directly")


def _reflog(an: Analyser, s: Sub) -> None:
    if s.ptexts[:1] in (["expire"], ["delete"]):
        an.deny("git.reflog-expire", "`git reflog expire/delete` destroys the recovery log")


def _rewrite(an: Analyser, s: Sub) -> None:
    an.deny("git.history-rewrite", f"`git {s.name}` rewrites history")


def _worktree(an: Analyser, s: Sub) -> None:
    gitrefs.worktree(an, s)


def _gc(an: Analyser, s: Sub) -> None:
    if any(f.startswith("--prune") and f not in ("--prune", "--no-prune") for f in s.flags) and \
            not any(f.endswith(("weeks.ago", "days.ago", "2.weeks.ago")) for f in s.flags):
        an.deny("git.gc-prune", "`git gc --prune=now` deletes unreachable commits for good")


def _prune(an: Analyser, s: Sub) -> None:
    an.deny("git.gc-prune", "`git prune` deletes unreachable commits for good")


# -- pushes -----------------------------------------------------------------------------------

# -- config and programs git runs -----------------------------------------------------------------

def _config(an: Analyser, s: Sub) -> None:
    flags, ptexts = s.flags, s.ptexts
    if any(f.startswith("--file") or f == "-f" for f in flags):
        an.deny("fs.outside-worktree", "`git config --file` writes a config file the guardian cannot place")
    if any(f in ("--get", "--get-all", "--get-regexp", "--get-urlmatch", "--get-color", "--get-colorbool", "-l",
                 "--list", "--show-origin", "--show-scope") for f in flags) or ptexts[:1] in (["get"], ["list"]):
        return
    if any(f in ("-e", "--edit") for f in flags) or ptexts[:1] == ["edit"]:
        an.deny("git.config-write", "`git config --edit` opens the lane's shared configuration in an editor")
    if any(f in ("--remove-section", "--rename-section") for f in flags) or \
            ptexts[:1] in (["remove-section"], ["rename-section"]):
        an.deny("git.config-write", "`git config --remove/rename-section` rewrites the lane's shared configuration")
    unset = any(f in ("--unset", "--unset-all") for f in flags) or ptexts[:1] == ["unset"]
    words = ptexts[1:] if ptexts[:1] in (["set"], ["add"], ["unset"]) else ptexts
    if not words or (len(words) == 1 and not unset and not any(f in ("--add", "--replace-all") for f in flags)):
        return                          # git config KEY: reads it
    key = words[0]
    alias = not unset and len(words) >= 2 and _git_alias(an, key, words[1], s.st, s.depth)
    if not alias and not unset and smuggles(key):
        an.deny("git.config-smuggle", f"`git config {key}` persists a command git will run")
    if any(f in ("--global", "--system") for f in flags):
        an.deny("fs.outside-worktree", "`git config --global/--system` changes configuration outside the "
                "worktree")
    if not alias:
        gitrefs.config_write(an, key, "--unset " if unset else "")


def _rebase(an: Analyser, s: Sub) -> None:
    for k, a in enumerate(s.args):
        if a.text in ("-x", "--exec") and k + 1 < len(s.args):
            an.walk(s.args[k + 1].text, s.st.copy(vars={}), s.depth + 1)
        elif a.text.startswith("--exec="):
            an.walk(a.text.split("=", 1)[1], s.st.copy(vars={}), s.depth + 1)
    gitrefs.rebase(an, s)


def _bisect(an: Analyser, s: Sub) -> None:
    if s.ptexts[:1] == ["run"]:
        run = [w for w in s.args if w.text != "run"]
        if run:
            an.leaf(run, s.st, None, s.depth + 1)


def _submodule(an: Analyser, s: Sub) -> None:
    if "foreach" in s.ptexts:
        k = [a.text for a in s.args].index("foreach")
        body = [w for w in s.args[k + 1:] if w.text != "--recursive"]
        if body:
            an.walk(" ".join(w.text for w in body), State((None,)), s.depth + 1)


def _difftool(an: Analyser, s: Sub) -> None:
    for a in s.args:
        if a.text in ("-x", "--extcmd", "-t", "--tool") or a.text.startswith(("--extcmd=",)):
            an.deny("git.config-smuggle", f"`git {s.name} {a.text}` runs an arbitrary program")


def _grep(an: Analyser, s: Sub) -> None:
    if any(f.startswith(("-O", "--open-files-in-pager")) for f in s.flags):
        an.deny("git.config-smuggle", "`git grep -O` runs a pager program")


SUBCOMMANDS: dict[str, Callable[[Analyser, Sub], None]] = {
    "reset": _reset, "checkout": _checkout, "restore": _restore, "switch": _switch, "clean": _clean,
    "stash": _stash, "branch": _branch, "tag": _tag, "rm": _rm_mv, "mv": _rm_mv,
    "update-ref": _update_ref, "reflog": _reflog, "filter-branch": _rewrite, "filter-repo": _rewrite,
    "replace": _rewrite, "worktree": _worktree, "gc": _gc, "prune": _prune,
    "push": _push, "config": _config, "rebase": _rebase, "bisect": _bisect, "submodule": _submodule,
    "difftool": _difftool, "mergetool": _difftool, "grep": _grep, "clone": _clone_init,
    "init": _clone_init, "fetch": _fetch, "pull": _fetch, "ls-remote": _fetch,
    "archive": _archive, "format-patch": _archive, "bundle": _archive,
    "log": _log, "diff": _log, "show": _log, "credential": _credential, "remote": _remote,
    "send-pack": _push, "send-email": _send_email, "imap-send": _send_email,
    "symbolic-ref": gitrefs.symbolic_ref, "fast-import": gitrefs.fast_import,
}

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
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from zen.guard.paths import norm, under
from zen.guard.shell import Cmd, State, Word, lit

if TYPE_CHECKING:
    from zen.guard.analyse import Analyser

_GLOBAL_VALUE = {"-C", "-c", "--git-dir", "--work-tree", "--namespace", "--exec-path",
                 "--super-prefix", "--config-env", "--list-cmds", "--attr-source"}
READ_ONLY = frozenset({
    "status", "log", "diff", "show", "rev-parse", "ls-files", "blame", "grep", "describe",
    "shortlog", "ls-tree", "cat-file", "rev-list", "whatchanged", "name-rev", "merge-base",
    "for-each-ref", "count-objects", "var", "help", "version", "check-ignore", "check-attr",
    "diff-tree", "diff-files", "diff-index", "show-ref", "show-branch", "annotate", "cherry",
    "range-diff", "verify-commit", "verify-tag", "ls-remote", "--version", "--help", "-h",
})


def _flags(args: list[Word]) -> list[str]:
    return [a.text for a in args if a.text.startswith("-")]


def _short(flags: list[str], letter: str) -> bool:
    return any(f.startswith("-") and not f.startswith("--") and letter in f[1:] for f in flags)


def check_git(an: Analyser, args: list[Word], st: State, cmd: Cmd | None, depth: int) -> None:
    from zen.guard.analyse import _GIT_SMUGGLE_KEYS

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
            key = value.split("=", 1)[0]
            if _GIT_SMUGGLE_KEYS.match(key):
                an.deny("git.config-smuggle", f"`git -c {key}=...` can run commands or change what git "
                        "does; not allowed")
        elif name == "--config-env":
            an.deny("git.config-smuggle", "`git --config-env` sets config from the environment")
        elif name in ("-C", "--git-dir", "--work-tree") and value is not None:
            p = norm(value, st.cwd) if st.cwd or value.startswith("/") else None
            if p is None:
                an.deny("git.other-repo", f"`git {name}` to a directory the guardian cannot resolve")
            if not any(under(p, r) for r in an.roots):
                an.deny("git.other-repo", f"`git {name} {value}`: another repository, outside the "
                        "job's worktree")
            if name == "-C":
                st = st.copy(cwds=(p,))
        elif name == "--exec-path" and value is not None:
            an.deny("git.config-smuggle", "`git --exec-path=` swaps git's own programs")
        i += 1
    rest = args[i:]
    if not rest:
        return
    if i:   # policy rules see the subcommand even behind global options (git -C . push ...)
        an.policy_rules("git", rest, st, cmd)
    sub = rest[0].text
    sargs = rest[1:]
    flags = _flags(sargs)
    pos = [a for a in sargs if not a.text.startswith("-")]
    ptexts = [a.text for a in pos]

    an.cred_command("git", rest)
    if sub not in READ_ONLY and not _read_only(sub, sargs, flags, ptexts):
        an.ro(f"`git {sub}`")

    def deny(rule: str, why: str) -> None:
        an.deny(rule, why)

    if sub == "reset":
        if "--hard" in flags or "--merge" in flags:
            deny("git.reset-hard", "`git reset --hard` throws away uncommitted work irrecoverably")
    elif sub == "checkout":
        force = "--force" in flags or _short(flags, "f")
        if force:
            deny("git.discard", "`git checkout -f` throws away uncommitted changes")
        if "-B" in flags:
            deny("git.branch-force", "`git checkout -B` resets an existing branch")
        texts = [a.text for a in sargs]
        if "--" in texts:
            deny("git.discard", "`git checkout -- <paths>` overwrites uncommitted changes")
        if "." in ptexts or any(p.endswith("/.") or p == "*" for p in ptexts):
            deny("git.discard", "`git checkout .` overwrites every uncommitted change")
        value_opts = {"-b", "-B", "--orphan", "--conflict", "--track", "-t"}
        plain = []
        skip = False
        for a in sargs:
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
            deny("git.discard", "`git checkout <tree> <paths>` overwrites uncommitted changes")
    elif sub == "restore":
        staged = "--staged" in flags or _short(flags, "S")
        worktree = "--worktree" in flags or _short(flags, "W")
        if not staged or worktree:
            deny("git.discard", "`git restore` of the work tree overwrites uncommitted changes")
    elif sub == "switch":
        if "--discard-changes" in flags or "--force" in flags or _short(flags, "f") or \
                any(f in ("-C", "--force-create") for f in flags):
            deny("git.discard", "`git switch --discard-changes/-f/-C` throws away work")
    elif sub == "clean":
        dry = "--dry-run" in flags or _short(flags, "n")
        force = "--force" in flags or _short(flags, "f")
        if force and not dry:
            deny("git.clean", "`git clean -f` deletes untracked files irrecoverably")
    elif sub == "stash":
        if ptexts[:1] in (["drop"], ["clear"]):
            deny("git.stash-drop", f"`git stash {ptexts[0]}` destroys stashed work")
    elif sub == "branch":
        if "-D" in flags or _short(flags, "D") or (("--delete" in flags or _short(flags, "d")) and
                                                    ("--force" in flags or _short(flags, "f"))):
            deny("git.branch-delete", "`git branch -D` deletes unmerged work")
        if ("--force" in flags or _short(flags, "f")) or "-M" in flags or "-C" in flags:
            deny("git.branch-force", "`git branch -f/-M/-C` moves or overwrites a branch")
    elif sub == "update-ref":
        deny("git.update-ref", "`git update-ref` rewrites refs directly")
    elif sub == "reflog":
        if ptexts[:1] in (["expire"], ["delete"]):
            deny("git.reflog-expire", "`git reflog expire/delete` destroys the recovery log")
    elif sub in ("filter-branch", "filter-repo", "replace"):
        deny("git.history-rewrite", f"`git {sub}` rewrites history")
    elif sub == "worktree":
        if ptexts[:1] in (["remove"], ["prune"]):
            deny("git.worktree-remove", f"`git worktree {ptexts[0]}` deletes a worktree")
    elif sub == "gc":
        if any(f.startswith("--prune") and f not in ("--prune", "--no-prune") for f in flags) and \
                not any(f.endswith(("weeks.ago", "days.ago", "2.weeks.ago")) for f in flags):
            deny("git.gc-prune", "`git gc --prune=now` deletes unreachable commits for good")
    elif sub == "prune":
        deny("git.gc-prune", "`git prune` deletes unreachable commits for good")
    elif sub == "push":
        _push(an, sargs, flags)
    elif sub == "config":
        _config(an, sargs, flags, ptexts)
    elif sub == "rebase":
        for k, a in enumerate(sargs):
            if a.text in ("-x", "--exec") and k + 1 < len(sargs):
                an.walk(sargs[k + 1].text, st.copy(vars={}), depth + 1)
            elif a.text.startswith("--exec="):
                an.walk(a.text.split("=", 1)[1], st.copy(vars={}), depth + 1)
    elif sub == "bisect" and ptexts[:1] == ["run"]:
        run = [w for w in sargs if w.text != "run"]
        if run:
            an.leaf(run, st, None, depth + 1)
    elif sub == "submodule" and "foreach" in ptexts:
        k = [a.text for a in sargs].index("foreach")
        body = [w for w in sargs[k + 1:] if w.text != "--recursive"]
        if body:
            an.walk(" ".join(w.text for w in body), State((None,)), depth + 1)
    elif sub in ("difftool", "mergetool"):
        for a in sargs:
            if a.text in ("-x", "--extcmd", "-t", "--tool") or a.text.startswith(("--extcmd=",)):
                an.deny("git.config-smuggle", f"`git {sub} {a.text}` runs an arbitrary program")
    elif sub == "grep":
        if any(f.startswith(("-O", "--open-files-in-pager")) for f in flags):
            an.deny("git.config-smuggle", "`git grep -O` runs a pager program")
    elif sub in ("clone", "init"):
        if len(pos) >= (2 if sub == "clone" else 1):
            an.write_word(pos[-1], st, f"`git {sub}` writes")
        if any(f.startswith(("--template", "-u", "--upload-pack", "--config", "-c")) for f in flags):
            an.deny("git.config-smuggle", f"`git {sub}` with a template/upload-pack/config runs programs")
        if sub == "clone":
            an.need("network_requests", "approval.network", "`git clone` reaches the network")
    elif sub in ("fetch", "pull", "ls-remote"):
        if any(f.startswith(("--upload-pack", "--exec")) for f in flags):
            an.deny("git.config-smuggle", f"`git {sub} --upload-pack` runs a program")
        an.need("network_requests", "approval.network", f"`git {sub}` reaches the network")
    elif sub in ("archive", "format-patch", "bundle"):
        for k, a in enumerate(sargs):
            if a.text in ("-o", "--output", "--output-directory") and k + 1 < len(sargs):
                an.write_word(sargs[k + 1], st, f"`git {sub}` writes")
            elif a.text.startswith(("--output=", "--output-directory=")):
                an.write_word(lit(a.text.split("=", 1)[1]), st, f"`git {sub}` writes")
        if sub == "archive" and any(f.startswith("--remote") or f.startswith("--exec") for f in flags):
            an.deny("git.config-smuggle", "`git archive --remote/--exec` runs a program")
    elif sub in ("log", "diff", "show"):
        for a in sargs:
            if a.text.startswith("--output="):
                an.write_word(lit(a.text.split("=", 1)[1]), st, f"`git {sub} --output` writes")
            if a.text.startswith("--ext-diff") or a.text == "--textconv":
                pass
    elif sub == "credential" or sub.startswith("credential-"):
        an.deny("creds.command", f"`git {sub}` reads stored credentials")
    elif sub in ("rm", "mv"):
        for p in pos:
            if sub == "rm" or p is not pos[-1]:
                an.delete_word(p, st, f"`git {sub}` removes")
        if sub == "mv" and pos:
            an.write_word(pos[-1], st, "`git mv` moves into")
    elif sub == "tag":
        if "-f" in flags or "--force" in flags:
            an.deny("git.tag-force", "`git tag -f` moves a published tag")
    elif sub == "commit":
        pass
    if sub in ("add", "diff", "blame", "hash-object", "show", "stage", "annotate"):
        for p in pos:
            an.read_word(p, st)
    # apply / am write only inside the repository git runs in (checked above with -C / cwd)


def _read_only(sub: str, args: list[Word], flags: list[str], ptexts: list[str]) -> bool:
    if sub == "branch":
        return not ptexts or (any(f in ("-l", "--list", "-a", "-r", "--contains", "--merged", "--no-merged",
                                       "--show-current", "-v", "-vv") for f in flags) and not any(
            f in ("-d", "-D", "-m", "-M", "-c", "-C", "-f", "--delete", "--move", "--copy", "--force",
                  "-u", "--set-upstream-to", "--unset-upstream", "--edit-description") for f in flags))
    if sub == "remote":
        return not ptexts or ptexts[0] in ("show", "get-url", "-v")
    if sub == "tag":
        return not ptexts or "-l" in flags or "--list" in flags
    if sub == "stash":
        return ptexts[:1] in (["list"], ["show"])
    if sub == "config":
        return any(f in ("--get", "--get-all", "--get-regexp", "-l", "--list", "--show-origin", "--show-scope")
                   for f in flags) or (ptexts[:1] in (["get"], ["list"])) or (len(ptexts) == 1 and not flags)
    if sub == "worktree":
        return ptexts[:1] == ["list"]
    if sub == "reflog":
        return not ptexts or ptexts[0] in ("show",)
    if sub == "submodule":
        return not ptexts or ptexts[0] == "status"
    if sub == "notes":
        return not ptexts or ptexts[0] in ("list", "show")
    return False


def _push(an: Analyser, args: list[Word], flags: list[str]) -> None:
    own = f"zen/{an.ctx.job_id}" if an.ctx.job_id else None
    lease = False
    force = False
    texts = []
    skip = False
    for _k, a in enumerate(args):
        t = a.text
        if skip:
            skip = False
            continue
        if not a.known:
            an.deny("git.push-unresolved", "a push whose destination is only known at run time")
        if t.startswith("--"):
            name = t.split("=", 1)[0]
            if name == "--force":
                force = True
            elif name in ("--force-with-lease", "--force-if-includes"):
                lease = lease or name == "--force-with-lease"
            elif name in ("--mirror", "--prune", "--delete", "--all", "--branches"):
                an.deny("git.push-destructive", f"`git push {name}` can delete or overwrite remote branches")
            elif name in ("--receive-pack", "--exec"):
                an.deny("git.config-smuggle", f"`git push {name}` runs a program on the remote")
            elif name in ("--repo", "--push-option", "--signed", "--recurse-submodules", "-o") and "=" not in t:
                skip = name in ("--repo", "--push-option")
            continue
        if t.startswith("-") and len(t) > 1:
            if "f" in t[1:]:
                force = True
            if "d" in t[1:]:
                an.deny("git.push-destructive", "`git push -d` deletes remote branches")
            if t == "-o":
                skip = True
            continue
        texts.append(t)
    if force:
        an.deny("git.force-push", "force pushes overwrite shared history (only --force-with-lease to the "
                "job's own branch is allowed)")
    refspecs = texts[1:]
    for r in refspecs:
        if r.startswith("+"):
            an.deny("git.force-push", f"`{r}`: a + refspec is a force push")
        if r.startswith(":") or r.endswith(":"):
            an.deny("git.push-destructive", f"`{r}`: pushing nothing to a branch deletes it")
    if lease:
        dests = []
        for r in refspecs:
            dst = r.split(":", 1)[1] if ":" in r else r
            dests.append(dst.removeprefix("refs/heads/"))
        if own is None or not dests or any(d != own for d in dests):
            an.deny("git.force-push", f"--force-with-lease only to the job's own branch "
                    f"({own or 'zen/<job>'}), and it must be named")
    an.need("network_requests", "approval.network", "`git push` reaches the remote")
    an.beyond("report.push", "`git push` sends commits beyond the worktree")


def _config(an: Analyser, args: list[Word], flags: list[str], ptexts: list[str]) -> None:
    from zen.guard.analyse import _GIT_SMUGGLE_KEYS

    reading = any(f in ("--get", "--get-all", "--get-regexp", "-l", "--list", "--show-origin", "--show-scope",
                        "--unset", "--unset-all", "--remove-section") for f in flags) or \
        ptexts[:1] in (["get"], ["list"], ["unset"])
    if reading:
        return
    words = ptexts[1:] if ptexts[:1] in (["set"], ["add"]) else ptexts
    if words:
        key = words[0]
        if _GIT_SMUGGLE_KEYS.match(key) and len(words) >= 2:
            an.deny("git.config-smuggle", f"`git config {key}` persists a command git will run")
    if any(f in ("--global", "--system") for f in flags) and len(words) >= 2:
        an.deny("fs.outside-worktree", "`git config --global/--system` changes configuration outside the "
                "worktree")
    if any(f.startswith("--file") or f == "-f" for f in flags):
        an.deny("fs.outside-worktree", "`git config --file` writes a config file the guardian cannot place")

"""git refs are the human's (security-findings H5, M11): what an agent may do to branches, tags,
HEAD, worktrees and the lane's shared configuration.

A job works on its own branch, zen/<job id>, in its own worktree; the lane's base branch, the
zen/ namespace (other jobs' branches, zen/review/<id> that `zen land` merges) and the shared
.git/config are the human's. What this allows and denies, and why:

- **new local branches** (`git checkout -b topic`, `git switch -c topic`, `git branch topic [START]`,
  `git worktree add -b topic`): allowed when the name is not protected. git itself refuses a name
  that exists (only -f / -B / -C / -M force it, and those are denied), so a new name moves nothing.
  Protected: the lane's base (task.yaml's `base`, and main / master / trunk / develop /
  release/* / production whatever the base), anything under zen/ but the job's own branch, HEAD,
  and names spelled as refs (refs/..., -x).
- **rename, copy over, delete**: `git branch -m/-M` (any: renaming the job's own branch loses the
  harvest's branch; renaming another's is the H5 swap), `git branch -d/-D`, `git branch -c` to a
  protected name: denied. `git branch -c topic other` to a new name copies: allowed.
- **switching to a protected branch** (`git checkout main`, `git switch zen/review/x`): denied, since
  the next commit would move it; `--detach` (or a commit id) moves no branch and stays allowed, and
  so does `--ignore-other-worktrees` nowhere (it is denied: it checks out a branch that another
  worktree, the lane's own checkout, has).
- **HEAD**: `git symbolic-ref HEAD refs/heads/main` (writing, or -d) is denied; reading stays allowed.
- **fetch into local branches** (`git fetch origin main:main`, `+x:y`): denied for a protected
  destination or a forced one.
- **rebase BASE BRANCH** switches to BRANCH first: denied for a protected BRANCH.
- **worktrees**: `git worktree add PATH` writes a checkout at PATH (judged as a write: outside the
  job's worktree is denied, M11); `move` and `repair` rewrite other worktrees' links: denied.
- **shared configuration** (`git config KEY VALUE`, the lane's .git/config that the human's
  checkout reads too): only the keys in CONFIG_ALLOWED may be written (identity, colours, merge and
  diff style, the job's own branch's upstream); everything else (core.bare, extensions.*,
  remote.*, includes, ...) is denied, and so are --unset / --remove-section / --rename-section /
  --edit of anything outside the list. `git remote add/rename/remove/set-url/...` write remotes: denied.

Existence of refs is read from disk when the guardian may read (the worktree's .git file, then the
common git dir's refs/ and packed-refs); this only refines `git checkout NAME` (a branch, or a file
whose uncommitted changes it would throw away).

Lean on purpose (imported by the hook with the git rules): stdlib + zen.guard.
"""

from __future__ import annotations

import os
import posixpath
import re
from typing import TYPE_CHECKING

from zen.guard.paths.resolve import norm
from zen.guard.shell.words import Word
from zen.store import layout

if TYPE_CHECKING:
    from zen.guard.analyse import Analyser
    from zen.guard.rules.gitsub import Sub

ALWAYS_PROTECTED = frozenset({"main", "master", "trunk", "develop", "development", "production", "prod",
                              "stable", "HEAD", "FETCH_HEAD", "ORIG_HEAD", "MERGE_HEAD"})
_PROTECTED_PREFIXES = ("release/", "releases/", "production/", "hotfix/")
# keys a job may write to the lane's shared config: none runs a command or changes what the
# human's checkout is (the job's own branch's keys are added per job)
CONFIG_ALLOWED = re.compile(
    r"^(user\.(name|email)|author\.(name|email)|committer\.(name|email)|color\.[a-z.]+|advice\.[a-z]+|"
    r"merge\.(conflictstyle|ff|log|stat)|diff\.(algorithm|renames|colormoved|mnemonicprefix|context)|"
    r"pull\.(rebase|ff)|push\.(default|autosetupremote|followtags)|rerere\.(enabled|autoupdate)|"
    r"log\.(date|decorate|abbrevcommit|follow)|status\.(showuntrackedfiles|short|branch|relativepaths)|"
    r"format\.(pretty|signoff)|commit\.(verbose|status|cleanup)|rebase\.(autosquash|autostash|stat)|"
    r"fetch\.(prune|prunetags|parallel)|core\.(quotepath|autocrlf|safecrlf)|i18n\.[a-z]+|"
    r"init\.defaultbranch|blame\.[a-z]+|help\.autocorrect|grep\.[a-z]+)$", re.I)
_FILE_LIKE = re.compile(r"(^\./|^\.\./|[*?\[]|\.[A-Za-z][A-Za-z0-9]{0,7}$)")
_REVISION = re.compile(r"([~^]|@\{|^[0-9a-f]{7,40}$|^-$|^@$|\.\.)")


def own_branch(an: Analyser) -> str | None:
    return f"zen/{an.ctx.job_id}" if an.ctx.job_id else None


def base_branch(an: Analyser) -> str | None:
    """The lane's base branch, from the job's task.yaml (None when it cannot be read)."""
    memo = an.memo.get("git.base")
    if memo is not None:
        return memo or None
    base = ""
    if an.ctx.home and an.ctx.job_id and an.ctx.read is not None:
        try:
            text = an.ctx.read(f"{an.ctx.home.rstrip('/')}/{layout.JOBS}/{an.ctx.job_id}/{layout.TASK}") or b""
        except OSError:
            text = b""
        m = re.search(rb"^base:\s*['\"]?([^'\"\s#]+)", text, re.M)
        base = m.group(1).decode("utf-8", "replace") if m else ""
    an.memo["git.base"] = base
    return base or None


def protected(an: Analyser, name: str) -> str | None:
    """Why branch `name` is not the agent's to create, move or switch to (None: it may)."""
    short = name.removeprefix("refs/heads/")
    own = own_branch(an)
    if own is not None and short == own:
        return None
    if short.startswith("zen/") or short == "zen":
        return f"{short} is in zen's namespace (other jobs' branches, zen/review/* that zen land merges)"
    if short == base_branch(an) or short in ALWAYS_PROTECTED or short.startswith(_PROTECTED_PREFIXES):
        return f"{short} is the lane's base (or a release branch): a human's"
    if short.startswith(("refs/", "-")) or not short:
        return f"{name} names a ref outside the branches"
    return None


def deny_protected(an: Analyser, name: Word, what: str) -> None:
    if not name.known:
        an.deny("git.ref", f"{what} a branch only known at run time; agents change only their own branch")
    why = protected(an, name.text)
    if why is not None:
        an.deny("git.ref", f"{what} {name.text}: {why}; agents create new names of their own, or work "
                f"on {own_branch(an) or 'zen/<job>'}")


def _value_after(s: Sub, opts: tuple[str, ...]) -> list[Word]:
    """The words given to any of `opts` (-b NAME, -bNAME, --orphan=NAME)."""
    out: list[Word] = []
    for k, a in enumerate(s.args):
        t = a.text
        for o in opts:
            if t == o and k + 1 < len(s.args):
                out.append(s.args[k + 1])
            elif o.startswith("--") and t.startswith(o + "="):
                out.append(Word(t.split("=", 1)[1], a.raw))
            elif not o.startswith("--") and t.startswith(o) and len(t) > len(o) and t[1] == o[1]:
                out.append(Word(t[len(o):], a.raw))
    return out


def branch(an: Analyser, s: Sub) -> None:
    flags = s.flags
    move = any(f in ("-m", "-M", "--move") for f in flags) or s.short("m") or s.short("M")
    copy = any(f in ("-c", "-C", "--copy") for f in flags) or s.short("c") or s.short("C")
    delete = any(f in ("-d", "-D", "--delete") for f in flags) or s.short("d") or s.short("D")
    if move:
        an.deny("git.ref", "`git branch -m` renames a branch: the job's own is what zen harvests, and the "
                "others are a human's; create a new name instead (git branch NEW)")
    if delete:
        an.deny("git.ref", "`git branch -d` deletes a branch of the lane's repository (branches are shared "
                "by every worktree); leave it, zen harvests only the job's own")
    if _listing(s):
        return
    if copy:
        if s.pos:
            deny_protected(an, s.pos[-1], "`git branch -c` copies onto")
        return
    if s.pos:
        deny_protected(an, s.pos[0], "`git branch` creates")


def _listing(s: Sub) -> bool:
    return not s.pos or any(f in ("-l", "--list", "-a", "--all", "-r", "--remotes", "--contains", "--merged",
                                  "--no-merged", "--points-at", "--no-contains", "--show-current")
                            or f.startswith(("--contains=", "--merged=", "--points-at=", "--format",
                                             "--sort", "--no-merged=", "--no-contains="))
                            for f in s.flags) or any(
        f in ("-u", "--set-upstream-to", "--unset-upstream", "--edit-description") or f.startswith(
            "--set-upstream-to=") for f in s.flags)


def switch_target(an: Analyser, s: Sub, plain: list[Word]) -> None:
    """checkout / switch: new branch names, the branch switched to, and a file it would overwrite."""
    flags = s.flags
    if any(f == "--ignore-other-worktrees" for f in flags):
        an.deny("git.ref", f"`git {s.name} --ignore-other-worktrees` checks out a branch another worktree "
                "(the lane's own checkout) has: the next commit would move it")
    creates = _value_after(s, ("-b", "-c", "--orphan", "--create"))
    for name in creates:
        deny_protected(an, name, f"`git {s.name}` creates")
    if plain and ("--track" in flags or "-t" in flags) and not creates and plain[0].known:
        # a local branch named after the remote one: origin/zen/review/x makes zen/review/x
        deny_protected(an, Word(plain[0].text.split("/", 1)[-1], plain[0].raw), f"`git {s.name} --track` creates")
    detach = "--detach" in flags or (s.name == "switch" and s.short("d")) or creates
    if detach or not plain:
        return
    target = plain[0]
    if not target.known:
        an.deny("git.ref", f"`git {s.name}` to a branch only known at run time")
    why = protected(an, target.text)
    if why is not None:
        an.deny("git.ref", f"`git {s.name} {target.text}`: {why}, and the next commit would move it; look "
                f"with `git show {target.text}:FILE` / `git diff {target.text}`, or `git {s.name} --detach "
                f"{target.text}`")
    if s.name == "checkout" and len(plain) == 1 and _is_path(an, s, target.text):
        an.deny("git.discard", f"`git checkout {target.text}` (a file, not a branch) overwrites its uncommitted "
                "changes; use `git checkout BRANCH`, or `git stash` first")


def _is_path(an: Analyser, s: Sub, text: str) -> bool:
    """`git checkout TEXT` names a path rather than a branch or commit."""
    if _REVISION.search(text) and not _FILE_LIKE.search(re.split(r"[~^]", text, maxsplit=1)[0]):
        return False
    if an.ctx.read is None:
        return bool(_FILE_LIKE.search(text))      # nothing on disk to ask: what it looks like
    if ref_exists(an, text):
        return False                              # git takes the branch (or tag) first
    full = norm(text, s.st.cwd)
    if full is not None and os.path.lexists(full):
        return True
    return bool(_FILE_LIKE.search(text))


def ref_exists(an: Analyser, name: str) -> bool:
    """A branch, tag or remote-tracking branch of this name (loose or packed)."""
    common = _common_dir(an)
    if common is None or an.ctx.read is None:
        return False
    for ref in (f"refs/heads/{name}", f"refs/tags/{name}", f"refs/remotes/{name}", f"refs/remotes/origin/{name}"):
        try:
            if an.ctx.read(f"{common}/{ref}") is not None:
                return True
        except OSError:
            return True
    try:
        packed = an.ctx.read(f"{common}/packed-refs") or b""
    except OSError:
        return True
    return any(line.endswith((f" refs/heads/{name}".encode(), f" refs/tags/{name}".encode(),
                              f"/{name}".encode())) for line in packed.splitlines())


def _common_dir(an: Analyser) -> str | None:
    memo = an.memo.get("git.common")
    if memo is not None:
        return memo or None
    found = ""
    root = an.worktree or an.cwd
    read = an.ctx.read
    try:
        dotgit = read(root + "/.git") if read is not None else None
    except OSError:
        dotgit = None
    if read is not None and dotgit and dotgit.startswith(b"gitdir:"):
        gitdir = posixpath.normpath(posixpath.join(root, dotgit.split(b":", 1)[1].strip().decode("utf-8", "replace")))
        try:
            common = (read(gitdir + "/commondir") or b".").strip().decode("utf-8", "replace")
        except OSError:
            common = "."
        found = posixpath.normpath(posixpath.join(gitdir, common))
    elif read is not None:
        found = root + "/.git"
    an.memo["git.common"] = found
    return found or None


def symbolic_ref(an: Analyser, s: Sub) -> None:
    if len(s.pos) >= 2 or any(f in ("-d", "--delete") for f in s.flags) or s.short("d"):
        an.deny("git.ref", "`git symbolic-ref` writing HEAD points the worktree at another branch (the next "
                "commit moves it); reading it (git symbolic-ref HEAD) is fine")


def worktree(an: Analyser, s: Sub) -> None:
    sub = s.ptexts[:1]
    if sub in (["remove"], ["prune"]):
        an.deny("git.worktree-remove", f"`git worktree {s.ptexts[0]}` deletes a worktree")
    if sub in (["move"], ["repair"]):
        an.deny("git.worktree-move", f"`git worktree {s.ptexts[0]}` moves or relinks worktrees (other jobs' "
                "and the lane's own among them)")
    if sub != ["add"]:
        return
    if any(f in ("-f", "--force", "-B") for f in s.flags) or s.short("f") or s.short("B"):
        an.deny("git.worktree-force", "`git worktree add -f/-B` checks out a branch that is in use or resets one")
    for name in _value_after(s, ("-b",)):
        deny_protected(an, name, "`git worktree add -b` creates")
    skip = {id(w) for w in _value_after(s, ("-b", "--reason"))}
    rest = [w for w in s.pos[1:] if id(w) not in skip]
    if not rest:
        an.deny("git.worktree-add", "`git worktree add` with no path")
    an.write_word(rest[0], s.st, "`git worktree add` writes a checkout at")
    if len(rest) > 1 and "--detach" not in s.flags and not s.short("d") and not _value_after(s, ("-b",)):
        why = protected(an, rest[1].text) if rest[1].known else "a branch only known at run time"
        if why is not None:
            an.deny("git.ref", f"`git worktree add` checks out {rest[1].raw}: {why}")


def fetch_refspecs(an: Analyser, s: Sub) -> None:
    """fetch / pull REMOTE SRC:DST writes the local ref DST."""
    for w in s.pos[1:]:
        t = w.text
        if not w.known:
            an.deny("git.ref", f"`git {s.name}` into a ref only known at run time")
        if ":" not in t:
            continue
        if t.startswith("+"):
            an.deny("git.ref", f"`git {s.name} {t}`: a + refspec overwrites a local ref")
        dst = t.split(":", 1)[1]
        if dst:
            why = protected(an, dst.removeprefix("refs/heads/"))
            if why is not None or (dst.startswith("refs/") and not dst.startswith("refs/heads/")):
                an.deny("git.ref", f"`git {s.name} {t}` writes the local ref {dst}: {why or 'not a branch'}")


def rebase(an: Analyser, s: Sub) -> None:
    skip = {id(w) for w in _value_after(s, ("-x", "--exec", "-s", "--strategy", "-X", "--strategy-option",
                                             "--onto"))}
    plain = [w for w in s.pos if id(w) not in skip]
    if len(plain) >= 2:
        deny_protected(an, plain[1], "`git rebase UPSTREAM BRANCH` switches to and rewrites")


def config_write(an: Analyser, key: str, how: str) -> None:
    """A write (or unset) of `key` in the shared config: only CONFIG_ALLOWED and the job's own branch."""
    own = own_branch(an)
    if CONFIG_ALLOWED.match(key):
        return
    if own is not None and key.lower().startswith(f"branch.{own.lower()}.") and key.lower().rsplit(".", 1)[-1] in (
            "remote", "merge", "rebase", "description", "pushremote"):
        return
    an.deny("git.config-write", f"`git config {how}{key}` changes the lane's shared configuration, which the "
            "human's checkout and every job read; only identity, colour, diff/merge style and the job's own "
            "branch's upstream may be set")


def remote(an: Analyser, s: Sub) -> None:
    sub = s.ptexts[:1]
    if sub and sub[0] in ("add", "rename", "remove", "rm", "set-url", "set-head", "set-branches", "prune"):
        an.deny("git.config-write", f"`git remote {sub[0]}` changes the lane's remotes (shared by the human's "
                "checkout and every job)")
    if sub == ["update"] and any(f in ("-p", "--prune") for f in s.flags):
        an.deny("git.ref", "`git remote update --prune` deletes remote-tracking branches")


def fast_import(an: Analyser, s: Sub) -> None:
    """git fast-import writes whatever refs its input stream names (`commit refs/heads/main`)."""
    an.deny("git.ref", "`git fast-import` writes the refs its input names (the base and zen's branches "
            "among them); commit in the worktree instead")

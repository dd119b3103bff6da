"""git subcommands that reach other repositories, hosts and files: push (forced pushes, refspecs,
--force-with-lease only to the job's own branch), fetch / pull / ls-remote, clone / init, remote,
archive / format-patch / bundle and log --output (what they write), send-email / imap-send,
credential. Handlers of SUBCOMMANDS in zen/guard/rules/git.py.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from zen.guard.rules import gitrefs
from zen.guard.rules.gitsub import Sub, short_letters
from zen.guard.shell.words import lit

if TYPE_CHECKING:
    from zen.guard.analyse import Analyser


def _push(an: Analyser, s: Sub) -> None:
    own = f"zen/{an.ctx.job_id}" if an.ctx.job_id else None
    lease = False
    force = False
    texts = []
    skip = False
    for a in s.args:
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
            letters = short_letters("push", t)
            if "f" in letters:
                force = True
            if "d" in letters:
                an.deny("git.push-destructive", "`git push -d` deletes remote branches")
            if letters.endswith("o") and t.endswith("o"):
                skip = True         # -o VALUE
            continue
        texts.append(t)
    if force:
        an.deny("git.force-push", "force pushes overwrite shared history (only --force-with-lease to the "
                "job's own branch is allowed)")
    _refspecs(an, texts[1:], lease, own)
    an.need("network_requests", "approval.network", "`git push` reaches the remote")
    an.beyond("report.push", "`git push` sends commits beyond the worktree")


def _refspecs(an: Analyser, refspecs: list[str], lease: bool, own: str | None) -> None:
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


def _clone_init(an: Analyser, s: Sub) -> None:
    if len(s.pos) >= (2 if s.name == "clone" else 1):
        an.write_word(s.pos[-1], s.st, f"`git {s.name}` writes")
    if s.name == "clone" and s.pos:
        repo = s.pos[-1] if len(s.pos) >= 2 else lit(s.pos[0].text.rstrip("/").rsplit("/", 1)[-1].removesuffix(".git"))
        an.unknown_tree(repo, s.st)         # a clone's files: nothing the guardian has seen
    if any(f.startswith(("--template", "-u", "--upload-pack", "--config", "-c")) for f in s.flags):
        an.deny("git.config-smuggle", f"`git {s.name}` with a template/upload-pack/config runs programs")
    if s.name == "clone":
        an.need("network_requests", "approval.network", "`git clone` reaches the network")


def _fetch(an: Analyser, s: Sub) -> None:
    if any(f.startswith(("--upload-pack", "--exec")) for f in s.flags):
        an.deny("git.config-smuggle", f"`git {s.name} --upload-pack` runs a program")
    if s.name in ("fetch", "pull"):
        gitrefs.fetch_refspecs(an, s)
    an.need("network_requests", "approval.network", f"`git {s.name}` reaches the network")


def _archive(an: Analyser, s: Sub) -> None:
    for k, a in enumerate(s.args):
        if a.text in ("-o", "--output", "--output-directory") and k + 1 < len(s.args):
            an.write_word(s.args[k + 1], s.st, f"`git {s.name}` writes")
        elif a.text.startswith(("--output=", "--output-directory=")):
            an.write_word(lit(a.text.split("=", 1)[1]), s.st, f"`git {s.name}` writes")
    if s.name == "archive" and any(f.startswith("--remote") or f.startswith("--exec") for f in s.flags):
        an.deny("git.config-smuggle", "`git archive --remote/--exec` runs a program")


def _log(an: Analyser, s: Sub) -> None:
    for a in s.args:
        if a.text.startswith("--output="):
            an.write_word(lit(a.text.split("=", 1)[1]), s.st, f"`git {s.name} --output` writes")


def _remote(an: Analyser, s: Sub) -> None:
    if s.ptexts[:1] == ["add"] and any(f.split("=", 1)[0] == "--mirror" for f in s.flags):
        an.deny("git.push-destructive", "`git remote add --mirror` makes every later push a mirror push, "
                "which deletes and overwrites remote branches")
    gitrefs.remote(an, s)


def _send_email(an: Analyser, s: Sub) -> None:
    if s.name == "send-email" and any(f.split("=", 1)[0] == "--dry-run" for f in s.flags):
        return
    an.deny("git.send-email", f"`git {s.name}` sends mail to people outside the worktree (email is a "
            "high-consequence channel); zen harvests the work for a person to send")


def _credential(an: Analyser, s: Sub) -> None:
    an.deny("creds.command", f"`git {s.name}` reads stored credentials")

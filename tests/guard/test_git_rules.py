"""git (zen/guard/rules/git.py, gitopts.py, gitalias.py): pushes by destination and level,
history and work-tree destroyers and their safe neighbours, options that run programs, other
repositories, mail, and what stays allowed at observe. (Many single spellings are in corpus.py
and round2.py; this file pins the families and the reasons.)"""

from __future__ import annotations

import pytest

from tests.guard.ctxs import agent, bash, check

PROTECTED = "pushes to main, master, release/* and production are for humans"


# -- pushes: by destination ---------------------------------------------------------------------------
@pytest.mark.parametrize("command", [
    "git push origin main", "git push origin HEAD:main", "git push origin HEAD:refs/heads/main",
    "git push origin zen/J:release/1.0", "git push origin production", "git push origin :main",
    "git push --delete origin main", "git push --force-with-lease origin main",
])
def test_a_push_to_a_protected_branch_is_a_humans(policy, command: str) -> None:
    check(bash(policy, command), "deny", "incident.push-protected-branch", PROTECTED, command)


@pytest.mark.parametrize("command,rule,fragment", [
    ("git push -f", "git.force-push", "force pushes overwrite shared history"),
    ("git -C . push -f", "git.force-push", "force pushes"),
    ("git push origin +zen/J", "git.force-push", "a + refspec is a force push"),
    ("git push --force-with-lease", "git.force-push", "it must be named"),
    ("git push --force-with-lease origin HEAD", "git.force-push", "only to the job's own branch (zen/J)"),
    ("git push --mirror", "git.push-destructive", "--mirror"),
    ("git push --all", "git.push-destructive", "--all"),
    ("git push --prune origin", "git.push-destructive", "--prune"),
    ("git push origin --delete zen/J", "git.push-destructive", "--delete"),
    ("git push origin $BRANCH", "git.push-unresolved", "only known at run time"),
    ("git push $REMOTE", "git.push-unresolved", "only known at run time"),
])
def test_pushes_that_overwrite_or_cannot_be_read(policy, command: str, rule: str, fragment: str) -> None:
    check(bash(policy, command), "deny", rule, fragment, command)


@pytest.mark.parametrize("command", [
    "git push", "git push origin HEAD", "git push origin zen/J", "git push -u origin zen/J",
    "git push --force-with-lease origin zen/J", "git push origin refs/heads/zen/J:refs/heads/zen/J",
])
def test_a_push_of_the_jobs_own_work_by_level(policy, command: str) -> None:
    check(bash(policy, command, agent(level="observe")), "deny", "level.observe", None, command)
    check(bash(policy, command, agent(level="suggest")), "deny", "level.suggest",
          "`git push` sends commits beyond the worktree: at autonomy level suggest", command)
    check(bash(policy, command, agent(level="act-and-report")), "allow", "report.push", "reported", command)
    check(bash(policy, command, agent(level="autonomous")), "allow", "allow", None, command)


def test_protected_branches_stay_protected_at_autonomous(policy) -> None:
    check(bash(policy, "git push origin HEAD:main", agent(level="autonomous")), "deny",
          "incident.push-protected-branch")
    check(bash(policy, "git push -f origin zen/J", agent(level="autonomous")), "deny", "git.force-push")


# -- work-tree and history destroyers, with their safe neighbours -----------------------------------------
@pytest.mark.parametrize("command,rule", [
    ("git reset --hard", "git.reset-hard"),
    ("git reset --merge", "git.reset-hard"),
    ("git checkout -f main", "git.discard"),
    ("git checkout .", "git.discard"),
    ("git checkout HEAD -- src/a.py", "git.discard"),
    ("git restore src/a.py", "git.discard"),
    ("git switch -f main", "git.discard"),
    ("git switch --discard-changes main", "git.discard"),
    ("git clean -fdx", "git.clean"),
    ("git branch --delete --force feature", "git.branch-delete"),
    ("git branch -Df feature", "git.branch-delete"),
    ("git stash clear", "git.stash-drop"),
    ("git prune", "git.gc-prune"),
    ("git gc --prune=now", "git.gc-prune"),
    ("git tag -d v1", "git.tag-delete"),
    ("git update-ref -d refs/heads/main", "git.update-ref"),
    ("git filter-branch --force", "git.history-rewrite"),
    ("git worktree remove ../K", "git.worktree-remove"),
])
def test_what_throws_work_away_is_denied(policy, command: str, rule: str) -> None:
    check(bash(policy, command), "deny", rule, None, command)


@pytest.mark.parametrize("command", [
    "git reset --soft HEAD~1", "git reset HEAD~1", "git reset --keep HEAD~1", "git restore --staged src/a.py",
    "git switch -c feature", "git clean -n", "git stash", "git stash pop", "git gc", "git checkout --detach main",
    "git rm --cached x", "git rm -rf src", "git tag v1", "git rebase -i HEAD~3", "git commit --no-verify -m x",
    "git -c user.name=x commit -m y", "git -c color.ui=always log", "git --git-dir=.git log",
    "git clone https://github.com/o/r vendor/r", "git diff --output=out.diff",
    "git send-email --dry-run --to a@b.c x.patch",
])
def test_their_safe_neighbours_are_allowed(policy, command: str) -> None:
    check(bash(policy, command), "allow", None, None, command)


# -- options that run programs -------------------------------------------------------------------------------
@pytest.mark.parametrize("command,fragment", [
    ("git -c core.sshCommand='rm -rf /etc' fetch", "`git -c core.sshCommand=...`"),
    ("git -c include.path=/tmp/x log", "`git -c include.path=...`"),
    ("git grep -O'rm -rf /etc' x", "`git grep -O` runs a pager program"),
    ("git grep --open-files-in-pager=vi x", "`git grep -O`"),
    ("git fetch --upload-pack='rm -rf /etc' origin", "`git fetch --upload-pack` runs a program"),
    ("git ls-remote --upload-pack='touch /tmp/x' origin", "`git ls-remote --upload-pack`"),
    ("git clone --config core.hooksPath=/tmp/h https://x.io/r", "`git clone` with a template"),
    ("git clone -u 'rm -rf /etc' https://x.io/r", "`git clone` with a template"),
    ("git difftool -x 'rm -rf /etc'", "`git difftool -x` runs an arbitrary program"),
])
def test_options_that_run_programs_are_denied(policy, command: str, fragment: str) -> None:
    check(bash(policy, command), "deny", "git.config-smuggle", fragment, command)


@pytest.mark.parametrize("command", [
    "git bisect run rm -rf /etc", "git rebase --exec 'rm -rf /etc' HEAD~1", "git submodule foreach 'rm -rf /etc'",
])
def test_commands_git_runs_are_judged_as_themselves(policy, command: str) -> None:
    check(bash(policy, command), "deny", "fs.outside-worktree", "`rm` deletes /etc", command)


# -- where git writes and which repository -----------------------------------------------------------------
@pytest.mark.parametrize("command,rule,fragment", [
    ("git -C /etc status", "git.other-repo", "`git -C /etc`: another repository"),
    ("git --work-tree=/etc status", "git.other-repo", "`git --work-tree /etc`"),
    ("git -C /z/home/worktrees/OTHER commit -am x", "git.other-repo", "in zen's home"),
    ("git mv a /etc/b", "fs.outside-worktree", "`git mv` moves into /etc/b"),
    ("git clone https://github.com/o/r /tmp/r", "fs.outside-worktree", "`git clone` writes /tmp/r"),
    ("git init /tmp/x", "fs.outside-worktree", "`git init` writes /tmp/x"),
    ("git log --output=/tmp/x", "fs.outside-worktree", "`git log --output` writes /tmp/x"),
    ("git archive -o /tmp/x.tgz HEAD", "fs.outside-worktree", "`git archive` writes /tmp/x.tgz"),
    ("git format-patch -o /tmp HEAD~1", "fs.outside-worktree", "`git format-patch` writes /tmp"),
])
def test_where_git_writes(policy, command: str, rule: str, fragment: str) -> None:
    check(bash(policy, command), "deny", rule, fragment, command)


# -- mail and credentials ----------------------------------------------------------------------------------
@pytest.mark.parametrize("command", ["git send-email x.patch", "git send-email --to a@b.c HEAD~1",
                                     "git imap-send < x.patch", "git -C . send-email x"])
def test_git_never_sends_mail_for_an_agent(policy, command: str) -> None:
    # allowed before at every level: mail left the machine with no check at all
    for level in ("suggest", "autonomous"):
        check(bash(policy, command, agent(level=level)), "deny", "git.send-email", "sends mail", command)


def test_git_credential_commands_are_denied(policy) -> None:
    check(bash(policy, "git credential fill"), "deny", "creds.command", "prints credentials")
    check(bash(policy, "git credential-store get"), "deny", "creds.command", "`git credential-store` prints credentials")


# -- observe: reads only ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("command", ["git status", "git log --oneline", "git diff HEAD", "git show HEAD",
                                     "git branch -a", "git tag", "git remote -v", "git config --list"])
def test_reading_git_is_allowed_at_observe(policy, command: str) -> None:
    check(bash(policy, command, agent(level="observe")), "allow", None, None, command)


@pytest.mark.parametrize("command", ["git commit -m x", "git fetch", "git stash", "git config user.name x",
                                     "git checkout -b new"])
def test_changing_git_is_denied_at_observe_with_the_subcommand_named(policy, command: str) -> None:
    sub = command.split()[1]
    check(bash(policy, command, agent(level="observe")), "deny", "level.observe", f"`git {sub}` is not one", command)

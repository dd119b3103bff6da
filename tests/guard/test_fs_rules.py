"""File commands (zen/guard/rules/fs.py): every program that deletes, moves, copies, links,
writes or re-permissions files is held to the worktree, with the verb a user reads in the
reason; the ones that stay inside pass."""

from __future__ import annotations

import pytest

from tests.guard.ctxs import agent, bash, check

OUT = "outside the job's worktree (/z/home/worktrees/J)"


@pytest.mark.parametrize("command,verb", [
    ("rsync -a --delete src/ /srv/site/", "`rsync --delete` deletes inside /srv/site/"),
    ("rsync -a --remove-source-files /srv/data/ in/", "`rsync --remove-source-files` deletes /srv/data/"),
    ("cp -r src /opt/x", "`cp` writes /opt/x"),
    ("cp -t /etc a", "`cp` writes /etc"),
    ("cp -l a /etc/b", "`cp` writes /etc/b"),
    ("mv /etc/hosts .", "`mv` moves away /etc/hosts"),
    ("mv a b /etc", "`mv` moves into /etc"),
    ("mv -t /etc a", "`mv` moves into /etc"),
    ("install -m 755 tool /usr/local/bin/tool", "`install` writes /usr/local/bin/tool"),
    ("chmod -R 755 /etc", "`chmod` changes /etc"),
    ("chown -R me /srv", "`chown` changes /srv"),
    ("truncate -s 0 /var/log/syslog", "`truncate` empties /var/log/syslog"),
    ("shred /etc/passwd", "`shred` overwrites /etc/passwd"),
    ("touch -d yesterday /etc/x", "`touch` writes /etc/x"),
    ("mkdir -p /etc/new", "`mkdir` writes /etc/new"),
    ("rmdir /opt/empty", "`rmdir` deletes /opt/empty"),
    ("unlink /etc/x", "`unlink` deletes /etc/x"),
    ("tee -a /etc/hosts", "`tee` writes /etc/hosts"),
    ("patch /etc/hosts < x.diff", "`patch` writes /etc/hosts"),
    ("sort -o /etc/x y", "`sort -o` writes /etc/x"),
    ("uniq a /etc/b", "`uniq` writes /etc/b"),
    ("dd if=a of=/etc/b", "`dd` writes /etc/b"),
    ("rm -rf -- /etc", "`rm` deletes /etc"),
    ("rm -rf src/../..", "`rm` deletes src/../.."),
    ("split -b 1k big /etc/part", "`split` writes /etc/part"),        # was allowed: split wrote anywhere
    ("csplit -f /etc/p big 10", "`csplit` writes /etc/p"),
])
def test_file_commands_outside_the_worktree_name_their_verb(policy, command: str, verb: str) -> None:
    check(bash(policy, command), "deny", "fs.outside-worktree", f"{verb}, {OUT}", command)


@pytest.mark.parametrize("command", [
    "rsync -a --delete /srv/ mirror/",       # reads outside, deletes only inside
    "cp /etc/hosts .", "shred -u secret.tmp", "patch -p1 < fix.diff", "rm -r ./*", "rm -rf ~+/build",
    "rm -fr $TMPDIR", "split -b 1k big part", "split big", "csplit big 10", "split --filter=cat big",
    "ln -s /etc/passwd p",                   # a symlink alone changes nothing outside
    "ln -sf /etc/hosts /z/home/worktrees/J/h",
    "chmod -R u+x bin", "install -m 755 tool bin/tool",
])
def test_file_commands_that_stay_inside_are_allowed(policy, command: str) -> None:
    check(bash(policy, command), "allow", None, None, command)


@pytest.mark.parametrize("command,rule,fragment", [
    ("ln /etc/passwd hard", "fs.link-outside", "a hard link to /etc/passwd"),
    ("install -m 4755 tool bin/tool", "perm.setuid", "setuid/setgid mode 0o4755"),
    ("chmod 4755 bin/tool", "perm.setuid", "0o4755"),
    ("chmod u+s bin/tool", "perm.setuid", "u+s sets setuid/setgid"),
    ("chmod 777 x", "perm.world-writable", "0o777"),
    ("rm -rf ~-", "fs.unresolved-target", "~-"),
    ("rm -rf /z/home/worktrees/J/.zen-tmp/../../K", "fs.outside-worktree", "../../K"),
    ("split -l 5 big \"$P\"", "fs.unresolved-target", "only known at run time"),
    ("split --filter=\"$CMD\" big", "opaque.exec", "`split --filter` runs a command only known at run time"),
    ("split --filter='rm -rf /etc' big", "fs.outside-worktree", "`rm` deletes /etc"),
])
def test_links_modes_and_unknown_targets(policy, command: str, rule: str, fragment: str) -> None:
    check(bash(policy, command), "deny", rule, fragment, command)


@pytest.mark.parametrize("command", ["rm x", "mv a b", "cp a b", "touch x", "mkdir d", "chmod +x f",
                                     "split big", "ln -s a b", "truncate -s0 f", "install a b"])
def test_every_file_change_is_denied_at_observe(policy, command: str) -> None:
    check(bash(policy, command, agent(level="observe")), "deny", "level.observe", "only read-only commands run",
          command)


@pytest.mark.parametrize("command", ["ls -la", "cat a", "stat a", "du -sh .", "find . -name x", "wc -l a",
                                     "head a", "diff a b", "file a"])
def test_reads_are_allowed_at_observe(policy, command: str) -> None:
    check(bash(policy, command, agent(level="observe")), "allow", None, None, command)

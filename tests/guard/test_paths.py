"""Path facts (zen/guard/paths/resolve.py) and the path rules they feed: worktree containment, .., ~,
symlinks on disk and links the same command makes, zen's own files and credential stores."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.guard.ctxs import bash, check, on_disk, tool
from zen.guard.paths.resolve import (
    Resolver,
    credential_hit,
    glob_hits_dot,
    norm,
    strictly_under,
    under,
    zen_protected,
)
from zen.guard.shell.words import UNK


# -- pure: norm, under -------------------------------------------------------------------------------
@pytest.mark.parametrize("path,base,out", [
    ("a/b", "/w", "/w/a/b"), ("../x", "/w/j", "/w/x"), ("/a/./b/../c", None, "/a/c"), ("a", None, None),
    ("//etc", "/w", "/etc"), ("///etc//passwd", None, "/etc/passwd"), (".", "/w/", "/w"), ("../../..", "/a", "/"),
    ("/", None, "/"), ("x/", "/w", "/w/x"),
])
def test_norm(path: str, base: str | None, out: str | None) -> None:
    assert norm(path, base) == out


@pytest.mark.parametrize("path,root,inside,strict", [
    ("/w", "/w", True, False), ("/w/a", "/w", True, True), ("/wx", "/w", False, False),
    ("/w/a", "/w/", True, True), ("/anything", "/", True, True), ("/", "/w", False, False),
])
def test_under_and_strictly_under(path: str, root: str, inside: bool, strict: bool) -> None:
    assert under(path, root) is inside
    assert strictly_under(path, root) is strict


def test_glob_hits_dot_only_for_patterns_that_start_with_a_dot() -> None:
    assert glob_hits_dot(".*", ".git") and glob_hits_dot(".g?t", ".git")
    assert not glob_hits_dot("*", ".git") and not glob_hits_dot("?git", ".git")


# -- pure: zen's own files ---------------------------------------------------------------------------
@pytest.mark.parametrize("path,subtree,what", [
    ("/h/policy/guardian.yaml", False, "zen's own files (policy)"),
    ("/h/control", False, "zen's own files (control)"),
    ("/h/logs/guard-audit.jsonl", False, "zen's own files (logs)"),
    ("/h", True, "zen's own files (policy)"),              # deleting the home reaches its policy
    ("/h", False, None),                                    # writing the folder itself is not a delete
    ("/h/worktrees/J/src/x.py", False, None),
    ("/h/worktrees", True, None),
    ("/w/.claude/settings.json", False, "Claude Code settings (the hook registration)"),
    ("/w/.claude/settings.local.json", False, "Claude Code settings (the hook registration)"),
    ("/w/.claude", True, "a .claude directory (the hook registration)"),
    ("/w/.claude/commands/x.md", False, "an agent's configuration (.claude/: hooks, MCP servers and commands it runs unguarded)"),
    ("/w/.mcp.json", False, "an agent's configuration (.mcp.json: the MCP servers it starts)"),
    ("/w/.codex", False, "an agent's configuration (.codex/: hooks, MCP servers and commands it runs unguarded)"),
    ("/w/claude/x.md", False, None),
    ("/u/.claude.json", False, "~/.claude.json"),
    ("/u", True, "~/.claude.json"),
    ("/u/.claude/agents/a.md", False, "an agent's configuration (.claude/: hooks, MCP servers and commands it runs unguarded)"),
    ("/u/.claude-backup", False, None),
])
def test_zen_protected(path: str, subtree: bool, what: str | None) -> None:
    assert zen_protected(path, "/h", "/u", subtree) == what


def test_without_a_home_or_user_home_only_settings_files_are_protected() -> None:
    assert zen_protected("/h/policy/guardian.yaml", None, None, False) is None
    assert zen_protected("/x/.claude/settings.json", None, None, False) is not None


# -- pure: credential stores -------------------------------------------------------------------------
@pytest.mark.parametrize("path,text,recursive,hit", [
    ("/u/.ssh/id_rsa", "~/.ssh/id_rsa", False, "~/.ssh"),
    ("/u/.ssh", "~/.ssh", False, "~/.ssh"),
    ("/u", "~", True, "~/.ssh"),                      # a recursive read of home reaches ~/.ssh
    ("/u", "~", False, None),                         # listing home itself reads no key
    ("/u/projects", "~/projects", True, None),
    ("/w/.env", ".env", False, ".env"),
    ("/w/.env.production", ".env.production", False, ".env.*"),
    ("/w/.env.example", ".env.example", False, None),  # a template is not a secret
    ("/w/src/app.py", "src/app.py", False, None),
    ("/etc/shadow", "/etc/shadow", False, "/etc/shadow"),
    (None, ".env", False, ".env"),                    # only the word is known
    (None, "src/main.rs", False, None),
])
def test_credential_hit(path: str | None, text: str, recursive: bool, hit: str | None) -> None:
    assert credential_hit(path, text, "/u", (), recursive) == hit


def test_an_extra_credential_entry_from_the_policy_is_honoured() -> None:
    assert credential_hit("/w/vault.json", "vault.json", "/u", ("vault.json",)) == "vault.json"
    assert credential_hit("/srv/keys/a", "/srv/keys/a", "/u", ("/srv/keys",)) == "/srv/keys"
    assert credential_hit("/w/vault.json", "vault.json", "/u") is None


def test_an_unknown_piece_in_an_absolute_word_is_matched_against_glob_entries() -> None:
    # /proc/<pid>/environ with the pid unknown still names a process's environment
    hit = credential_hit(None, f"/proc/{UNK}/environ", "/u")
    assert hit is not None and "environ" in hit


# -- Resolver: links of this command and of the disk --------------------------------------------------
def test_resolver_follows_links_made_earlier_in_the_command() -> None:
    r = Resolver(None)
    assert r.target("l/x", "/w", {"/w/l": "/etc"}).path == "/etc/x"
    assert r.target("l", "/w", {"/w/l": "/etc"}).path == "/w/l"                # the link itself
    assert r.target("l", "/w", {"/w/l": "/etc"}, follow_last=True).path == "/etc"
    assert r.target("l/", "/w", {"/w/l": "/etc"}).path == "/etc"               # a trailing slash follows


def test_resolver_follows_chains_of_links() -> None:
    links = {"/w/a": "/w/b", "/w/b": "/w/c", "/w/c": "/srv"}
    assert Resolver(None).target("a/f", "/w", links).path == "/srv/f"


def test_resolver_globs_become_children_of_the_fixed_part() -> None:
    t = Resolver(None).target("src/*.py", "/w", {})
    assert (t.path, t.children, t.pattern) == ("/w/src", True, "*.py")
    t = Resolver(None).target("*", "/w", {})
    assert (t.path, t.children) == ("/w", True)


def test_resolver_of_unknown_or_relative_to_unknown_is_none() -> None:
    r = Resolver(None)
    assert r.target(f"{UNK}/x", "/w", {}) is None
    assert r.target("", "/w", {}) is None
    assert r.target("x", None, {}) is None
    assert r.target("/abs", None, {}).path == "/abs"


def test_resolver_on_disk_resolves_the_parent_but_not_the_last_link(tmp_path: Path) -> None:
    (tmp_path / "real").mkdir()
    (tmp_path / "ln").symlink_to(tmp_path / "real")
    r = Resolver(os.path.realpath)
    assert r.target(str(tmp_path / "ln" / "f"), "/", {}).path == str(tmp_path / "real" / "f")
    assert r.target(str(tmp_path / "ln"), "/", {}).path == str(tmp_path / "ln")
    assert r.target(str(tmp_path / "ln"), "/", {}, follow_last=True).path == str(tmp_path / "real")


# -- decisions on real folders ------------------------------------------------------------------------
@pytest.fixture
def wt(tmp_path: Path) -> Path:
    w = tmp_path / "wt"
    (w / "src").mkdir(parents=True)
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "data.txt").write_text("precious\n")
    return w


def test_a_relative_link_that_climbs_out_is_followed(policy, wt: Path) -> None:
    (wt / "up").symlink_to("../outside")
    check(bash(policy, "rm -rf up/data.txt", on_disk(wt)), "deny", "fs.outside-worktree", "outside the job's worktree")
    check(bash(policy, "echo x > up/data.txt", on_disk(wt)), "deny", "fs.outside-worktree")
    check(bash(policy, "rm up", on_disk(wt)), "allow")


def test_cd_through_a_link_then_a_relative_delete_is_outside(policy, wt: Path) -> None:
    (wt / "up").symlink_to(wt.parent / "outside")
    check(bash(policy, "cd up && rm -f data.txt", on_disk(wt)), "deny", "fs.outside-worktree")


def test_a_link_to_a_file_outside_is_written_through(policy, wt: Path) -> None:
    (wt / "notes.txt").symlink_to(wt.parent / "outside" / "data.txt")
    check(bash(policy, "echo x > notes.txt", on_disk(wt)), "deny", "fs.outside-worktree")
    check(tool(policy, "Write", {"file_path": str(wt / "notes.txt"), "content": "x"}, on_disk(wt)),
          "deny", "fs.outside-worktree")


def test_a_dangling_link_inside_is_judged_by_where_it_points(policy, wt: Path) -> None:
    (wt / "later").symlink_to(wt.parent / "outside" / "not-yet")
    check(bash(policy, "echo x > later", on_disk(wt)), "deny", "fs.outside-worktree")


def test_a_link_that_stays_inside_is_fine(policy, wt: Path) -> None:
    (wt / "alias").symlink_to(wt / "src")
    check(bash(policy, "rm -rf alias/old && echo x > alias/new.py", on_disk(wt)), "allow")


def test_a_link_made_by_the_same_command_is_followed(policy, wt: Path) -> None:
    check(bash(policy, f"ln -s {wt.parent / 'outside'} o && rm -rf o/data.txt", on_disk(wt)), "deny",
          "fs.outside-worktree")
    check(bash(policy, "ln -sfn /etc e; echo x > e/hosts", on_disk(wt)), "deny", "fs.outside-worktree")


def test_a_worktree_reached_through_a_link_is_still_the_worktree(policy, tmp_path: Path, wt: Path) -> None:
    (tmp_path / "via").symlink_to(wt)
    ctx = on_disk(tmp_path / "via")
    check(bash(policy, "rm -rf src/x", ctx), "allow")
    check(bash(policy, f"rm -rf {wt}/src/x", ctx), "allow")


def test_a_link_into_zen_s_home_protects_its_files(policy, tmp_path: Path, wt: Path) -> None:
    home = tmp_path / "zhome"
    (home / "policy").mkdir(parents=True)
    (wt / "p").symlink_to(home / "policy")
    check(bash(policy, "echo 'rules: []' > p/guardian.yaml", on_disk(wt, home=home)), "deny", "self.protect",
          "zen's own files (policy)")
    check(tool(policy, "Edit", {"file_path": str(wt / "p" / "guardian.yaml"), "old_string": "a", "new_string": "b"},
               on_disk(wt, home=home)), "deny", "self.protect")


def test_a_link_to_a_credential_store_is_a_credential_read(policy, tmp_path: Path, wt: Path) -> None:
    user = tmp_path / "u"
    (user / ".aws").mkdir(parents=True)
    (user / ".aws" / "credentials").write_text("[default]\n")
    (wt / "cfg").symlink_to(user / ".aws")
    ctx = on_disk(wt)
    ctx2 = type(ctx)(cwd=ctx.cwd, worktree=ctx.worktree, home=ctx.home, user_home=str(user), level=ctx.level,
                     domain=ctx.domain, job_id="J", env={**ctx.env, "HOME": str(user)}, realpath=os.path.realpath,
                     read=ctx.read)
    check(bash(policy, "cat cfg/credentials", ctx2), "deny", "creds.read", "~/.aws")
    check(tool(policy, "Read", {"file_path": str(wt / "cfg" / "credentials")}, ctx2), "deny", "creds.read")
    check(tool(policy, "Grep", {"pattern": "key", "path": str(wt)}, ctx2), "allow")


# -- decisions, lexical ------------------------------------------------------------------------------
@pytest.mark.parametrize("command,rule,fragment", [
    ("rm -rf ~agent/x", "fs.unresolved-target", "~agent/x"),        # another user's home: not known
    ("rm -rf $UNSET/x", "fs.unresolved-target", "only known at run time"),
    ("rm -rf /z/home/worktrees/Jx", "fs.outside-worktree", "/z/home/worktrees/Jx"),  # a sibling with a prefix
    ("cd .. && rm -rf J", "fs.worktree-root", "the worktree itself"),
    ("rm -rf .", "fs.worktree-root", "the worktree itself"),
    ("rm -rf .*", "fs.git-dir", "reaches the worktree's .git"),
    ("echo hi > .git/hooks/pre-commit", "fs.git-dir", "destroys history"),
    ("echo hi > /dev/sda", "disk.device-write", "/dev/sda"),
    ("echo x > /z/home/jobs/J/notes.txt", "self.protect", "jobs"),
    ("cp x /z/home/coord/leases.json", "self.protect", "coord"),
    ("grep -r token /z/home/control", "creds.read", "an agent never holds it"),
])
def test_path_rules_name_what_they_refuse(policy, command: str, rule: str, fragment: str) -> None:
    check(bash(policy, command), "deny", rule, fragment, command)


@pytest.mark.parametrize("command", [
    "rm -rf /z/home/worktrees/J/../J/build",          # .. that comes back inside
    "rm -rf *",                                        # a glob does not reach dot files
    "echo hi > /dev/null 2>/dev/stderr",
    "cat /z/home/jobs/J/events.jsonl",                 # reading its own timeline is not writing it
    "cat .env.example",
    "find ~ -name id_rsa",                             # names, not contents
])
def test_path_near_misses_stay_allowed(policy, command: str) -> None:
    check(bash(policy, command), "allow", None, None, command)

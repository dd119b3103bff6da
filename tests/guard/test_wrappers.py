"""Launchers and wrappers (zen/guard/rules/wrappers.py, find.py, debug.py, mux.py): the command a
wrapper runs is judged as itself, whatever wraps it; wrappers that change privileges, or run code
the guardian cannot read, are denied by name."""

from __future__ import annotations

import pytest

from tests.guard.ctxs import agent, bash, check

RM = "`rm` deletes /etc, outside the job's worktree (/z/home/worktrees/J)"

# one row per wrapper: each unwraps a different program's argv
WRAPPED = [
    "setsid rm -rf /etc", "stdbuf -oL rm -rf /etc", "flock /tmp/l rm -rf /etc", "flock -c 'rm -rf /etc' /tmp/l",
    "busybox rm -rf /etc", "script -c 'rm -rf /etc' /dev/null", "ionice -c3 rm -rf /etc", "taskset -c 0 rm -rf /etc",
    "chrt -i 0 rm -rf /etc", "time -p rm -rf /etc", "exec -a foo rm -rf /etc", "command -p rm -rf /etc",
    "builtin eval 'rm -rf /etc'", "strace -o /dev/null rm -rf /etc", "ltrace rm -rf /etc", "valgrind rm -rf /etc",
    "entr rm -rf /etc < list", "tmux -L mine new -d 'rm -rf /etc'", "xargs sh -c 'rm -rf /etc'",
    "find . -execdir rm -rf /etc \\;", "find . -exec sh -c 'rm -rf /etc' \\;", "nohup nice -n 5 timeout 9 rm -rf /etc",
    "env -i PATH=/bin sh -c 'rm -rf /etc'", "sh -c \"sh -c 'rm -rf /etc'\"",
]


@pytest.mark.parametrize("command", WRAPPED)
def test_a_wrapped_command_is_judged_as_itself(policy, command: str) -> None:
    check(bash(policy, command), "deny", "fs.outside-worktree", RM, command)


@pytest.mark.parametrize("command", ["stdbuf -oL ls", "flock /z/home/worktrees/J/l true",
                                     "nice -n 5 pytest -q", "timeout 30 npm test", "time ls",
                                     "strace -c ls", "parallel echo ::: a b", "find . -print0 | xargs -0 rm -f"])
def test_wrappers_of_harmless_commands_are_allowed(policy, command: str) -> None:
    check(bash(policy, command), "allow", None, None, command)


@pytest.mark.parametrize("name,command", [
    ("chroot", "chroot / rm -rf /etc"), ("unshare", "unshare -r rm -rf /etc"), ("nsenter", "nsenter -t 1 -m sh"),
    ("doas", "doas ls"), ("pkexec", "pkexec ls"), ("runuser", "runuser -u x ls"), ("sudo", "sudo -n true"),
    ("su", "su -c ls"),
])
def test_privilege_changers_are_denied_even_as_a_probe(policy, name: str, command: str) -> None:
    check(bash(policy, command), "deny", "priv.escalation", f"`{name}` changes privileges", command)


@pytest.mark.parametrize("command,fragment", [
    ("expect -c 'spawn rm -rf /etc'", "`expect` code cannot be checked"),
    ("gdb -batch -ex 'shell rm -rf /etc'", "only backtraces, info and run pass"),
    ("vim -c ':!rm -rf /etc' x", "`vim` with a command or script argument can run anything"),
])
def test_wrappers_with_code_of_their_own_are_denied(policy, command: str, fragment: str) -> None:
    check(bash(policy, command), "deny", "opaque.exec", fragment, command)


@pytest.mark.parametrize("command,rule", [
    ("xargs -0 rm -rf < list", "fs.unresolved-target"),          # stdin from a file it cannot see
    ("xargs -a list rm", "fs.unresolved-target"),
    ("find . -exec sh -c 'rm -rf \"$1\"' _ {} \\;", "fs.unresolved-target"),
    ("find /etc -print0 | xargs -0 rm -f", "fs.outside-worktree"),
    ("parallel rm -rf ::: /etc", "fs.outside-worktree"),
])
def test_argument_feeders(policy, command: str, rule: str) -> None:
    check(bash(policy, command), "deny", rule, None, command)


def test_a_filtered_find_feeding_xargs_stays_in_the_tree(policy) -> None:
    check(bash(policy, "find . -name '*.tmp' -print0 | xargs -0 rm -f"), "allow")
    check(bash(policy, "find build -type f | xargs rm"), "allow")


def test_wrapped_reads_stay_allowed_at_observe_and_wrapped_writes_do_not(policy) -> None:
    obs = agent(level="observe")
    check(bash(policy, "timeout 5 cat a", obs), "allow")
    check(bash(policy, "nice -n 5 ls -la", obs), "allow")
    check(bash(policy, "timeout 5 touch a", obs), "deny", "level.observe")
    check(bash(policy, "env FOO=1 rm a", obs), "deny", "level.observe")


def test_deep_wrapper_chains_are_followed_to_the_end(policy) -> None:
    chain = "nice " * 10 + "rm -rf /etc"
    check(bash(policy, chain), "deny", "fs.outside-worktree", RM)
    # past the depth it follows, even a harmless command is denied (fail closed)
    check(bash(policy, "timeout 9 " * 30 + "ls"), "deny", "shell.depth", "wrappers nested too deep to follow")

"""Environment prefixes and scripts on disk: variables that make programs load or run code
(analyse.py _OPAQUE_ENV_VARS / _EXEC_ENV_VARS), $PATH folders inside the worktree, and every
way a script file in the worktree gets run (zen/guard/scan/scripts.py). Real files in tmp_path."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.guard.ctxs import bash, check, on_disk


@pytest.mark.parametrize("command,var", [
    ("LD_PRELOAD=./x.so ls", "LD_PRELOAD"),
    ("export LD_PRELOAD=/tmp/x.so; ls", "LD_PRELOAD"),
    ("declare -x LD_PRELOAD=x; ls", "LD_PRELOAD"),
    ("env LD_PRELOAD=x ls", "LD_PRELOAD"),
    ("BASH_ENV=./x.sh bash -c true", "BASH_ENV"),
    ("PERL5OPT=-Mevil perl -e 1", "PERL5OPT"),
    ("RUBYOPT=-rexploit ruby -e 1", "RUBYOPT"),
    ("NODE_OPTIONS='--require ./x.js' node app.js", "NODE_OPTIONS"),
    ("PYTHONSTARTUP=x.py python3", "PYTHONSTARTUP"),
    ("GIT_DIR=/other/.git git log", "GIT_DIR"),
    ("GIT_CONFIG_PARAMETERS=\"'core.pager=rm'\" git log", "GIT_CONFIG_PARAMETERS"),
])
def test_variables_that_load_code_are_denied_by_name(policy, command: str, var: str) -> None:
    check(bash(policy, command), "deny", "opaque.env", f"setting {var} makes programs load code", command)


def test_ifs_is_denied_for_what_it_does_to_words(policy) -> None:
    check(bash(policy, "IFS=/ ls"), "deny", "opaque.env", "changing IFS reshapes how later words split")


@pytest.mark.parametrize("command", [
    "PERL5OPT=-w perl -e 1", "RUBYOPT=-W0 ruby -e 1", "NODE_OPTIONS=--max-old-space-size=4096 node app.js",
    "GIT_EDITOR=vim git commit", "PAGER=less git log", "env -u HOME ls", "FOO=bar make -n",
])
def test_options_that_load_no_code_are_allowed(policy, command: str) -> None:
    check(bash(policy, command), "allow", None, None, command)


@pytest.mark.parametrize("command", ["EDITOR='rm -rf /etc' git commit", "PAGER='rm -rf /etc' git log",
                                     "GIT_SSH_COMMAND='rm -rf /etc' git fetch", "FOO=$(rm -rf /etc) ls"])
def test_commands_in_variables_are_judged_as_commands(policy, command: str) -> None:
    check(bash(policy, command), "deny", "fs.outside-worktree", "`rm` deletes /etc", command)


def test_a_command_variable_only_known_at_run_time_is_denied(policy) -> None:
    check(bash(policy, "PAGER=\"$X\" git log"), "deny", "opaque.exec", "only known at run time")


@pytest.mark.parametrize("command", ["HOME=/etc; rm -rf ~/x", "unset HOME; rm -rf ~/x", "cd ~ && rm -rf x"])
def test_home_changes_do_not_make_home_the_worktree(policy, command: str) -> None:
    check(bash(policy, command), "deny", "fs.outside-worktree", None, command)


# -- scripts in the worktree -----------------------------------------------------------------------
@pytest.fixture
def wt(tmp_path: Path) -> Path:
    w = tmp_path / "wt"
    (w / "bin").mkdir(parents=True)

    def script(rel: str, body: str) -> None:
        p = w / rel
        p.write_text(body)
        os.chmod(p, 0o755)

    script("bin/mytool", "#!/bin/sh\nrm -rf /etc\n")
    script("bin/ok", "#!/bin/sh\necho ok\n")
    script("x", "#!/bin/sh\nrm -rf /etc\n")
    script("ls", "#!/bin/sh\nrm -rf /etc\n")             # a file named like a program
    (w / "lib.sh").write_text("rm -rf /etc\n")
    (w / "args.sh").write_text("#!/bin/sh\nrm -rf \"$1\"\ncp a b\n")
    (w / "big.sh").write_text("echo x\n" * 200_000)
    return w


@pytest.mark.parametrize("command", [
    "./x", "sh x", "bash ./x", "bin/mytool", "source lib.sh", ". ./lib.sh", "bash --rcfile lib.sh -i",
    "export PATH=$PWD/bin:$PATH; mytool", "PATH=bin:$PATH mytool", "PATH=.:$PATH ls",
    "SSH_ASKPASS=./x ssh host", "GIT_EDITOR=./x git commit", "PAGER=./x git log",
    "env -S \"./x\"", "xargs ./x < /dev/null", "find . -exec ./x {} \\;", "sh < x", "timeout 3 ./x",
])
def test_every_way_to_run_a_script_judges_its_text(policy, wt: Path, command: str) -> None:
    check(bash(policy, command, on_disk(wt)), "deny", "fs.outside-worktree", "`rm` deletes /etc", command)


@pytest.mark.parametrize("command", ["bin/ok", "PATH=bin:$PATH ok", "ls", "command -v mytool",
                                     "./args.sh build", "cat x"])
def test_harmless_scripts_and_reads_of_scripts_are_allowed(policy, wt: Path, command: str) -> None:
    # ./args.sh build: "$1" is the argument it is run with
    check(bash(policy, command, on_disk(wt)), "allow", None, None, command)


def test_a_script_too_long_to_read_needs_a_human(policy, wt: Path) -> None:
    check(bash(policy, "sh big.sh", on_disk(wt)), "approval", "approval.unjudged", "too long")
    check(bash(policy, "sh big.sh", on_disk(wt, level="observe")), "deny")


def test_a_binary_is_run_as_itself(policy, wt: Path) -> None:
    (wt / "tool").write_bytes(b"\x7fELF\x02\x01\x01" + b"\x00" * 64)
    os.chmod(wt / "tool", 0o755)
    check(bash(policy, "./tool --help", on_disk(wt)), "allow")


def test_a_script_in_a_language_it_does_not_read_needs_a_human(policy, wt: Path) -> None:
    (wt / "s.tcl").write_text("#!/usr/bin/tclsh\nputs hi\n")
    os.chmod(wt / "s.tcl", 0o755)
    check(bash(policy, "./s.tcl", on_disk(wt)), "approval", "approval.unjudged", "a language the guardian does not read")


def test_a_script_written_with_known_text_then_run(policy, wt: Path) -> None:
    check(bash(policy, "printf 'rm -rf /etc\\n' > n.sh && sh n.sh", on_disk(wt)), "deny", "fs.outside-worktree")
    check(bash(policy, "printf 'echo hi\\n' > n.sh && sh n.sh", on_disk(wt)), "allow")


def test_a_script_written_with_unknown_text_then_run(policy, wt: Path) -> None:
    check(bash(policy, "$GEN > n.sh; sh n.sh", on_disk(wt)), "deny")
    check(bash(policy, "tar xf t.tar; sh ./extracted.sh", on_disk(wt)), "deny")


"""Code handed to interpreters (zen/guard/scan/python.py, scan/code.py, rules/interp.py, text.py):
Python, JS, Ruby, Perl, PHP, awk and sed programs are read for what they run, delete, write,
print and reach; what cannot be read is denied."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.guard.ctxs import agent, bash, check, on_disk

OUT = "outside the job's worktree"


def py(code: str) -> str:
    return "python3 -c " + "'" + code.replace("'", "'\\''") + "'"


# -- Python: files ------------------------------------------------------------------------------------
@pytest.mark.parametrize("code,fragment", [
    ("import shutil; shutil.rmtree('/etc')", "shutil.rmtree() deletes /etc"),
    ("import shutil as s; s.rmtree('/etc')", "shutil.rmtree() deletes /etc"),
    ("from shutil import rmtree as r; r('/etc')", "shutil.rmtree() deletes /etc"),
    ("import os; os.remove('/etc/passwd')", "os.remove() deletes /etc/passwd"),
    ("import os; p = '/etc'; os.rmdir(p)", "os.rmdir() deletes /etc"),
    ("import os; os.rmdir('/e' + 'tc')", "os.rmdir() deletes /etc"),
    ("import pathlib; pathlib.Path('/etc/x').unlink()", "pathlib.Path.unlink() deletes /etc/x"),
    ("from pathlib import Path; Path('/etc/x').write_text('x')", "pathlib.Path.write_text() writes /etc/x"),
    ("open('/etc/x', 'w').write('x')", "open() writes /etc/x"),
    ("import os; os.rename('a', '/etc/a')", "os.rename() writes /etc/a"),
    ("import shutil; shutil.copy('a', '/etc/a')", "shutil.copy() writes /etc/a"),
    ("import shutil; shutil.move('/etc/a', 'b')", "shutil.move() deletes /etc/a"),
    ("import os as o, shutil; getattr(shutil, 'rmtree')('/etc')", "shutil.rmtree() deletes /etc"),
])
def test_python_file_changes_outside_are_denied_and_named(policy, code: str, fragment: str) -> None:
    check(bash(policy, py(code)), "deny", "fs.outside-worktree", f"python -c: {fragment}, {OUT}", code)


@pytest.mark.parametrize("code", [
    "import shutil; shutil.rmtree('build')", "open('/etc/hosts').read()", "print('hello')",
    "import json, sys; print(json.load(sys.stdin))", "import os; print(os.getenv('HOME'))",
    "import os; os.chdir('/tmp'); print(os.listdir('.'))", "import sqlite3; sqlite3.connect('a.db').execute('SELECT 1')",
])
def test_harmless_python_is_allowed(policy, code: str) -> None:
    check(bash(policy, py(code)), "allow", None, None, code)


# -- Python: where it works (the bypasses this pins: chdir and cwd= were not followed) ----------------------
@pytest.mark.parametrize("code,rule", [
    ("import os; os.chdir('/'); os.system('rm -rf etc')", "fs.outside-worktree"),
    ("import os; os.chdir('/etc'); os.remove('passwd')", "fs.outside-worktree"),
    ("import os; os.chdir('..'); os.chdir('..'); os.remove('x')", "fs.outside-worktree"),
    ("import os; os.chdir(os.environ['D']); os.remove('x')", "fs.unresolved-target"),
    ("import subprocess; subprocess.run(['rm', '-rf', 'etc'], cwd='/')", "fs.outside-worktree"),
    ("import subprocess; subprocess.run('rm -rf etc', shell=True, cwd='/')", "fs.outside-worktree"),
    ("import subprocess, sys; subprocess.run(['rm', '-rf', 'x'], cwd=sys.argv[1])", "fs.unresolved-target"),
    ("from os import chdir, remove; chdir('/srv'); remove('db.sqlite')", "fs.outside-worktree"),
])
def test_python_that_moves_elsewhere_is_judged_there(policy, code: str, rule: str) -> None:
    check(bash(policy, py(code)), "deny", rule, None, code)


@pytest.mark.parametrize("code", [
    "import os; os.chdir('build'); os.remove('x.o')",
    "import subprocess; subprocess.run(['rm', '-rf', 'x'], cwd='build')",
    "import os; os.chdir('/'); os.remove('/z/home/worktrees/J/x')",      # absolute paths do not move
])
def test_python_that_moves_within_the_worktree_is_allowed(policy, code: str) -> None:
    check(bash(policy, py(code)), "allow", None, None, code)


# -- Python: commands and code it runs -----------------------------------------------------------------------
@pytest.mark.parametrize("code,rule,fragment", [
    ("import os; os.system('rm -rf /etc')", "fs.outside-worktree", "`rm` deletes /etc"),
    ("import subprocess; subprocess.run(['rm', '-rf', '/etc'])", "fs.outside-worktree", "`rm` deletes /etc"),
    ("import subprocess as sp; sp.check_call(['git', 'push', '-f'])", "git.force-push", "force pushes"),
    ("import os; os.popen('rm -rf /etc')", "fs.outside-worktree", "/etc"),
    ("import os; os.execvp('rm', ['rm', '-rf', '/etc'])", "fs.outside-worktree", "/etc"),
    ("__import__('os').system('rm -rf /etc')", "fs.outside-worktree", "/etc"),
    ("import importlib; importlib.import_module('os').system('rm -rf /etc')", "fs.outside-worktree", "/etc"),
    ("import importlib; m = importlib.import_module('shutil'); m.rmtree('/etc')", "fs.outside-worktree",
     "shutil.rmtree() deletes /etc"),
    ("exec('import os; os.system(\"rm -rf /etc\")')", "fs.outside-worktree", "/etc"),
    ("getattr(__import__('os'), 'system')('rm -rf /etc')", "fs.outside-worktree", "/etc"),
    ("import os; f = os.system; f('rm -rf /etc')", "opaque.exec", "os.system taken as a value"),
    ("import sys; sys.modules['os'].system('x')", "opaque.exec", "sys.modules"),
    ("eval(input())", "opaque.exec", "eval() runs code the guardian cannot see"),
    ("import pickle; pickle.loads(b'')", "opaque.exec", "pickle.loads()"),
    ("import runpy; runpy.run_path('x.py')", "opaque.exec", "runpy.run_path()"),
    ("import code; code.interact()", "opaque.exec", "code.interact()"),
    ("x = 1 +", "opaque.exec", "does not parse"),
])
def test_python_that_runs_things_is_judged_by_what_it_runs(policy, code: str, rule: str, fragment: str) -> None:
    check(bash(policy, py(code)), "deny", rule, fragment, code)


def test_python_code_only_known_at_run_time_is_denied(policy) -> None:
    check(bash(policy, "python3 -c \"$CODE\""), "deny", "opaque.exec", "only known at run time")


# -- Python: secrets, SQL, hosts --------------------------------------------------------------------------------
@pytest.mark.parametrize("code,rule", [
    ("import os; print(os.environ)", "creds.env-dump"),
    ("import os; print(os.environ['AWS_SECRET_ACCESS_KEY'])", "creds.env-dump"),
    ("open('/u/.ssh/id_rsa').read()", "creds.read"),
    ("import sqlite3; sqlite3.connect('a.db').execute('DROP TABLE t')", "sql.destructive"),
    ("import socket; socket.create_connection(('api.stripe.com', 443))", "net.high-consequence"),
    ("import stripe", "net.sdk"),
    ("import zen.cli.main", "self.zen-command"),
])
def test_python_secrets_sql_and_hosts(policy, code: str, rule: str) -> None:
    # socket.create_connection((host, port)) reached a payments host unchecked before
    check(bash(policy, py(code)), "deny", rule, None, code)


def test_a_raw_socket_to_an_ordinary_host_is_allowed(policy) -> None:
    check(bash(policy, py("import socket; socket.create_connection(('example.com', 443))")), "allow")


# -- Python files on disk ----------------------------------------------------------------------------------------
def test_a_python_file_on_disk_is_judged_by_what_it_surely_does(policy, tmp_path: Path) -> None:
    (tmp_path / "bad.py").write_text("import shutil\nshutil.rmtree('/etc')\n")
    (tmp_path / "args.py").write_text("import os, sys\nos.remove(sys.argv[1])\n")     # run-time only
    (tmp_path / "ok.py").write_text("print('hi')\n")
    ctx = on_disk(tmp_path)
    check(bash(policy, "python3 bad.py", ctx), "deny", "fs.outside-worktree", "/etc")
    check(bash(policy, "python3 args.py x", ctx), "allow")
    check(bash(policy, "python3 ok.py", ctx), "allow")


def test_a_python_file_written_by_the_same_command_is_judged_strictly(policy, tmp_path: Path) -> None:
    cmd = "printf 'import os, sys\\nos.remove(sys.argv[1])\\n' > t.py && python3 t.py /etc/passwd"
    check(bash(policy, cmd, on_disk(tmp_path)), "deny", "fs.outside-worktree", "/etc/passwd")   # its argv is known


# -- JS, Ruby, Perl, PHP -----------------------------------------------------------------------------------------
@pytest.mark.parametrize("command,rule,fragment", [
    ("node -e \"require('fs').rmSync('/etc', {recursive: true})\"", "fs.outside-worktree", "node -e deletes /etc"),
    ("node -e \"require('child_process').execSync('rm -rf /etc')\"", "fs.outside-worktree", "`rm` deletes /etc"),
    ("node -e \"const cp = require('child_process'); cp.exec('rm -rf /etc')\"", "fs.outside-worktree", "/etc"),
    ("node -e \"require('fs').writeFileSync('/etc/x', 'y')\"", "fs.outside-worktree", "node -e writes /etc/x"),
    ("node -e \"console.log(process.env)\"", "creds.env-dump", "dumps the environment"),
    ("node -e \"console.log(process.env.AWS_SECRET_ACCESS_KEY)\"", "creds.secret-echo", "AWS_SECRET_ACCESS_KEY"),
    ("node -e \"eval(process.argv[1])\"", "opaque.exec", "eval of generated code"),
    ("ruby -e \"FileUtils.rm_rf('/etc')\"", "fs.outside-worktree", "ruby -e deletes /etc"),
    ("ruby -e \"system('rm -rf /etc')\"", "fs.outside-worktree", "/etc"),
    ("ruby -e \"`rm -rf /etc`\"", "fs.outside-worktree", "/etc"),
    ("perl -e \"system('rm -rf /etc')\"", "fs.outside-worktree", "/etc"),
    ("perl -e 'unlink \"/etc/passwd\"'", "fs.outside-worktree", "perl -e deletes /etc/passwd"),
    ("php -r \"system('rm -rf /etc');\"", "fs.outside-worktree", "/etc"),
    ("php -r \"unlink('/etc/passwd');\"", "fs.outside-worktree", "php -r deletes /etc/passwd"),
])
def test_other_interpreters(policy, command: str, rule: str, fragment: str) -> None:
    check(bash(policy, command), "deny", rule, fragment, command)


@pytest.mark.parametrize("command", ["node -e \"console.log(1)\"", "ruby -e \"puts 1\"", "perl -e 'print 1'",
                                     "php -r \"echo 1;\""])
def test_harmless_one_liners_are_allowed(policy, command: str) -> None:
    check(bash(policy, command), "allow", None, None, command)


def test_inline_code_is_not_read_only_at_observe(policy) -> None:
    obs = agent(level="observe")
    check(bash(policy, "python3 -c 'print(1)'", obs), "deny", "level.observe", "`python -c` is not one")
    check(bash(policy, "node -e 'console.log(1)'", obs), "deny", "level.observe")


# -- awk and sed ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("command,fragment", [
    ("awk 'BEGIN { system(\"rm -rf /etc\") }'", "`rm` deletes /etc"),
    ("awk '{ print > \"/etc/x\" }' f", "awk writes /etc/x"),
    ("sed -n 'e rm -rf /etc' f", "`rm` deletes /etc"),
    ("sed 's/x/y/w /etc/out' f", "sed `w` writes /etc/out"),
    ("sed -i 's/a/b/' /etc/hosts", "`sed -i` rewrites /etc/hosts"),
])
def test_awk_and_sed_programs_are_read(policy, command: str, fragment: str) -> None:
    check(bash(policy, command), "deny", "fs.outside-worktree", fragment, command)


@pytest.mark.parametrize("command", ["awk '{ print $1 }' f", "sed 's/a/b/' f", "sed -i 's/a/b/' src/x.py",
                                     "awk -F: '{ n++ } END { print n }' f"])
def test_plain_awk_and_sed_are_allowed(policy, command: str) -> None:
    check(bash(policy, command), "allow", None, None, command)


# -- editors, pagers, archives --------------------------------------------------------------------------------------
@pytest.mark.parametrize("command,rule,fragment", [
    ("vim -c ':!rm -rf /etc' x", "opaque.exec", "`vim` with a command or script argument"),
    ("less +'!rm -rf /etc' x", "opaque.exec", "`less` with a command"),
    ("tar --to-command='rm -rf /etc' -xf x.tar", "opaque.exec", "`tar --to-command` runs a program"),
    ("tar xf x.tar -C /etc", "fs.outside-worktree", "`tar -x` extracts into /etc"),
    ("tar cf /tmp/x.tar .", "fs.outside-worktree", "`tar` writes /tmp/x.tar"),
    ("unzip x.zip -d /etc", "fs.outside-worktree", "`unzip` extracts into /etc"),
    ("zip -r /tmp/o.zip .", "fs.outside-worktree", "`zip` writes /tmp/o.zip"),
])
def test_tools_that_run_or_unpack(policy, command: str, rule: str, fragment: str) -> None:
    check(bash(policy, command), "deny", rule, fragment, command)


# -- the system ---------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("command,rule,fragment", [
    ("chmod 777 x", "perm.world-writable", "world-writable mode 0o777"),
    ("mkfs.ext4 /dev/sda1", "disk.destructive", "rewrites disks or filesystems"),
    ("dd if=/dev/zero of=/dev/sda", "disk.device-write", "`dd of=/dev/sda` writes a device"),
    ("shutdown -h now", "system.power", "stops the machine"),
    ("crontab -r", "system.persistence", "schedules commands that run outside the job"),
    ("sudo ls", "priv.escalation", "agents never do"),
    ("tmux kill-server", "self.zen-tmux", "the default server"),
    ("screen -X quit", "self.zen-tmux", "reaches a session that already exists"),
])
def test_system_commands(policy, command: str, rule: str, fragment: str) -> None:
    check(bash(policy, command), "deny", rule, fragment, command)


def test_tmux_on_a_server_the_agent_names_is_its_own(policy) -> None:
    check(bash(policy, "tmux -L mine kill-server"), "allow")

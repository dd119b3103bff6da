"""The guardian's third round, part B (issue 32; security-findings H5, H8, H9, M11, M12, L17, L18,
C4): signals and /proc, git refs and config, zen's records, the agents' config dirs, MCP tools.

Each class is a corpus of (command, expected, rule prefix, why) run in-process through decide()
as an agent of job J (worktree /z/home/worktrees/J, zen home /z/home, user home /u, the shipped
policy, level act-and-report: tests/guard/test_corpus.py's context), and the cases that need real
processes, real git repositories or real files run against them.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.guard.ctxs import on_disk
from tests.guard.test_corpus import ENV, REPO, WT, _check, _home
from zen.guard.api import Context, ToolCall
from zen.guard.context import read_head
from zen.guard.decide import decide
from zen.guard.policy.load import load_policy

A, D = "allow", "deny"

# -- processes: signals and /proc (H8, H9) ------------------------------------------------------
PROCESS = [
    ("kill 1282", D, "proc.signal", "the supervisor's pid"),
    ("kill -9 1282", D, "proc.signal", "SIGKILL to the supervisor"),
    ("kill -STOP 1282", D, "proc.signal", "freezing it"),
    ("kill -s KILL 2226", D, "proc.signal", "-s SIGNAL form"),
    ("kill --signal=TERM 2226", D, "proc.signal", "--signal= form"),
    ("kill -9 $(pgrep -f 'zen guard serve')", D, "proc.signal", "the guardian daemon, found by name"),
    ("kill $(cat /z/home/control/supervisor.pid)", D, "proc.signal", "a pid read from a file"),
    ("kill $PID", D, "proc.signal", "a pid only known at run time"),
    ("pgrep -f zen | xargs kill", D, "proc.signal", "pids fed by xargs"),
    ("pkill -f zen", D, "proc.signal", "by name: zen's own processes"),
    ("pkill python", D, "proc.signal", "every python, the supervisor's too"),
    ("pkill -9 -u agent", D, "proc.signal", "every process of the user"),
    ("killall tmux", D, "proc.signal", "every agent's terminal"),
    ("killall -9 claude", D, "proc.signal", "other jobs' agents"),
    ("killall5 -9", D, "proc.signal", "every process"),
    ("skill -KILL -u agent", D, "proc.signal", "by user"),
    ("fuser -k 8080/tcp", D, "proc.signal", "the dashboard's port"),
    ("fuser -km /z/home", D, "proc.signal", "everything using the home"),
    ("kill -- -1", D, "proc.signal", "every process the user may signal"),
    ("kill -9 -1", D, "proc.signal", "the same, signal first"),
    ("kill 0", D, "proc.signal", "the whole process group"),
    ("kill -TERM -- -4242", D, "proc.signal", "another process group"),
    ("kill 1", D, "proc.signal", "init"),
    ("/bin/kill -9 1282", D, "proc.signal", "by path"),
    ("env kill 1282", D, "proc.signal", "through env"),
    ("bash -c 'kill -9 1282'", D, "proc.signal", "through bash -c"),
    ("timeout 5 kill 1282", D, "proc.signal", "through timeout"),
    ("tmux -L zen-0123456789 kill-server", D, "self.zen-tmux", "zen's tmux server"),
    ("tmux -L zen-0123456789 kill-session -t other", D, "self.zen-tmux", "another job's session"),
    ("cat /proc/thread-self/environ", D, "creds.read", "H9"),
    ("grep -a KEY /proc/thread-self/environ", D, "creds.read", "H9"),
    ("cat /proc/self/task/*/environ", D, "creds.read", "a glob over the tasks"),
    ("sort /proc/self/task/$$/environ", D, "creds.read", "a tid only known at run time"),
    ("cat /proc/1282/task/1282/environ", D, "creds.read", "the supervisor's environment"),
    ("head -c 9999 /proc/1/task/1/environ", D, "creds.read", "through head"),
    ("cat /proc/*/environ", D, "creds.read", "every process"),
    ("grep -r KEY /proc/1282", D, "creds.read", "a recursive read of a process"),
    ("cat /proc/1282/cmdline", D, "creds.read", "another process's arguments"),
    ("cat /proc/1282/task/1283/cmdline", D, "creds.read", "a thread's arguments"),
    ("xxd /proc/1282/mem", D, "creds.read", "another process's memory"),
    ("cat /proc/1282/root/z/home/control/api-token", D, "creds.read", "through another's root"),
    ("ls /proc/1282/cwd/", D, "creds.read", "through another's cwd"),
    ("cat /proc/1282/fd/3", D, "creds.read", "a file another process holds open"),
    ("python3 -c 'print(open(\"/proc/thread-self/environ\").read())'", D, "creds.read", "python open()"),
    # harmless
    ("kill %1", A, None, "a job of its own shell"),
    ("kill -9 %1", A, None, "the same, SIGKILL"),
    ("kill %%", A, None, "the current job"),
    ("kill -TERM %2", A, None, "another job of its own"),
    ("kill $!", A, None, "its own last background job"),
    ("kill -INT \"$!\"", A, None, "quoted"),
    ("kill $(jobs -p)", A, None, "every background job of its own shell"),
    ("kill $(jobs -p | head -1)", D, "proc.signal", "a pipeline the guardian does not read as jobs -p"),
    ("jobs() { echo 1282; }; kill $(jobs -p)", D, "proc.signal", "a function named jobs"),
    ("enable -n jobs; kill $(jobs -p)", D, "proc.signal", "the builtin switched off"),
    ("python3 -m http.server 8000 & sleep 1; curl -s localhost:8000 >/dev/null; kill $!", A, None,
     "start, use and stop its own server"),
    ("kill -l", A, None, "lists signal names"),
    ("kill -L", A, None, "the table of names"),
    ("kill -0 1282", A, None, "an existence probe sends nothing"),
    ("kill -s 0 1282", A, None, "the same, -s 0"),
    ("pgrep -f myserver", A, None, "finding a process kills nothing"),
    ("pgrep -a python", A, None, "listing"),
    ("pidof sleep", A, None, "listing"),
    ("ps aux", A, None, "every process, no environment"),
    ("ps -ef", A, None, "-e is every process"),
    ("ps -o pid,etime,cmd", A, None, "a format (the false deny of item 8)"),
    ("ps -p 42 -o etime=", A, None, "one process's age"),
    ("ps -eo pid,ppid,stat,comm --sort=-pcpu", A, None, "a busy list"),
    ("ps -u agent -o pid,cmd", A, None, "a user's processes"),
    ("fuser -v 8000/tcp", A, None, "who holds a port, no kill"),
    ("cat /proc/self/cmdline", A, None, "its own arguments"),
    ("cat /proc/self/status", A, None, "its own status"),
    ("cat /proc/1282/status", A, None, "another's status holds no secrets"),
    ("cat /proc/cpuinfo /proc/meminfo /proc/loadavg", A, None, "the machine"),
    ("ls /proc", A, None, "the process list"),
    ("ls /proc/1282", A, None, "a process's directory, not its files"),
    ("wait %1", A, None, "waiting kills nothing"),
]


# -- git: refs, worktrees, shared config, work thrown away (H5, M11, item 8) ---------------------
GIT = [
    ("git branch -m main old-main", D, "git.ref", "H5: the base renamed away"),
    ("git branch main HEAD", D, "git.ref", "H5: a new main at the agent's commit"),
    ("git branch -m main old-main && git branch main HEAD", D, "git.ref", "H5 in one line"),
    ("git branch -m zen/review/V zen/review/V-old", D, "git.ref", "another job's review branch"),
    ("git branch zen/review/V HEAD", D, "git.ref", "a review branch at the agent's commit"),
    ("git branch -m zen/OTHER x", D, "git.ref", "a live job's branch"),
    ("git branch -m renamed", D, "git.ref", "renaming its own branch loses what zen harvests"),
    ("git branch --move topic topic2", D, "git.ref", "--move"),
    ("git branch -d topic", D, "git.ref", "branches are the lane's"),
    ("git branch --delete zen/OTHER", D, "git.ref", "another job's branch"),
    ("git branch -c zen/J main", D, "git.ref", "a copy onto the base"),
    ("git branch release/2.0 HEAD", D, "git.ref", "a release branch"),
    ("git branch zen/J-2", D, "git.ref", "zen's namespace is zen's"),
    ("git checkout -b zen/review/x", D, "git.ref", "creating in zen's namespace"),
    ("git switch -c master", D, "git.ref", "a new master"),
    ("git checkout --orphan main", D, "git.ref", "an orphan base"),
    ("git checkout main", D, "git.ref", "the next commit would move the base"),
    ("git switch zen/review/V", D, "git.ref", "committing would move a review branch"),
    ("git checkout --ignore-other-worktrees topic", D, "git.ref", "a branch another worktree has"),
    ("git symbolic-ref HEAD refs/heads/main", D, "git.ref", "H5: HEAD pointed at the base"),
    ("git symbolic-ref -d HEAD", D, "git.ref", "deleting HEAD"),
    ("git fetch origin main:main", D, "git.ref", "fetching into the base"),
    ("git fetch origin +x:topic", D, "git.ref", "a forced fetch into a local branch"),
    ("git rebase HEAD main", D, "git.ref", "rebase switches to main and rewrites it"),
    ("git worktree add /z/home/policy/evil", D, "self.protect", "M11: a checkout in zen's policy"),
    ("git worktree add /z/home/spool/new/x.yaml", D, "self.protect", "M11: into the spool"),
    ("git worktree add ~root/.config/autostart", D, None, "M11: another user's autostart"),
    ("git worktree add --detach /tmp/elsewhere", D, "fs.outside-worktree", "M11: anywhere"),
    ("git worktree add ../OTHER/x", D, "fs.outside-worktree", "into another job's worktree"),
    ("git worktree add -b main sub", D, "git.ref", "a new main in a new worktree"),
    ("git worktree add -f sub zen/OTHER", D, "git.worktree-force", "a branch in use elsewhere"),
    ("git worktree move ../OTHER /tmp/x", D, "git.worktree-move", "moving another job's worktree"),
    ("git worktree repair", D, "git.worktree-move", "relinks every worktree"),
    ("git config core.bare true", D, "git.config-write", "M11: breaks the lane"),
    ("git config extensions.worktreeConfig true", D, "git.config-write", "M11"),
    ("git config --unset core.worktree", D, "git.config-write", "an unset changes the shared config too"),
    ("git config --remove-section remote.origin", D, "git.config-write", "removes the lane's remote"),
    ("git config --edit", D, "git.config-write", "an editor on the shared config"),
    ("git config include.path /tmp/evil", D, "git.config-smuggle", "includes run config from elsewhere"),
    ("git config includeIf.gitdir:/.path /tmp/evil", D, "git.config-smuggle", "conditional include"),
    ("git config core.hooksPath /tmp/hooks", D, "git.config-smuggle", "hooks from elsewhere"),
    ("git config alias.st '!rm -rf ~'", D, None, "a shell alias"),
    ("git config gc.reflogExpire now", D, "git.config", "persisted reflog expiry"),
    ("git remote add evil /tmp", D, "git.config-write", "M11: a new remote"),
    ("git remote set-url origin https://evil.example/r", D, "git.config-write", "the lane's origin swapped"),
    ("git remote rename origin old", D, "git.config-write", "renaming a remote"),
    ("git remote prune origin", D, "git.config-write", "deletes remote-tracking branches"),
    ("git -c gc.reflogExpire=now gc", D, "git.config-smuggle", "item 8: reflog expiry"),
    ("git -c gc.reflogExpireUnreachable=now -c gc.pruneExpire=now gc", D, "git.config-smuggle", "item 8"),
    ("git -c gc.pruneExpire=now gc --auto", D, "git.config-smuggle", "prunes at once"),
    ("git -c core.pager='sh -c \"rm -rf ~\"' log", D, "git.config-smuggle", "a pager that runs a shell"),
    ("git checkout README.md", D, "git.discard", "item 8: a file, its uncommitted changes lost"),
    ("git checkout src/app.py", D, "git.discard", "a file in a folder"),
    ("git checkout ./src", D, "git.discard", "a folder, by ./"),
    ("git checkout '*.py'", D, None, "a pathspec"),
    ("cd /z/lane && git pull", D, "git.other-repo", "item 8: the lane's main checkout"),
    ("cd ../OTHER && git commit -am x", D, "git.other-repo", "another job's worktree"),
    ("cd $SOMEWHERE && git reset --soft HEAD~1", D, "git.other-repo", "a directory only known at run time"),
    ("git -C /z/lane pull", D, "git.other-repo", "the lane's checkout through -C"),
    ("git tag -f v1.0", D, "git.tag-force", "moving an existing tag"),
    ("git tag -d v1.0", D, "git.tag-delete", "deleting a tag"),
    ("git fast-import < stream", D, "git.ref", "a stream that names refs/heads/main"),
    ("git checkout -t origin/zen/review/V", D, "git.ref", "a local review branch made by --track"),
    ("git stash branch zen/review/V", D, "git.ref", "a review branch made from a stash"),
    ("git checkout -t origin/feature", A, None, "a local tracking branch of an ordinary name"),
    ("git stash branch wip-topic", A, None, "a new branch from a stash"),
    # harmless: ordinary work in the worktree
    ("git status", A, None, "status"),
    ("git add -A && git commit -m 'fix the parser'", A, None, "commit"),
    ("git commit --amend --no-edit", A, None, "amend its own commit"),
    ("git checkout -b topic", A, None, "a new branch of its own"),
    ("git switch -c feature/login", A, None, "a new branch, switch's spelling"),
    ("git branch topic", A, None, "a new name"),
    ("git branch experiment HEAD~2", A, None, "a new name at an older commit"),
    ("git branch -c zen/J backup-of-my-work", A, None, "a copy of its own branch to a new name"),
    ("git switch zen/J", A, None, "back to its own branch"),
    ("git checkout zen/J", A, None, "the same with checkout"),
    ("git checkout topic", A, None, "a branch of its own making"),
    ("git checkout -", A, None, "the previous branch"),
    ("git checkout HEAD~1", A, None, "a detached look at a commit"),
    ("git checkout --detach main", A, None, "a detached look at the base"),
    ("git switch --detach origin/main", A, None, "the same with switch"),
    ("git checkout -- README.md", D, "git.discard", "with -- it is a path (still denied)"),
    ("git log --oneline -20", A, None, "log"),
    ("git diff main...HEAD", A, None, "diff against the base"),
    ("git show main:README.md", A, None, "a file as the base has it"),
    ("git stash && git stash pop", A, None, "stash"),
    ("git stash list", A, None, "stash list"),
    ("git branch -a", A, None, "listing branches"),
    ("git branch --list 'zen/*'", A, None, "listing zen's branches"),
    ("git branch --show-current", A, None, "its own branch's name"),
    ("git branch --contains HEAD", A, None, "listing"),
    ("git branch -u origin/main", A, None, "its branch's upstream"),
    ("git symbolic-ref HEAD", A, None, "reading HEAD"),
    ("git symbolic-ref --short HEAD", A, None, "reading HEAD, short"),
    ("git worktree list", A, None, "listing worktrees"),
    ("git worktree add --detach .zen-tmp/wt HEAD", A, None, "a scratch checkout inside its worktree"),
    ("git config user.email dev@example.com", A, None, "identity"),
    ("git config --get remote.origin.url", A, None, "reading config"),
    ("git config user.name", A, None, "reading a key"),
    ("git config --list", A, None, "reading all"),
    ("git config branch.zen/J.remote origin", A, None, "its own branch's upstream"),
    ("git remote -v", A, None, "reading remotes"),
    ("git -c core.pager=cat log", A, None, "item 8: the false deny"),
    ("git -c core.pager='less -R' log -p", A, None, "less with flags"),
    ("git --no-pager log -5", A, None, "no pager at all"),
    ("git -c color.ui=always diff", A, None, "a colour"),
    ("git -c gc.auto=0 commit -m x", A, None, "gc keys that expire nothing"),
    ("git gc", A, None, "gc with git's own expiry"),
    ("git rebase -i HEAD~3", A, None, "its own history"),
    ("git rebase main", A, None, "its own branch onto the base"),
    ("git fetch origin", A, None, "fetching remote-tracking branches"),
    ("git fetch origin main", A, None, "the same, one branch"),
    ("git pull --rebase", A, None, "pull in its own worktree"),
    ("git tag v1.0-rc1", A, None, "a new tag (git refuses an existing one)"),
    ("git merge --no-ff topic", A, None, "merging into its own branch"),
    ("git cherry-pick abc1234", A, None, "onto its own branch"),
    ("git reset --soft HEAD~1", A, None, "its own branch"),
    ("git -C sub status", A, None, "read-only in a subfolder"),
    ("cd src && git add parser.py", A, None, "a subfolder of the worktree"),
]


@pytest.fixture(scope="module")
def policy(tmp_path_factory: pytest.TempPathFactory):
    pol, _ = load_policy(_home(tmp_path_factory.mktemp("home")))
    assert pol.invalid is None, pol.invalid
    return pol


def ctx(level: str = "act-and-report", **kw) -> Context:
    return Context(cwd=WT, worktree=WT, home="/z/home", user_home="/u", level=level, domain="code",
                   job_id="J", env=ENV, **kw)


def _cases(cases: list[tuple[str, str, str | None, str]]):
    return pytest.mark.parametrize("command,expected,rule,why", cases, ids=[c[0][:70] for c in cases])


def test_each_corpus_is_big_enough() -> None:
    for name, cases in (("process", PROCESS), ("git", GIT)):
        assert sum(c[1] == D for c in cases) >= 30 and sum(c[1] == A for c in cases) >= 20, name


@_cases(GIT)
def test_git(policy, command: str, expected: str, rule: str | None, why: str) -> None:
    _check(decide(ToolCall("Bash", command=command), ctx(), policy), expected, rule, command, why)


@_cases(PROCESS)
def test_processes(policy, command: str, expected: str, rule: str | None, why: str) -> None:
    _check(decide(ToolCall("Bash", command=command), ctx(), policy), expected, rule, command, why)


def test_a_human_keeps_every_signal(policy) -> None:
    human = Context(cwd=WT, worktree=WT, home="/z/home", user_home="/u", level="act-and-report", env=ENV)
    for command in ("kill -9 1282", "pkill -f myserver", "killall tmux"):
        assert decide(ToolCall("Bash", command=command), human, policy).allowed, command


def _sleeper(env: dict[str, str]) -> subprocess.Popen[bytes]:
    p = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"], env=env)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:   # until it runs python (before exec, environ is the test's)
        try:
            if b"time.sleep" in (read_head(f"/proc/{p.pid}/cmdline") or b""):
                break
        except OSError:
            pass
        time.sleep(0.01)
    return p


def test_kill_of_a_real_pid_is_allowed_only_for_a_process_of_the_job(policy, tmp_path: Path) -> None:
    """A literal pid: the guardian reads /proc/PID/environ; only the job's own processes (they carry
    its ZEN_JOB_ID) may be signalled, a sibling job's and a process of no job may not."""
    base = {"PATH": os.environ.get("PATH", "/usr/bin:/bin")}
    mine = _sleeper({**base, "ZEN_JOB_ID": "J"})
    sibling = _sleeper({**base, "ZEN_JOB_ID": "OTHER"})
    stranger = _sleeper(base)
    try:
        c = on_disk(tmp_path)
        for p, expected in ((mine, A), (sibling, D), (stranger, D)):
            for command in (f"kill {p.pid}", f"kill -9 {p.pid}"):
                d = decide(ToolCall("Bash", command=command), c, policy)
                assert d.decision == expected, (command, expected, d.as_dict())
        d = decide(ToolCall("Bash", command=f"kill {mine.pid} {sibling.pid}"), c, policy)
        assert d.decision == D and str(sibling.pid) in d.reason, d.as_dict()
        assert decide(ToolCall("Bash", command=f"kill {os.getppid()}"), c, policy).decision == D
    finally:
        for p in (mine, sibling, stranger):
            p.kill()
            p.wait()


def test_inline_pythons_os_kill_follows_the_rule_of_kill(policy, tmp_path: Path) -> None:
    """Finding H8: `python3 -c 'import os,signal; os.kill(<supervisor>, signal.SIGKILL)'` was allowed."""
    base = {"PATH": os.environ.get("PATH", "/usr/bin:/bin")}
    mine = _sleeper({**base, "ZEN_JOB_ID": "J"})
    stranger = _sleeper(base)
    try:
        c = on_disk(tmp_path)
        cases = [(f"import os,signal; os.kill({stranger.pid}, signal.SIGKILL)", D),
                 (f"import os; os.kill({os.getppid()}, 9)", D), ("import os; os.killpg(0, 9)", D),
                 ("import os; os.kill(int(open('pid').read()), 15)", D),
                 (f"import os,signal; os.kill({mine.pid}, signal.SIGTERM)", A),
                 (f"import os; os.kill({stranger.pid}, 0)", A)]          # a probe sends nothing
        for code, expected in cases:
            d = decide(ToolCall("Bash", command=f"python3 -c {code!r}"), c, policy)
            assert d.decision == expected, (code, d.as_dict())
    finally:
        for p in (mine, stranger):
            p.kill()
            p.wait()


def test_proc_self_resolved_on_disk_is_still_judged(policy, tmp_path: Path) -> None:
    """With symlinks resolved (/proc/thread-self is /proc/<pid>/task/<tid>), environ stays denied
    and the reader's own cmdline stays allowed."""
    c = on_disk(tmp_path)
    for command, expected in (("cat /proc/thread-self/environ", D), ("cat /proc/self/task/*/environ", D),
                              ("cat /proc/self/cmdline", A), ("cat /proc/thread-self/status", A)):
        d = decide(ToolCall("Bash", command=command), c, policy)
        assert d.decision == expected, (command, d.as_dict())
    d = decide(ToolCall.from_hook("Read", {"file_path": "/proc/thread-self/environ"}), c, policy)
    assert d.decision == D and d.rule == "creds.read", d.as_dict()


def test_the_read_tool_on_another_process_is_denied(policy) -> None:
    for path in ("/proc/1282/task/1282/environ", "/proc/1282/cmdline", "/proc/thread-self/environ"):
        d = decide(ToolCall.from_hook("Read", {"file_path": path}), ctx(), policy)
        assert d.decision == D and d.rule == "creds.read", (path, d.as_dict())


# -- git on a real lane: a repository, its linked worktree for job J, the job's task.yaml --------

def _git(cwd: Path, *args: str) -> str:
    env = {**os.environ, "GIT_CONFIG_GLOBAL": "/dev/null", "GIT_CONFIG_NOSYSTEM": "1"}
    return subprocess.run(["git", "-c", "user.email=t@t", "-c", "user.name=t", *args], cwd=cwd, env=env,
                          check=True, capture_output=True, text=True).stdout


@pytest.fixture
def lane(tmp_path: Path) -> tuple[Path, Path, Path]:
    """(home, lane checkout, worktree of job J on zen/J); the lane's base is `trunk`."""
    home, repo = tmp_path / "home", tmp_path / "app"
    repo.mkdir()
    _git(repo, "init", "-q", "-b", "trunk")
    (repo / "README.md").write_text("hello\n")
    _git(repo, "add", "README.md")
    _git(repo, "commit", "-q", "-m", "init")
    _git(repo, "branch", "topic")
    _git(repo, "branch", "zen/review/V")
    (home / "jobs" / "J").mkdir(parents=True)
    (home / "jobs" / "J" / "task.yaml").write_text("zen: 1\nid: J\nname: j\nlane: app\nbase: trunk\n")
    wt = home / "worktrees" / "J"
    _git(repo, "worktree", "add", "-q", "-b", "zen/J", str(wt))
    return home, repo, wt


def test_git_on_a_real_lane(policy, lane: tuple[Path, Path, Path]) -> None:
    home, repo, wt = lane
    c = on_disk(wt, home=home)
    (wt / "README.md").write_text("uncommitted work\n")
    (wt / "src").mkdir()
    cases = [
        ("git checkout trunk", D, "git.ref"),            # the base, read from task.yaml
        ("git branch -m trunk old", D, "git.ref"),
        ("git branch trunk2", A, None),
        ("git checkout README.md", D, "git.discard"),    # a file on disk: its changes would be lost
        ("git checkout src", D, "git.discard"),          # a folder on disk
        ("git checkout topic", A, None),                 # a branch that exists
        ("git checkout -b newtopic", A, None),
        ("git checkout zen/review/V", D, "git.ref"),
        (f"git worktree add {repo.parent / 'elsewhere'}", D, "fs.outside-worktree"),
        (f"cd {repo} && git pull", D, "git.other-repo"),
        (f"cd {repo} && git status", A, None),           # reading the lane's checkout is fine
        ("git status && git commit -am wip", A, None),
    ]
    for command, expected, rule in cases:
        _check(decide(ToolCall("Bash", command=command), c, policy), expected, rule, command, "real lane")


def test_the_hook_blocks_the_swap_of_the_base(lane: tuple[Path, Path, Path]) -> None:
    """H5 through the real `zen guard hook`, as Claude Code runs it from the job's worktree; the
    lane's base still points where it did."""
    from tests.guard.util import bash, hook, job_env

    home, repo, wt = lane
    (home / "policy").mkdir()
    (home / "policy" / "guardian.yaml").write_text((REPO / "policy" / "guardian.yaml").read_text())
    (home / "zen.yaml").write_text("zen: 1\n")
    before = _git(repo, "rev-parse", "trunk")
    for command in ("git branch -m trunk old-trunk && git branch trunk HEAD",
                    "git symbolic-ref HEAD refs/heads/trunk", "kill -9 1", "cat /proc/thread-self/environ"):
        r = hook(bash(command, wt), env=job_env(home, "J"))
        assert r.returncode == 2 and r.stderr.startswith("zen guardian: "), (command, r.returncode, r.stderr)
    r = hook(bash("git checkout -b topic2", wt), env=job_env(home, "J"))
    assert r.returncode == 0, r.stderr
    assert _git(repo, "rev-parse", "trunk") == before


# -- the agents' configuration folders (M12) ----------------------------------------------------
CONFIG_DIRS = [
    ("mkdir c2 && echo '{}' > c2/settings.json && mv c2 .claude", D, "self.protect", "M12: a folder renamed into place"),
    ("cp -r DIR .claude", D, "self.protect", "M12: copied into place"),
    ("ln -s DIR .claude", D, None, "M12: linked into place"),
    ("echo 'echo pwned' > .claude/hooks/pre.sh", D, "self.protect", "a hook script"),
    ("echo x > .claude/commands/deploy.md", D, "self.protect", "a slash command"),
    ("echo '{\"mcpServers\":{}}' > .mcp.json", D, "self.protect", "project MCP servers"),
    ("mkdir -p .codex && echo x > .codex/config.toml", D, "self.protect", "Codex's project config"),
    ("cp settings.json .gemini/settings.json", D, "self.protect", "Gemini's project settings"),
    ("mv .claude claude-old", D, "self.protect", "moving the folder away"),
    ("rm -rf .codex", D, "self.protect", "deleting it"),
    ("tee .mcp.json < x", D, "self.protect", "through tee"),
    ("cat .claude/settings.json", A, None, "reading is fine"),
    ("ls -la .codex .gemini", A, None, "listing is fine"),
    ("echo x > notes.claude.md", A, None, "a name that only looks alike"),
    ("mkdir claude && echo x > claude/README", A, None, "a folder without the dot"),
]


@_cases(CONFIG_DIRS)
def test_agent_config_dirs(policy, command: str, expected: str, rule: str | None, why: str) -> None:
    _check(decide(ToolCall("Bash", command=command), ctx(), policy), expected, rule, command, why)


@pytest.mark.parametrize("tool,path", [("Write", f"{WT}/.mcp.json"), ("Write", f"{WT}/.claude/hooks/x.sh"),
                                       ("Edit", f"{WT}/.claude/commands/c.md"), ("Write", f"{WT}/.codex/config.toml"),
                                       ("MultiEdit", f"{WT}/.gemini/settings.json")])
def test_file_tools_cannot_write_agent_config(policy, tool: str, path: str) -> None:
    d = decide(ToolCall.from_hook(tool, {"file_path": path, "content": "{}", "new_string": "{}",
                                         "edits": [{"old_string": "a", "new_string": "b"}]}), ctx(), policy)
    assert d.decision == D and d.rule == "self.protect", d.as_dict()


# -- zen's records and the login log (C4, L17) ---------------------------------------------------
RECORDS = [
    ("cat /z/home/logs/server.log", D, "self.records", "C4: the login URL"),
    ("grep -o 'http://[^ ]*token=[^ ]*' /z/home/logs/server.log", D, "self.records", "C4 as probed"),
    ("tail -f ../../logs/server.log", D, "self.records", "relative to the worktree"),
    ("cat /z/home/logs/guard-audit.jsonl", D, "self.records", "every job's judged commands"),
    ("grep -r token /z/home/logs", D, "self.records", "the whole folder"),
    ("cat /z/home/jobs/OTHER/pane.log", D, "self.records", "L17: another agent's output"),
    ("cat /z/home/jobs/OTHER/events.jsonl", D, "self.records", "L17: its timeline"),
    ("cat /z/home/jobs/OTHER/prompt.txt", D, "self.records", "its prompt"),
    ("cat /z/home/jobs/OTHER/handoff.md", D, "self.records", "its handoff"),
    ("grep -r password /z/home/jobs", D, "self.records", "every job at once"),
    ("cat ../OTHER/README", D, "self.records", "L17: another job's worktree"),
    ("grep -rn TODO ..", D, "self.records", "every worktree at once"),
    ("zen output OTHER", D, "self.records", "L17"),
    ("zen show OTHER", D, "self.records", "L17"),
    ("zen log OTHER", D, "self.records", "L17"),
    ("zen --home /z/home output OTHER -n 50", D, "self.records", "a group option first"),
    ("cat /z/home/jobs/J/handoff.md", A, None, "its own handoff"),
    ("cat /z/home/jobs/J/prompt.txt", A, None, "its own prompt"),
    ("ls /z/home/jobs", A, None, "the list of jobs"),
    ("ls ..", A, None, "the list of worktrees"),
    ("zen output J", A, None, "its own output"),
    ("zen show J --events 5", A, None, "its own record"),
    ("zen status", A, None, "the summary"),
    ("grep -rn TODO .", A, None, "its own worktree"),
]


@_cases(RECORDS)
def test_records(policy, command: str, expected: str, rule: str | None, why: str) -> None:
    _check(decide(ToolCall("Bash", command=command), ctx(), policy), expected, rule, command, why)


def test_the_read_tool_on_zens_log_and_other_jobs_is_denied(policy) -> None:
    for name, inp in (("Read", {"file_path": "/z/home/logs/server.log"}),
                      ("Read", {"file_path": "/z/home/jobs/OTHER/pane.log"}),
                      ("Grep", {"pattern": "token", "path": "/z/home/logs"}),
                      ("Read", {"file_path": "/z/home/worktrees/OTHER/src/app.py"})):
        d = decide(ToolCall.from_hook(name, inp), ctx(), policy)
        assert d.decision == D and d.rule == "self.records", (name, inp, d.as_dict())
    assert decide(ToolCall.from_hook("Read", {"file_path": "/z/home/jobs/J/handoff.md"}), ctx(), policy).allowed


def test_a_parent_reads_its_workers_records(policy, tmp_path: Path) -> None:
    """A worker's task.yaml names its parent: the parent may read its records and its output;
    a job that is not its worker stays closed."""
    home = tmp_path / "home"
    wt = home / "worktrees" / "J"
    wt.mkdir(parents=True)
    for job, parent in (("W1", "J"), ("X1", "OTHER")):
        d = home / "jobs" / job
        d.mkdir(parents=True)
        (d / "task.yaml").write_text(f"zen: 1\nid: {job}\nname: w\nparent: {parent}\n")
        (d / "pane.log").write_text("output\n")
    c = on_disk(wt, home=home)
    for command, expected in ((f"cat {home}/jobs/W1/pane.log", A), ("zen output W1", A),
                              (f"cat {home}/jobs/X1/pane.log", D), ("zen output X1", D), ("zen output W", D)):
        d = decide(ToolCall("Bash", command=command), c, policy)
        assert d.decision == expected, (command, d.as_dict())


def test_a_human_reads_every_record(policy) -> None:
    human = Context(cwd=WT, worktree=WT, home="/z/home", user_home="/u", level="act-and-report", env=ENV)
    for command in ("cat /z/home/logs/server.log", "zen output OTHER", "cat /z/home/jobs/OTHER/pane.log"):
        assert decide(ToolCall("Bash", command=command), human, policy).allowed, command


# -- tools by name (L18) ----------------------------------------------------------------------------

def test_the_hook_denies_unknown_mcp_tools_and_keeps_the_ordinary_ones(home: Path) -> None:
    """Through the real `zen guard hook` of a job: another MCP server's tool is denied (its input
    names no path, which the core alone let through), zen's own and Claude Code's ordinary tools
    are judged as before; the deny is on the job's timeline."""
    from tests.guard.util import events, hook, job_env, make_job

    wt = make_job(home, "J")
    env = job_env(home, "J")

    def call(tool: str, tool_input: dict) -> subprocess.CompletedProcess[str]:
        return hook({"session_id": "t", "hook_event_name": "PreToolUse", "tool_name": tool,
                     "tool_input": tool_input, "cwd": str(wt)}, env=env)

    for tool, tool_input in (("mcp__other__tool", {}), ("mcp__github__search_issues", {"query": "bug"}),
                             ("mcp__playwright__browser_navigate", {"url": "http://127.0.0.1:1"})):
        r = call(tool, tool_input)
        assert r.returncode == 2 and "MCP server" in r.stderr, (tool, r.returncode, r.stderr)
    for tool, tool_input in (("Task", {"description": "x", "prompt": "look around"}), ("TodoWrite", {"todos": []}),
                             ("BashOutput", {"bash_id": "1"}), ("KillShell", {"shell_id": "1"}),
                             ("mcp__zen__agent_status", {})):
        r = call(tool, tool_input)
        assert r.returncode == 0, (tool, r.stderr)
    assert call("Frobnicate", {}).returncode == 2
    denied = [e for e in events(home, "J") if e.get("type") == "guard.denied"]
    assert any("mcp__other__tool" in json.dumps(e) for e in denied), denied


def test_an_agent_working_in_the_home_still_cannot_read_the_logs(policy) -> None:
    c = Context(cwd="/z/home", worktree=None, home="/z/home", user_home="/u", level="act-and-report",
                domain="code", job_id="J", env=ENV)
    d = decide(ToolCall("Bash", command="cat logs/server.log"), c, policy)
    assert d.decision == D and d.rule == "self.records", d.as_dict()


def test_a_folder_holding_agent_config_is_not_copied_into_place(policy, tmp_path: Path) -> None:
    """M12 by the contents: `cp -r template/. .` lands template/.claude at the worktree's root."""
    wt = tmp_path / "wt"
    (wt / "template" / ".claude").mkdir(parents=True)
    (wt / "template" / ".claude" / "settings.json").write_text("{}")
    (wt / "plain").mkdir()
    (wt / "plain" / "a.txt").write_text("a")
    (wt / "mcp").mkdir()
    (wt / "mcp" / ".mcp.json").write_text("{}")
    c = on_disk(wt)
    for command, expected in (("cp -r template/. .", D), ("rsync -a template/ ./", D), ("cp -a mcp/. .", D),
                              ("cp -r plain/. .", A), ("cp -r plain copy", A)):
        d = decide(ToolCall("Bash", command=command), c, policy)
        assert d.decision == expected, (command, d.as_dict())
        if expected == D:
            assert d.rule == "self.protect", d.as_dict()

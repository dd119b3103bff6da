"""The guardian's decision corpus, run in-process through decide() (tests/guard/corpus.py),
plus the cases that need real symlinks on disk."""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path

import pytest

from tests.guard import corpus
from zen.guard.api import Context, ToolCall
from zen.guard.decide import decide
from zen.guard.policy.load import load_policy

REPO = Path(__file__).resolve().parents[2]
WT = "/z/home/worktrees/J"
ENV = {"HOME": "/u", "TMPDIR": WT + "/.zen-tmp", "PATH": "/usr/bin:/bin", "USER": "agent"}


def _home(tmp: Path, approvals: bool = False) -> str:
    (tmp / "policy").mkdir(parents=True)
    text = (REPO / "policy" / "guardian.yaml").read_text()
    if approvals:
        text = text.replace("file_deletes: false", "file_deletes: true").replace(
            "system_commands: false", "system_commands: true").replace(
            "network_requests: false", "network_requests: true")
    (tmp / "policy" / "guardian.yaml").write_text(text)
    shutil.copy(REPO / "policy" / "autonomy.yaml", tmp / "policy" / "autonomy.yaml")
    shutil.copytree(REPO / "incidents", tmp / "incidents")
    return str(tmp)


@pytest.fixture(scope="module")
def policy(tmp_path_factory: pytest.TempPathFactory):
    pol, _ = load_policy(_home(tmp_path_factory.mktemp("home")))
    assert pol.invalid is None, pol.invalid
    return pol


@pytest.fixture(scope="module")
def approval_policy(tmp_path_factory: pytest.TempPathFactory):
    pol, _ = load_policy(_home(tmp_path_factory.mktemp("home-approvals"), approvals=True))
    assert pol.invalid is None, pol.invalid
    return pol


def ctx(level: str = "act-and-report") -> Context:
    """The main corpus runs where the whole policy applies (pushes allowed, and reported);
    LEVELS below pins what changes at suggest and autonomous."""
    return Context(cwd=WT, worktree=WT, home="/z/home", user_home="/u", level=level, domain="code",
                   job_id="J", env=ENV)


def _check(d, expected: str, rule: str | None, label: str, why: str) -> None:
    assert d.decision == expected, f"{label!r}: expected {expected} ({why}), got {d.as_dict()}"
    if rule is not None:
        assert d.rule.startswith(rule), f"{label!r}: expected rule {rule} ({why}), got {d.as_dict()}"
    assert d.reason and "\n" not in d.reason


def test_corpus_is_big_enough() -> None:
    total = len(corpus.BASH) + len(corpus.TOOLS) + len(corpus.OBSERVE) + len(corpus.OBSERVE_TOOLS) + \
        len(corpus.APPROVALS)
    assert total >= 400
    assert sum(1 for c in corpus.BASH if c[1] == "allow") >= 120   # near-misses that must pass


@pytest.mark.parametrize("command,expected,rule,why", corpus.BASH, ids=[c[0][:60] for c in corpus.BASH])
def test_bash(policy, command: str, expected: str, rule: str | None, why: str) -> None:
    _check(decide(ToolCall("Bash", command=command), ctx(), policy), expected, rule, command, why)


@pytest.mark.parametrize("tool,tool_input,expected,rule,why", corpus.TOOLS,
                         ids=[f"{c[0]}:{c[4]}" for c in corpus.TOOLS])
def test_tools(policy, tool: str, tool_input: dict, expected: str, rule: str | None, why: str) -> None:
    call = ToolCall.from_hook(tool, tool_input)
    _check(decide(call, ctx(), policy), expected, rule, f"{tool} {tool_input}", why)


@pytest.mark.parametrize("command,expected,rule,why", corpus.OBSERVE, ids=[c[0][:60] for c in corpus.OBSERVE])
def test_observe(policy, command: str, expected: str, rule: str | None, why: str) -> None:
    _check(decide(ToolCall("Bash", command=command), ctx("observe"), policy), expected, rule, command, why)


@pytest.mark.parametrize("tool,tool_input,expected,rule,why", corpus.OBSERVE_TOOLS,
                         ids=[f"{c[0]}:{c[4]}" for c in corpus.OBSERVE_TOOLS])
def test_observe_tools(policy, tool: str, tool_input: dict, expected: str, rule: str | None, why: str) -> None:
    _check(decide(ToolCall.from_hook(tool, tool_input), ctx("observe"), policy), expected, rule, tool, why)


@pytest.mark.parametrize("command,expected,rule,why", corpus.APPROVALS, ids=[c[0][:60] for c in corpus.APPROVALS])
def test_approvals(approval_policy, command: str, expected: str, rule: str | None, why: str) -> None:
    _check(decide(ToolCall("Bash", command=command), ctx(), approval_policy), expected, rule, command, why)


def test_corpus_is_fast(policy) -> None:
    calls = [ToolCall("Bash", command=c[0]) for c in corpus.BASH]
    c = ctx()
    for call in calls[:20]:
        decide(call, c, policy)       # warm the parser
    start = time.perf_counter()
    for call in calls:
        decide(call, c, policy)
    elapsed = time.perf_counter() - start
    assert elapsed < 1.0, f"{len(calls)} decisions took {elapsed:.2f}s"


def test_no_worktree_uses_the_cwd_subtree(policy) -> None:
    c = Context(cwd="/work/proj", worktree=None, home="/z/home", user_home="/u", env=ENV)
    assert decide(ToolCall("Bash", command="rm -rf build"), c, policy).allowed
    assert decide(ToolCall("Bash", command="rm -rf .git"), c, policy).rule == "fs.git-dir"
    assert decide(ToolCall("Bash", command="rm -rf ."), c, policy).rule == "fs.worktree-root"
    assert decide(ToolCall("Bash", command="rm -rf ../x"), c, policy).rule == "fs.outside-worktree"


def test_a_broken_policy_denies_everything() -> None:
    from zen.guard.policy.load import Policy

    broken = Policy({"invalid": "policy/guardian.yaml: not valid YAML"})
    d = decide(ToolCall("Bash", command="ls"), ctx(), broken)
    assert d.decision == "deny" and d.rule == "policy.invalid" and "guardian.yaml" in d.reason


# ---------------------------------------------------------------------------------------------
# real symlinks: ctx.realpath resolves links that exist on disk

@pytest.fixture
def disk(tmp_path: Path):
    wt = tmp_path / "home" / "worktrees" / "J"
    wt.mkdir(parents=True)
    user = tmp_path / "user"
    (user / ".ssh").mkdir(parents=True)
    (user / ".ssh" / "id_rsa").write_text("key")
    (user / "projects").mkdir()
    os.symlink(user, wt / "h")                     # a link in the worktree pointing home
    os.symlink(user / ".ssh", wt / "keys")
    os.symlink(tmp_path / "home" / "policy", wt / "pol")
    (tmp_path / "home" / "policy").mkdir()
    (wt / "build").mkdir()
    (wt / "inner").symlink_to(wt / "build")        # a link that stays inside
    c = Context(cwd=str(wt), worktree=str(wt), home=str(tmp_path / "home"), user_home=str(user),
                job_id="J", env={"HOME": str(user)}, realpath=os.path.realpath)
    return c


@pytest.mark.parametrize("command,expected,rule", [
    ("rm -rf h/*", "deny", "fs.outside-worktree"),
    ("rm -rf h/projects", "deny", "fs.outside-worktree"),
    ("echo x > h/.bashrc", "deny", "fs.outside-worktree"),
    ("cat keys/id_rsa", "deny", "creds.read"),
    ("echo x > pol/guardian.yaml", "deny", "self.protect"),
    ("rm -rf inner/*", "allow", None),
    ("rm h", "allow", None),                 # removing the link itself touches nothing outside
    ("rm -rf build", "allow", None),
    ("find h/ -delete", "deny", "fs.outside-worktree"),
])
def test_real_symlinks(policy, disk: Context, command: str, expected: str, rule: str | None) -> None:
    d = decide(ToolCall("Bash", command=command), disk, policy)
    assert d.decision == expected, (command, d.as_dict())
    if rule:
        assert d.rule == rule, (command, d.as_dict())


def test_real_symlink_file_tool(policy, disk: Context) -> None:
    target = os.path.join(disk.worktree, "h", ".profile")
    d = decide(ToolCall.from_hook("Write", {"file_path": target, "content": "x"}), disk, policy)
    assert d.decision == "deny" and d.rule == "fs.outside-worktree"


# What the autonomy level itself changes (DESIGN section 6): (level, command, decision, rule, why)
LEVELS: list[tuple[str, str, str, str | None, str]] = [
    ("suggest", "git push origin my-branch", "deny", "level.suggest", "suggest keeps work in the worktree"),
    ("suggest", "git push -u origin zen/J", "deny", "level.suggest", "even the job's own branch: zen harvests it"),
    ("suggest", "git push --force origin main", "deny", None, "the policy still denies it"),
    ("suggest", "git commit -m x", "allow", None, "committing stays inside the worktree"),
    ("suggest", "rm -rf build", "allow", None, "the worktree is the agent's sandbox"),
    ("act-and-report", "git push origin my-branch", "allow", "report.push", "allowed, and reported"),
    ("autonomous", "git push origin my-branch", "allow", "allow", "allowed without a per-action report"),
    ("autonomous", "git push origin main", "deny", "incident.push-protected-branch", "policy holds at every level"),
]


@pytest.mark.parametrize(("level", "command", "expected", "rule", "why"), LEVELS,
                         ids=[f"{c[0]}: {c[1]}" for c in LEVELS])
def test_levels(policy, level: str, command: str, expected: str, rule: str | None, why: str) -> None:
    _check(decide(ToolCall(tool="Bash", command=command), ctx(level), policy), expected, rule, command, why)

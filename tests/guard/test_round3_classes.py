"""The third-round corpus, part C (tests/guard/round3.py), run in-process through decide(): at
`suggest` (the default level) every harmful case is denied and the ordinary use of the same tools
allowed; at act-and-report the same, except that an action past the worktree is allowed (and
reported). Plus the cases that need files on disk."""

from __future__ import annotations

import pytest

from tests.guard import round3
from tests.guard.ctxs import agent, bash
from tests.guard.test_corpus import _home
from zen.guard.policy import load_policy

CASES = [(cls, *case) for cls, cases in round3.CLASSES.items() for case in cases]
IDS = [f"{c[0]}: {c[1][:70]}" for c in CASES]


@pytest.fixture(scope="module")
def policy(tmp_path_factory: pytest.TempPathFactory):
    pol, _ = load_policy(_home(tmp_path_factory.mktemp("home")))
    assert pol.invalid is None, pol.invalid
    return pol


def _check(d, expected: str, rule: str | None, command: str, why: str) -> None:
    assert d.decision == expected, f"{command!r}: expected {expected} ({why}), got {d.as_dict()}"
    if rule is not None and expected == "deny":
        assert d.rule.startswith(rule), f"{command!r}: expected rule {rule} ({why}), got {d.as_dict()}"
    assert d.reason and "\n" not in d.reason and "Traceback" not in d.reason, d.as_dict()


def test_every_class_has_its_cases() -> None:
    for cls, cases in round3.CLASSES.items():
        harmful = sum(1 for c in cases if c[1] == round3.D)
        harmless = sum(1 for c in cases if c[1] == round3.A)
        if cls == "false-denies":
            assert harmless >= 10, (cls, harmless)
        else:
            assert harmful >= 30 and harmless >= 20, (cls, harmful, harmless)


@pytest.mark.parametrize("cls,command,expected,rule,why", CASES, ids=IDS)
def test_at_suggest(policy, cls: str, command: str, expected: str, rule: str | None, why: str) -> None:
    _check(bash(policy, command, agent(level="suggest")), expected, rule, command, why)


@pytest.mark.parametrize("cls,command,expected,rule,why", CASES, ids=IDS)
def test_at_act_and_report(policy, cls: str, command: str, expected: str, rule: str | None, why: str) -> None:
    if rule == round3.BEYOND:          # past the worktree: allowed at act-and-report, and reported
        d = bash(policy, command, agent(level="act-and-report"))
        assert d.decision == "allow" and d.rule.startswith("report."), (command, d.as_dict())
        return
    _check(bash(policy, command, agent(level="act-and-report")), expected, rule, command, why)

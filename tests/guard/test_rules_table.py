"""The one table from program name to rule handler (zen/guard/rules/table.py)."""

from __future__ import annotations

import inspect

import pytest

from zen.guard import rules
from zen.guard.api import Context, ToolCall
from zen.guard.decide import decide
from zen.guard.policy.load import Policy
from zen.guard.rules.table import _GROUPS, HANDLERS, fallback


def test_every_program_is_listed_once() -> None:
    listed = [name for _, names in _GROUPS for name in names]
    twice = sorted({n for n in listed if listed.count(n) > 1})
    assert not twice, f"listed under two handlers: {twice}"
    assert len(HANDLERS) == len(listed)


@pytest.mark.parametrize("ref", sorted({ref for ref, _ in _GROUPS} | {fallback("python3.12"), fallback("mkfs.ext4"),
                                                                     fallback("some-tool")}))
def test_every_reference_is_a_handler(ref: str) -> None:
    fn = rules.resolve(ref)
    params = list(inspect.signature(fn).parameters)
    assert params == ["an", "name", "args", "st", "cmd", "depth"], (ref, params)
    family = ref.split(".", maxsplit=1)[0]
    assert fn.__module__ == f"zen.guard.rules.{family}"
    assert (inspect.getmodule(fn).__doc__ or "").strip(), f"{fn.__module__} has no docstring"


@pytest.mark.parametrize("name,ref", [("python3.12", "interp.python"), ("pypy3", "interp.python"),
                                      ("mkfs.ext4", "system.disk"), ("frobnicate", "generic.generic")])
def test_fallbacks(name: str, ref: str) -> None:
    assert name not in HANDLERS
    assert rules.handler(name) is rules.resolve(ref)


def test_a_path_prefix_does_not_change_the_handler() -> None:
    ctx = Context(cwd="/w", worktree="/w", home="/h", user_home="/u")
    for command in ("/bin/rm -rf /etc", "/usr/local/bin/rm -rf /etc", "./rm -rf /etc"):
        d = decide(ToolCall("Bash", command=command), ctx, Policy())
        assert d.rule == "fs.outside-worktree", (command, d.as_dict())

"""zen.core.taskcheck: the quick check `zen dispatch` makes without pydantic never accepts a task
the model refuses, never normalises one differently, and the YAML it writes reads back (with
ruamel, as the supervisor reads it) to exactly the task."""

from __future__ import annotations

import random

import pytest
from pydantic import ValidationError
from ruamel.yaml import YAML
from ruamel.yaml.scalarint import ScalarInt
from ruamel.yaml.scalarstring import DoubleQuotedScalarString, PlainScalarString

from zen.core.model import Task
from zen.core.taskcheck import _ONLY_WHEN_SET, quick, read_text, yaml_text

BASE = {"id": "20260101T000000Z-fix-0000", "name": "fix", "prompt": "Fix it", "lane": "app", "base": "main",
        "agent": "sim", "domain": "code", "priority": 3, "timeout": "30m", "max_retries": 0,
        "created_at": "2026-01-01T00:00:00.000Z", "created_by": "human"}
TEXTS = ["plain", "Fix the \"login\"\nand add a test\n", "tab\there", "ünïcødé 😀 漢字", "yes", "null", "2026-01-01",
         "0x1f", "1e3", "-leading dash", "  spaces  ", "#hash", "a: b", "[x]", "{y}", "'q'", "\\back\\slash",
         "nel\x85 ls\u2028 ps\u2029 del\x7f c1\x9b bom\ufeff", "\x00\x01\x1b[31mred", "", "   ", "~", "*a", "&b",
         "!tag", "%dir", "@at", "`tick`", "|", ">", "---", "...", "x" * 300]
VALUES = {
    "name": ["fix", "Fix", "a-b-c", "-x", "x" * 49, 3, None],
    "prompt": [*TEXTS, None, 5],
    "lane": ["app", None, "", 7],
    "repo": [None, "/abs/repo", ""],
    "base": ["main", None, "feature/x", "v1.0"],
    "agent": ["sim", "cmd", "claude", "nope", None, 1],
    "command": [None, "sh -c 'echo hi'", "unbalanced 'quote", ["a", "b"], ["a", 1], [], "", "x"],
    "domain": ["code", None, "infra"],
    "priority": [1, 3, 5, 0, 6, "3", True, 2.0, None, ScalarInt(2)],    # ruamel's, from zen.yaml's defaults
    "timeout": ["30m", "0s", "1h30m", "bogus", 30, 1.5, None, "", DoubleQuotedScalarString("2h"),
                PlainScalarString("45m")],
    "max_retries": [0, 20, 21, -1, "1", None],
    "depends_on": [[], ["a"], "a", [1], None],
    "parent": [None, "20260101T000000Z-p-0000", 3],
    "created_by": ["human", "job:x", None, 1],
    "paths": [None, [], ["src/**"]],
    "script": [None, [{"say": "hi"}]],
    "model": [None, "opus"],
    "executor": [None, "local", "ray", {"kind": "ray", "address": "http://127.0.0.1:8265"}, 3],   # the model's lane
    "goal": [None, "until-done", "bogus"],                       # agent teams (DESIGN 13)
    "request_id": [None, "r-1"],
    "zen": [None, 1, 2, "1"],
    "unknown": [None, "x"],
}


def _model(fields: dict[str, object]) -> dict[str, object] | None:
    try:
        return Task.model_validate(fields).model_dump(mode="json")
    except (ValidationError, ValueError):
        return None


def _fields(rng: random.Random) -> dict[str, object]:
    f: dict[str, object] = dict(BASE)
    for key in rng.sample(sorted(VALUES), rng.randint(1, 5)):
        value = rng.choice(VALUES[key])
        if value is None:
            f.pop(key, None)
        else:
            f[key] = value
    return f


@pytest.mark.parametrize("seed", range(4))
def test_quick_accepts_only_what_the_model_accepts_and_dumps_it_the_same(seed: int) -> None:
    rng = random.Random(seed)
    accepted = 0
    for _ in range(1500):
        f = _fields(rng)
        got = quick(f)
        if got is None:
            continue
        accepted += 1
        assert got == _model(f), f
        text = yaml_text(got)
        if text is None:
            continue
        back = YAML(typ="safe").load(text)
        assert back == {k: v for k, v in got.items() if not (k in _ONLY_WHEN_SET and v is None)}, text
        assert Task.model_validate(back).model_dump(mode="json") == got
        assert read_text(text) == back     # and the lean reader (zen status's spool) agrees
    assert accepted > 100   # the quick lane is the usual one, not a corner


@pytest.mark.parametrize("text", [*TEXTS[:-1], "\n".join(TEXTS)])
def test_every_prompt_reads_back_exactly(text: str) -> None:
    f = dict(BASE, prompt=text + " (and something)")
    got = quick(f)
    assert got is not None
    out = yaml_text(got)
    assert out is not None and YAML(typ="safe").load(out)["prompt"] == f["prompt"]


def test_an_undecodable_argument_is_left_to_the_model() -> None:
    got = quick(dict(BASE, prompt="bad \udcff byte"))
    assert got is not None and yaml_text(got) is None


def test_the_lean_reader_leaves_other_yaml_to_ruamel() -> None:
    for text in ("prompt: |\n  block\n", "timeout: 30m\n", "name: 'quoted'\n", "x: 1\n", "id: \"a\\x41\"\n",
                 "depends_on:\n- a\n", "name: true\n"):
        assert read_text(text) is None, text

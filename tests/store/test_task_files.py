"""zen.store.jobs' task files: task.yaml round-trips every field a task can have, optional fields
are written only when set, and a bad task file is refused with one sentence naming the file and
the field (never a traceback, never pydantic's wording)."""

from __future__ import annotations

import io
import random
import string
from typing import Any

import pytest
from ruamel.yaml import YAML

from zen.core.model import Task
from zen.errors import InvalidTask
from zen.store.jobs import dump_task, load_task_text, task_mapping

JOB = "20261201T101500Z-fix-login-3fa9"


def _task(**kw: Any) -> Task:
    base: dict[str, Any] = {"id": JOB, "name": "fix-login", "prompt": "Fix the login form.", "lane": "app",
                            "created_at": "2026-12-01T10:15:00.000Z"}
    base.update(kw)
    return Task.model_validate(base)


def _refusal(text: str) -> str:
    with pytest.raises(InvalidTask) as exc:
        load_task_text(text, "spool/new/t.yaml")
    msg = str(exc.value)
    assert "\n" not in msg and "Traceback" not in msg and "pydantic" not in msg
    return msg


# -- round trips ------------------------------------------------------------------------------------

def test_a_plain_task_round_trips() -> None:
    t = _task()
    assert load_task_text(dump_task(t), "task.yaml") == t


def test_a_task_with_every_optional_field_round_trips() -> None:
    t = _task(agent="cmd", command="python -c 'print(1)'", priority=1, depends_on=["docs"], timeout="1h30m",
              max_retries=2, parent="20261201T101400Z-lead-0001", paths=["src/*.py"], script=[{"say": "hi"}],
              model="claude-sonnet", max_tokens=4000, executor={"kind": "ray", "address": "http://h:8265"},
              goal="until-done", request_id="req-1", budget={"tokens": 1000, "cost_usd": 1.5, "wall": "2h"})
    back = load_task_text(dump_task(t), "task.yaml")
    assert back == t
    assert back.command == ["python", "-c", "print(1)"]
    assert back.budget is not None and back.budget.wall_s == 7200.0


def test_optional_fields_that_are_unset_are_not_written() -> None:
    text = dump_task(_task())
    for key in ("script:", "model:", "max_tokens:", "executor:", "goal:", "request_id:", "budget:"):
        assert key not in text
    # the fields every task has are written, even when empty
    data = task_mapping(text, "task.yaml")
    assert data["depends_on"] == [] and data["repo"] is None and data["zen"] == 1


def test_the_written_file_is_block_style_yaml() -> None:
    text = dump_task(_task(depends_on=["a", "b"]))
    assert "depends_on:\n- a\n- b\n" in text


def test_a_multiline_unicode_prompt_survives_exactly() -> None:
    prompt = "Fix the login form.\n\n  - keep the indentation\n  - ünïcode ✓ 日本語\n\ttabs too\n"
    t = _task(prompt=prompt)
    assert load_task_text(dump_task(t), "task.yaml").prompt == prompt


def test_a_prompt_that_looks_like_yaml_stays_a_string() -> None:
    for prompt in ("yes", "null", "123", "- a list?", "key: value", "{not: a map}", "#not a comment"):
        assert load_task_text(dump_task(_task(prompt=prompt)), "task.yaml").prompt == prompt


def test_a_huge_prompt_round_trips() -> None:
    prompt = "line of a large prompt\n" * 8_000   # ~180 KB
    assert load_task_text(dump_task(_task(prompt=prompt)), "task.yaml").prompt == prompt


# -- refusals, one sentence each -----------------------------------------------------------------------

def test_invalid_yaml_names_the_file() -> None:
    msg = _refusal("prompt: [unclosed\n")
    assert msg.startswith("spool/new/t.yaml is not valid YAML: ")


@pytest.mark.parametrize("text", ["", "- a\n- b\n", "just text\n", "42\n"])
def test_a_file_that_is_no_mapping_is_not_a_task(text: str) -> None:
    assert _refusal(text) == "spool/new/t.yaml is not a task (expected a YAML mapping)"


def test_the_safe_loader_refuses_python_tags() -> None:
    msg = _refusal("!!python/object/apply:os.system ['echo pwned']\n")
    assert msg.startswith("spool/new/t.yaml is not valid YAML")


def _text(**over: Any) -> str:
    data = task_mapping(dump_task(_task()), "x")
    data.update(over)
    for k in [k for k, v in over.items() if v is ...]:
        del data[k]
    buf = io.StringIO()
    YAML(typ="safe").dump(data, buf)
    return buf.getvalue()


@pytest.mark.parametrize("over, expect", [
    ({"prompt": ...}, "spool/new/t.yaml: prompt: Field required"),
    ({"id": "../../etc"}, "spool/new/t.yaml: id: id '../../etc' is not a job id (like 20261129T101500Z-fix-login-3fa9)"),
    ({"priority": 9}, "spool/new/t.yaml: priority: Input should be less than or equal to 5"),
    ({"goal": "forever"}, "spool/new/t.yaml: goal: goal 'forever' is not known (one of: until-done)"),
    ({"zen": 2}, "spool/new/t.yaml: zen: task format version 2 is not supported (this zen reads 1)"),
    ({"paths": ["../outside"]}, "spool/new/t.yaml: paths: paths: '../outside' must be a path or glob inside "
                                "the repository (relative, no '..')"),
    ({"paths": ["/etc/passwd"]}, "spool/new/t.yaml: paths: paths: '/etc/passwd' must be a path or glob inside "
                                 "the repository (relative, no '..')"),
    ({"agent": "cmd"}, "spool/new/t.yaml: agent 'cmd' needs a command (--cmd \"ARGV\")"),
    ({"lane": None}, "spool/new/t.yaml: the task names no lane or repo (use --lane NAME or --repo PATH)"),
    ({"budget": {"wall": "0s"}}, "spool/new/t.yaml: budget.wall: budget.wall must be positive"),
    ({"budget": {"tokens": 0}}, "spool/new/t.yaml: budget.tokens: Input should be greater than or equal to 1"),
    ({"budget": {"dollars": 3}}, "spool/new/t.yaml: budget.dollars: Extra inputs are not permitted"),
    ({"model": ""}, "spool/new/t.yaml: model: String should have at least 1 character"),
])
def test_a_bad_field_is_named_with_the_reason(over: dict[str, Any], expect: str) -> None:
    assert _refusal(_text(**over)) == expect


def test_only_the_first_problem_is_reported() -> None:
    msg = _refusal(_text(priority=0, max_retries=99))
    assert msg.count(":") == 2 and msg.startswith("spool/new/t.yaml: priority:")


# -- the written text over many shapes of task ----------------------------------------------------------

# strings a YAML writer must quote (or must not), escape, fold or keep as they are
AWKWARD = ["yes", "no", "on", "off", "null", "~", "Null", "true", "", " ", "  lead", "trail  ", "010", "0o17",
           "0x1F", "1e3", "1_000", ".inf", ".nan", "30", "3.0", "+1", "-", "---", "...", "2026-12-01",
           "2026-12-01T10:15:00Z", "12:30:00", "<<", "=", "a: b", "a #b", "#c", "&a", "*a", "!t", "%x", "@x",
           "|", ">", "[x]", "{x}", "'q'", '"dq"', "back\\slash", "C:\\U0001F389", "tab\there", "ünïcode ✓ 日本語",
           "emoji 🎉", "\u0085nel", "\u2028ls", "bell\x07", "\ufeffbom", "a\nb", "a\n", "\n\nx\n\n",
           "line \nwith a trailing space\n", "   indented\n  lines\n", "a\r\nb", "x" * 300, ("word " * 60).strip(),
           "word: " * 40, "a - b " * 40, "a -" * 50 + " z", "ends with a colon:", "emoji 🎉 and\x07 a bell " * 9]


def _shaped(r: random.Random) -> Task:
    def text() -> str:
        if r.random() < 0.6:
            return r.choice(AWKWARD)
        return "".join(r.choice(string.printable + "üñ日✓🎉:-#' \"\n\t\x85") for _ in range(r.randint(1, 300)))

    fields: dict[str, Any] = {
        "prompt": "p " + text(), "domain": r.choice([None, text()]),
        "timeout": r.choice(["30m", "30", 90, 1.5]), "depends_on": [text() for _ in range(r.randint(0, 3))],
        "parent": r.choice([None, "20261201T101400Z-lead-0001"]), "created_by": text() or "human"}
    if r.random() < 0.5:
        fields.update(agent="cmd", command=[text() for _ in range(r.randint(1, 3))])
    if r.random() < 0.5:
        fields["script"] = [{text(): r.choice([None, 1, 2.5, True, text(), [None, text()], {"k": None}, [[None]]])}
                            for _ in range(r.randint(1, 3))]
    if r.random() < 0.3:
        fields.update(model="claude-sonnet", max_tokens=4000, executor={"kind": "ray", "address": None})
    return _task(**fields)


def test_every_shape_of_task_reads_back_exactly_and_no_line_ends_in_a_space() -> None:
    r = random.Random(12)
    for _ in range(300):
        t = _shaped(r)
        text = dump_task(t)
        assert load_task_text(text, "task.yaml") == t, text
        assert not [line for line in text.splitlines() if line.endswith(" ")], text


def test_none_is_an_empty_value_and_text_stays_as_typed() -> None:
    t = _task(prompt="Fix it 🎉 ünï", script=[{"say": None}, {"wait": [None]}], domain=None)
    text = dump_task(t)
    assert "\nrepo:\n" in text and "\ndomain:\n" in text and "\n- say:\n- wait:\n  -\n" in text
    assert "prompt: Fix it 🎉 ünï\n" in text          # neither \U0001F389 nor \xFC escapes
    assert "\ntimeout: 30m\n" in text and "created_at: '2026-12-01T10:15:00.000Z'\n" in text


def test_a_multiline_prompt_is_one_double_quoted_scalar() -> None:
    text = dump_task(_task(prompt="Fix the login form.\nIt breaks on submit.\n"))
    assert 'prompt: "Fix the login form.\\nIt breaks on submit.\\n"\n' in text


def test_characters_the_old_writer_broke_now_read_back() -> None:
    # the round-trip dumper wrote U+0085 raw, which a loader reads as a line break
    for odd in ("\u0085nel", "a\u2028b", "🎉\u0085"):
        assert load_task_text(dump_task(_task(domain=odd)), "task.yaml").domain == odd

"""A quick check of a task, without pydantic, for `zen dispatch` (issue 21).

`quick(fields)` answers only what it is sure of: the task as zen.core.model.Task would dump it
(`model_dump(mode="json")`, in the same field order) when the fields are plain and valid, or None
whenever it is not sure (a value of another type, a script, paths, an executor, a field it does not
know, or anything invalid): the caller then asks the model itself, which explains what is wrong. So it
never accepts a task the model would refuse, nor writes one the model would write differently
(tests/core/test_taskcheck.py holds it to that).

`yaml_text(task)` writes such a task as YAML with the stdlib: each value plain where YAML cannot
read it as anything but that string, else as a double-quoted (JSON-style) scalar; `read_text`
reads back exactly that form (and answers None for any other YAML, which ruamel then reads).
"""

from __future__ import annotations

import json
import re
import shlex

from zen.core.agents import AGENT_NAMES
from zen.core.durations import parse_duration
from zen.core.ids import NAME_RE

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

FIELDS = ("zen", "id", "name", "prompt", "lane", "repo", "base", "agent", "command", "domain", "priority",
          "depends_on", "timeout", "max_retries", "parent", "paths", "created_at", "created_by", "script",
          "model", "max_tokens", "executor", "goal", "request_id", "budget", "group")
_OPTIONAL_STR = ("lane", "repo", "base", "domain", "parent")
_REQUIRED_STR = ("id", "name", "prompt", "created_at")
# task.yaml leaves these out when unset; a task that sets one is left to the model
_ONLY_WHEN_SET = ("script", "model", "max_tokens", "executor", "goal", "request_id", "budget", "group")


def _str_or_none(v: object) -> bool:
    return v is None or type(v) is str


def _plain(v: object) -> object:
    """A str or int subclass (ruamel's scalars from zen.yaml's defaults) as the plain value the
    model keeps of it; anything else as it is."""
    if isinstance(v, str) and type(v) is not str:
        return str(v)
    if isinstance(v, int) and not isinstance(v, bool) and type(v) is not int:
        return int(v)
    return v


def quick(fields: dict[str, Any]) -> dict[str, Any] | None:
    """The task as the model dumps it, or None when only the model can say."""
    f: dict[str, Any] = {k: _plain(v) for k, v in fields.items()}
    if not set(f) <= set(FIELDS) or f.get("zen", 1) != 1 or type(f.get("zen", 1)) is not int:
        return None
    if any(f.get(k) is not None for k in _ONLY_WHEN_SET) or f.get("paths"):
        return None
    if not all(type(f.get(k)) is str for k in _REQUIRED_STR) or not all(_str_or_none(f.get(k)) for k in _OPTIONAL_STR):
        return None
    if not NAME_RE.match(f["name"]) or not f["prompt"].strip() or type(f.get("created_by", "human")) is not str:
        return None
    agent = f.get("agent", "sim")
    if type(agent) is not str or agent not in AGENT_NAMES:
        return None
    command = f.get("command")
    if type(command) is str:
        try:
            command = shlex.split(command)
        except ValueError:
            return None
    if command is not None and (type(command) is not list or not all(type(c) is str for c in command)):
        return None
    if agent == "cmd" and not command:
        return None
    if bool(f.get("lane")) == bool(f.get("repo")):
        return None     # neither or both
    priority, retries = f.get("priority", 3), f.get("max_retries", 0)
    if type(priority) is not int or not 1 <= priority <= 5 or type(retries) is not int or not 0 <= retries <= 20:
        return None
    deps = f.get("depends_on", [])
    if type(deps) is not list or not all(type(d) is str for d in deps):
        return None
    timeout = f.get("timeout", "30m")
    try:
        if type(timeout) is not str or parse_duration(timeout) <= 0:
            return None
    except ValueError:
        return None
    return {"zen": 1, "id": f["id"], "name": f["name"], "prompt": f["prompt"], "lane": f.get("lane"),
            "repo": f.get("repo"), "base": f.get("base"), "agent": agent, "command": command,
            "domain": f.get("domain"), "priority": priority, "depends_on": list(deps), "timeout": timeout,
            "max_retries": retries, "parent": f.get("parent"), "paths": [], "created_at": f["created_at"],
            "created_by": f.get("created_by", "human"), "script": None, "model": None, "max_tokens": None,
            "executor": None, "goal": None, "request_id": None, "budget": None, "group": None}


# -- writing ------------------------------------------------------------------------------------

_PLAIN = re.compile(r"[a-z][a-z0-9._/-]*")
_RESERVED = frozenset({"true", "false", "null", "yes", "no", "on", "off", "y", "n"})
# characters a double-quoted YAML scalar must carry escaped beyond JSON's own escapes: non-printable
# C1 controls and DEL, YAML's other line breaks, the byte-order mark and the non-characters
_ESCAPE = re.compile("[\x7f-\x9f\u2028\u2029\ufeff\ufffe\uffff]")
_SURROGATE = re.compile("[\ud800-\udfff]")


def _quoted(v: str) -> str | None:
    if _SURROGATE.search(v):
        return None     # not text (an undecodable argument): the model's writer says what to do
    return _ESCAPE.sub(lambda m: f"\\u{ord(m.group()):04x}", json.dumps(v, ensure_ascii=False))


def _scalar(v: object) -> str | None:
    if v is None:
        return ""
    if type(v) is int:
        return str(v)
    if type(v) is not str:
        return None
    if _PLAIN.fullmatch(v) and v not in _RESERVED:
        return v
    return _quoted(v)


def yaml_text(task: dict[str, Any]) -> str | None:
    """The task file for `quick`'s result (None if some value is beyond this writer)."""
    lines = []
    for key, value in task.items():
        if key in _ONLY_WHEN_SET and value is None:
            continue
        if type(value) is list:
            items = [_quoted(x) if type(x) is str else None for x in value]
            text = None if None in items else "[" + ", ".join(str(i) for i in items) + "]"
        else:
            text = _scalar(value)
        if text is None:
            return None
        lines.append(f"{key}: {text}".rstrip())
    return "\n".join(lines) + "\n"


_INT = re.compile(r"-?[0-9]+")


def _value(text: str) -> tuple[bool, Any]:
    if text == "":
        return True, None
    if _INT.fullmatch(text):
        return True, int(text)
    if _PLAIN.fullmatch(text) and text not in _RESERVED:
        return True, text
    if text[0] in "[\"" and text[-1] in "]\"":
        try:
            value = json.loads(text)
        except ValueError:
            return False, None
        if isinstance(value, str) or (isinstance(value, list) and all(type(x) is str for x in value)):
            return True, value
    return False, None


def read_text(text: str) -> dict[str, Any] | None:
    """A task file in `yaml_text`'s form as its mapping; None for anything else."""
    out: dict[str, Any] = {}
    for line in text.splitlines():
        key, sep, rest = line.partition(":")
        if not sep or key not in FIELDS or key in out or (rest and rest[0] != " "):
            return None
        ok, value = _value(rest[1:])
        if not ok:
            return None
        out[key] = value
    return out

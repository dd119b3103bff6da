"""zen.core.results: a typed result is frozen, and its JSON is its fields as plain data, nested
results included (what --json prints and the API sends)."""

from __future__ import annotations

import dataclasses
import json

import pytest

from zen.core.results import Result


@dataclasses.dataclass(frozen=True)
class Entry(Result):
    path: str
    status: str


@dataclasses.dataclass(frozen=True)
class Listing(Result):
    job: str
    files: list[Entry]
    base: str | None = None


def test_a_result_is_its_fields_as_json_nested_results_included() -> None:
    r = Listing("j", [Entry("a.py", "M"), Entry("b.py", "")])
    assert r.to_json() == {"job": "j", "files": [{"path": "a.py", "status": "M"}, {"path": "b.py", "status": ""}],
                           "base": None}
    assert json.loads(json.dumps(r.to_json())) == r.to_json()


def test_a_result_cannot_be_changed_after_the_fact() -> None:
    r = Entry("a.py", "M")
    with pytest.raises(dataclasses.FrozenInstanceError):
        r.status = "D"  # type: ignore[misc]

"""The base of the typed results zen's use cases return (issue 12: no `dict[str, Any]` across a
module boundary where a model fits).

A result is a frozen dataclass: the CLI's renderer prints it as text or, with --json, as
`to_json()`; the HTTP API and the team tools send the same `to_json()`. A result whose JSON is not
simply its fields (a path as a string, a field left out) overrides `to_json`.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any


@dataclass(frozen=True)
class Result:
    def to_json(self) -> dict[str, Any]:
        """The fields as plain JSON data, nested results included."""
        return asdict(self)


__all__ = ["Result"]

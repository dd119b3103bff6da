"""The base of the typed results zen's use cases return (issue 12: no `dict[str, Any]` across a
module boundary where a model fits).

A result is a frozen dataclass: the CLI's renderer prints it as text or, with --json, as
`to_json()`; the HTTP API and the team tools send the same `to_json()`. Paths are sent as
strings; a result whose JSON is not simply its fields (a field left out) overrides `to_json`.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any


def _plain(items: list[tuple[str, Any]]) -> dict[str, Any]:
    # a path (anything with __fspath__) as its string; core imports no file-system module
    return {k: str(v) if hasattr(v, "__fspath__") else v for k, v in items}


@dataclass(frozen=True)
class Result:
    def to_json(self) -> dict[str, Any]:
        """The fields as plain JSON data, nested results included, paths as strings."""
        return asdict(self, dict_factory=_plain)


__all__ = ["Result"]

"""The server suite: the supervisor suite's fixtures (a home with a fast lane `zh`, real
`zen supervise` processes `sups` / `sup`), and `served`: one real home, supervisor and
`zen serve` shared by the tests of a module (tests/server/served.py)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.server.served import Served, serving
from tests.supervisor.conftest import sup, sups, zh

__all__ = ["served", "sup", "sups", "zh"]


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    with serving(tmp_path_factory.mktemp("served")) as s:
        yield s

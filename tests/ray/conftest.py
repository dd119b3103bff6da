"""One real Ray cluster (head + one more node, 127.0.0.1 only, usage stats off) for the whole
test session, started on first use and stopped at the end (tests/ray/cluster.py).

The Ray tests are marked `ray` and run in their own serial pytest invocation (`make test-ray`,
part of `make test`): one cluster per session, never one per xdist worker. A run whose `-m` does
not ask for `ray` deselects them. Ray comes with the optional extra (`pip install -e '.[ray]'`,
which `make install` does); without it they skip and say so.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.ray.cluster import RayCluster, free_port, start_cluster

HERE = Path(__file__).parent
__all__ = ["RayCluster", "free_port", "start_cluster"]


_DESELECTED: list[int] = []


def _importable() -> bool:
    try:
        return importlib.util.find_spec("ray") is not None
    except (ImportError, ValueError):
        return False


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    ours = [i for i in items if HERE in Path(str(i.fspath)).parents and i.get_closest_marker("ray")]
    if not ours:
        return
    if "ray" not in (config.getoption("markexpr") or ""):
        keep = [i for i in items if i not in ours]
        config.hook.pytest_deselected(items=ours)
        items[:] = keep
        _DESELECTED.append(len(ours))
        return
    if not _importable():
        skip = pytest.mark.skip(reason="ray is not installed: pip install -e '.[ray]' (make install does it)")
        for item in ours:
            item.add_marker(skip)


@pytest.fixture(scope="session")
def ray_cluster() -> Iterator[RayCluster]:
    cluster = start_cluster()
    try:
        yield cluster
    finally:
        cluster.stop()


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    if _DESELECTED:
        terminalreporter.write_line(f"tests/ray: {sum(_DESELECTED)} tests on a real Ray cluster were not asked "
                                    "for (-m ray; make test-ray runs them)")

"""Fixtures for the orchestration unit tests: the shared `home` and `lane` fixtures
(tests/conftest.py) made in-process, as `zen init` and `zen lane add` make them (the same
functions, without a subprocess each), plus a way to edit zen.yaml's text as a user would."""

from __future__ import annotations

from pathlib import Path

import pytest

from zen.orchestration.lanes import add_lane
from zen.store.home import Home, init_home


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An initialised zen home, exported as $ZEN_HOME."""
    root = tmp_path / "zh"
    init_home(root)
    monkeypatch.setenv("ZEN_HOME", str(root))
    return root


@pytest.fixture
def lane(home: Path, git_repo: Path) -> Path:
    """`home` with `git_repo` registered as lane 'app'. Returns the repo path."""
    add_lane(Home(home), "app", str(git_repo), None, None)
    return git_repo



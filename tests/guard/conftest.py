"""Shared fixtures of the guardian's tests."""

from __future__ import annotations

import pytest

from tests.guard.test_corpus import _home
from zen.guard.policy.load import load_policy


@pytest.fixture(scope="module")
def policy(tmp_path_factory: pytest.TempPathFactory):
    """The default policy of a fresh home, compiled once per module (a module may define its own)."""
    pol, _ = load_policy(_home(tmp_path_factory.mktemp("home")))
    assert pol.invalid is None, pol.invalid
    return pol

"""Fixtures for running the real aider offline against a scripted chat-completions server.

aider comes from `bash tests/aider/install.sh` (its own venv under <repo>/.cache/aider). When it
is not installed, every test that needs it is skipped with a reason that says how to install it.

The private HOME is a returning user's: a ~/.gitconfig, and aider's model-metadata cache
(~/.aider/caches, filled from the table litellm ships) fresh, so aider never reaches for the
network; OPENAI_API_BASE points it at the stand-in, AIDER_MODEL names the model.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.agents.realagent import agent_home, real_agent_skip
from tests.aider.fakeapi import AiderAPI
from tests.helpers import REPO_ROOT, zen

CACHE = REPO_ROOT / ".cache" / "aider"
INSTALL = "bash tests/aider/install.sh"


def installed_aider() -> Path | None:
    if os.environ.get("ZEN_TEST_AIDER_BIN"):
        found = Path(os.environ["ZEN_TEST_AIDER_BIN"])
        return found if found.is_file() and os.access(found, os.X_OK) else None
    b = CACHE / "venv" / "bin" / "aider"
    return b if os.access(b, os.X_OK) and list(CACHE.glob(".installed-*")) else None


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    real_agent_skip(items, Path(__file__).parent, "needs_aider", installed_aider() is not None,
                    f"aider is not installed under {CACHE}: run `{INSTALL}` (needs pip) or `make test-agents`")


@pytest.fixture
def needs_aider() -> Path:
    found = installed_aider()
    if found is None:
        pytest.skip(f"aider is not installed: run `{INSTALL}`")
    return found


@pytest.fixture
def api() -> Iterator[AiderAPI]:
    with AiderAPI() as server:
        yield server  # type: ignore[misc]


@pytest.fixture
def aider_env(needs_aider: Path, api: AiderAPI, isolated_env: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    for var in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("OPENAI_API_BASE", f"{api.url}/v1")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-zen-test")
    monkeypatch.setenv("AIDER_MODEL", "openai/gpt-4o")
    monkeypatch.setenv("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    monkeypatch.setenv("TERM", os.environ.get("TERM") or "xterm-256color")
    (isolated_env / ".gitconfig").write_text("[user]\n\tname = zen test\n\temail = test@zen.invalid\n")
    caches = isolated_env / ".aider" / "caches"
    caches.mkdir(parents=True)
    table = next((needs_aider.parent.parent / "lib").glob("python*/site-packages/litellm/"
                                                          "model_prices_and_context_window_backup.json"))
    shutil.copy(table, caches / "model_prices_and_context_window.json")
    return isolated_env


@pytest.fixture
def aider_home(home: Path, aider_env: Path, needs_aider: Path) -> Path:
    return agent_home(home, "aider", str(needs_aider))


@pytest.fixture
def aider_lane(aider_home: Path, git_repo: Path) -> Path:
    """`git_repo` as lane 'app', which accepts agents without a pre-execution hook."""
    r = zen("lane", "add", "app", str(git_repo), "--unguarded", "accept")
    assert r.returncode == 0, r.stderr
    return git_repo

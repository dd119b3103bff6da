"""Fixtures for running the real Gemini CLI offline against the scripted Gemini API.

The launcher comes from `bash tests/gemini/install.sh` (<repo>/.cache/gemini-cli). When it is not
installed, every test that needs it is skipped with a reason that says how to install it.

The private HOME (tests/conftest.py) gets a `~/.gemini/settings.json` as a returning user has it:
API-key auth chosen, update checks and usage statistics off. GOOGLE_GEMINI_BASE_URL points Gemini
CLI at the stand-in on 127.0.0.1.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.agents.realagent import agent_home, real_agent_skip
from tests.gemini.fakeapi import GeminiAPI
from tests.helpers import REPO_ROOT, make_repo, zen

CACHE = REPO_ROOT / ".cache" / "gemini-cli"
INSTALL = "bash tests/gemini/install.sh"


def installed_gemini() -> Path | None:
    if os.environ.get("ZEN_TEST_GEMINI_BIN"):
        found = Path(os.environ["ZEN_TEST_GEMINI_BIN"])
        return found if found.is_file() and os.access(found, os.X_OK) else None
    b = CACHE / "node_modules" / ".bin" / "gemini"
    return b if os.access(b, os.X_OK) and list(CACHE.glob(".installed-*")) else None


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    real_agent_skip(items, Path(__file__).parent, "needs_gemini", installed_gemini() is not None,
                    f"Gemini CLI is not installed under {CACHE}: run `{INSTALL}` (needs npm) or `make test-agents`")


USER_SETTINGS = {
    "security": {"auth": {"selectedType": "gemini-api-key"}},
    "general": {"disableAutoUpdate": True, "disableUpdateNag": True},
    "privacy": {"usageStatisticsEnabled": False},
    "ui": {"hideTips": True},
}


@pytest.fixture
def needs_gemini() -> Path:
    found = installed_gemini()
    if found is None:
        pytest.skip(f"Gemini CLI is not installed: run `{INSTALL}`")
    return found


@pytest.fixture
def api() -> Iterator[GeminiAPI]:
    with GeminiAPI() as server:
        yield server  # type: ignore[misc]


@pytest.fixture
def gemini_env(needs_gemini: Path, api: GeminiAPI, isolated_env: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Environment for Gemini CLI (and `zen supervise`). Returns the user's settings.json."""
    for var in ("GEMINI_CLI_HOME", "GOOGLE_API_KEY", "GOOGLE_CLOUD_PROJECT", "GOOGLE_GENAI_USE_VERTEXAI",
                "HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy", "GEMINI_CLI_TRUSTED_FOLDERS_PATH"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("GEMINI_API_KEY", "zen-test-key")
    monkeypatch.setenv("GOOGLE_GEMINI_BASE_URL", api.url)
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    monkeypatch.setenv("TERM", os.environ.get("TERM") or "xterm-256color")
    path = isolated_env / ".gemini" / "settings.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("// my Gemini CLI settings\n" + json.dumps(USER_SETTINGS, indent=2) + "\n")
    return path


@pytest.fixture
def gemini_home(home: Path, gemini_env: Path, needs_gemini: Path) -> Path:
    return agent_home(home, "gemini", str(needs_gemini))


@pytest.fixture
def gemini_lane(gemini_home: Path, git_repo: Path) -> Path:
    r = zen("lane", "add", "app", str(git_repo))
    assert r.returncode == 0, r.stderr
    r = zen("lane", "trust", "app", "--agent", "gemini")
    assert r.returncode == 0, r.stderr
    return git_repo


@pytest.fixture
def untrusted_repo(tmp_path: Path) -> Path:
    return make_repo(tmp_path / "fresh")

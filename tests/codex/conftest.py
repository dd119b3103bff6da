"""Fixtures for running the real Codex CLI offline against the scripted Responses API.

The binary comes from `bash tests/codex/install.sh` (<repo>/.cache/codex). When it is not
installed, every test that needs it is skipped with a reason that says how to install it.

The private HOME (tests/conftest.py) gets a `~/.codex/config.toml` as a returning user has it: a
model provider pointing at the stand-in on 127.0.0.1 (the user's own setup, which zen must leave
alone), the update check off, and (for the `codex_lane` fixture) the lane trusted.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.agents.realagent import agent_home, real_agent_skip
from tests.codex.fakeapi import CodexAPI
from tests.helpers import REPO_ROOT, make_repo, zen

CACHE = REPO_ROOT / ".cache" / "codex"
INSTALL = "bash tests/codex/install.sh"
API_KEY_VAR = "ZEN_TEST_CODEX_KEY"


def installed_codex() -> Path | None:
    """ZEN_TEST_CODEX_BIN, else the native binary the install script put under .cache/codex."""
    if os.environ.get("ZEN_TEST_CODEX_BIN"):
        found = Path(os.environ["ZEN_TEST_CODEX_BIN"])
        return found if found.is_file() and os.access(found, os.X_OK) else None
    for b in sorted(CACHE.glob("node_modules/@openai/codex-linux-*/vendor/*/bin/codex")):
        if os.access(b, os.X_OK) and list(CACHE.glob(".installed-*")):
            return b
    return None


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    real_agent_skip(items, Path(__file__).parent, "needs_codex", installed_codex() is not None,
                    f"Codex CLI is not installed under {CACHE}: run `{INSTALL}` (needs npm) or `make test-agents`")


def write_codex_config(home_dir: Path, api_url: str, trusted: list[Path] = ()) -> Path:  # type: ignore[assignment]
    """~/.codex/config.toml as a returning user has it, pointing at the stand-in."""
    path = home_dir / ".codex" / "config.toml"
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = [
        'model = "gpt-5-codex"',
        'model_provider = "zentest"',
        "check_for_update_on_startup = false",
        "",
        "[model_providers.zentest]",
        'name = "zen test stand-in"',
        f'base_url = "{api_url}/v1"',
        f'env_key = "{API_KEY_VAR}"',
        'wire_api = "responses"',
        "supports_websockets = false",
        "request_max_retries = 0",
        "stream_max_retries = 0",
        "",
        "[tui]",
        "screen_reader_detection_done = true",
        "",
    ]
    for repo in trusted:
        lines += [f'[projects."{Path(repo).resolve()}"]', 'trust_level = "trusted"', ""]
    path.write_text("\n".join(lines))
    return path


@pytest.fixture
def needs_codex() -> Path:
    found = installed_codex()
    if found is None:
        pytest.skip(f"Codex CLI is not installed: run `{INSTALL}`")
    return found


@pytest.fixture
def api() -> Iterator[CodexAPI]:
    """The scripted Responses API on a free loopback port; set `api.script` before Codex starts."""
    with CodexAPI() as server:
        yield server  # type: ignore[misc]


@pytest.fixture
def codex_env(needs_codex: Path, api: CodexAPI, isolated_env: Path,
              monkeypatch: pytest.MonkeyPatch) -> Path:
    """Environment for Codex (and for `zen supervise`, whose agents inherit it). Returns the
    user's config.toml."""
    for var in ("CODEX_HOME", "OPENAI_API_KEY", "OPENAI_BASE_URL", "CODEX_API_KEY", "HTTP_PROXY",
                "HTTPS_PROXY", "http_proxy", "https_proxy"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv(API_KEY_VAR, "sk-zen-test")
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    monkeypatch.setenv("TERM", os.environ.get("TERM") or "xterm-256color")
    return write_codex_config(isolated_env, api.url)


@pytest.fixture
def codex_home(home: Path, codex_env: Path, needs_codex: Path) -> Path:
    """A zen home whose zen.yaml runs the installed Codex for `--agent codex`."""
    return agent_home(home, "codex", str(needs_codex))


@pytest.fixture
def codex_lane(codex_home: Path, git_repo: Path) -> Path:
    """`git_repo` registered as lane 'app' and trusted (by `zen lane trust`). Returns the repo."""
    r = zen("lane", "add", "app", str(git_repo))
    assert r.returncode == 0, r.stderr
    r = zen("lane", "trust", "app", "--agent", "codex")
    assert r.returncode == 0, r.stderr
    return git_repo


@pytest.fixture
def untrusted_repo(tmp_path: Path) -> Path:
    return make_repo(tmp_path / "fresh")


def run_codex_exec(binary: Path, prompt: str, cwd: Path, *extra: str,
                   timeout: float = 90) -> subprocess.CompletedProcess[str]:
    argv = [str(binary), "exec", "--json", "--sandbox", "workspace-write", *extra, prompt]
    return subprocess.run(argv, cwd=cwd, capture_output=True, text=True, timeout=timeout,
                          stdin=subprocess.DEVNULL)

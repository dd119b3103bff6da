"""Fixtures for running the real Claude Code offline against the scripted API stand-in.

The binary comes from `bash tests/claude/install.sh` (<repo>/.cache/claude-code). When it is not
installed, every test that needs it is skipped with a reason that says how to install it, so
`make test` stays green on a machine where npm cannot reach the registry.

The private HOME (tests/conftest.py) gets a `~/.claude.json` as a returning user has it:
onboarding done, a theme, the API key approved, and (for the `lane` fixture) the lane trusted.
"""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.claude.fakeapi import FakeAPI
from tests.helpers import REPO_ROOT, make_repo, zen

CACHE = REPO_ROOT / ".cache" / "claude-code"
# ZEN_TEST_CLAUDE_BIN runs the suite against another Claude Code binary (or, pointed at nothing,
# shows what the suite does where it is not installed)
CLAUDE_BIN = Path(os.environ.get("ZEN_TEST_CLAUDE_BIN") or
                  CACHE / "node_modules" / "@anthropic-ai" / "claude-code" / "bin" / "claude.exe")
API_KEY = "sk-ant-api03-zen-test-key-0123456789-ABCDEFGHIJKLMNOPQRST"


def installed_claude() -> Path | None:
    if CLAUDE_BIN.is_file() and os.access(CLAUDE_BIN, os.X_OK):
        return CLAUDE_BIN
    return None


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if installed_claude() is not None:
        return
    skip = pytest.mark.skip(reason=f"Claude Code is not installed at {CLAUDE_BIN}: run "
                                   "`bash tests/claude/install.sh` (needs npm) or `make test-claude`")
    here = Path(__file__).parent
    for item in items:
        if here in Path(str(item.fspath)).parents and "needs_claude" in item.fixturenames:
            item.add_marker(skip)


def write_claude_json(home_dir: Path, trusted: list[Path] = (), **extra: Any) -> Path:  # type: ignore[assignment]
    """~/.claude.json as a returning user has it; `trusted` repos get hasTrustDialogAccepted."""
    path = home_dir / ".claude.json"
    data: dict[str, Any] = json.loads(path.read_text()) if path.exists() else {}
    data.update({
        "hasCompletedOnboarding": True,
        "theme": "dark",
        "customApiKeyResponses": {"approved": [API_KEY[-20:]], "rejected": []},
        "bypassPermissionsModeAccepted": False,
    })
    projects = data.setdefault("projects", {})
    for repo in trusted:
        projects.setdefault(str(Path(repo).resolve()), {})["hasTrustDialogAccepted"] = True
    data.update(extra)
    path.write_text(json.dumps(data, indent=2) + "\n")
    return path


@pytest.fixture
def needs_claude() -> Path:
    """The installed Claude Code binary (tests using it are skipped when it is missing)."""
    found = installed_claude()
    if found is None:
        pytest.skip("Claude Code is not installed: run `bash tests/claude/install.sh`")
    return found


@pytest.fixture
def api() -> Iterator[FakeAPI]:
    """The scripted API on a free loopback port; set `api.script` before Claude Code starts."""
    with FakeAPI() as server:
        yield server


@pytest.fixture
def claude_env(needs_claude: Path, api: FakeAPI, isolated_env: Path,
               monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """Environment for Claude Code (and for `zen supervise`, whose agents inherit it)."""
    env = {
        "ANTHROPIC_BASE_URL": api.url,
        "ANTHROPIC_API_KEY": API_KEY,
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        "DISABLE_AUTOUPDATER": "1",
        "DISABLE_ERROR_REPORTING": "1",
        "DISABLE_TELEMETRY": "1",
        "NO_PROXY": "127.0.0.1,localhost",
    }
    for var in ("ANTHROPIC_AUTH_TOKEN", "CLAUDE_CONFIG_DIR", "CLAUDE_CODE_USE_BEDROCK",
                "CLAUDE_CODE_USE_VERTEX", "HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy",
                "ANTHROPIC_MODEL"):
        monkeypatch.delenv(var, raising=False)
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    monkeypatch.setenv("TERM", os.environ.get("TERM") or "xterm-256color")
    write_claude_json(isolated_env)
    return env


@pytest.fixture
def claude_home(home: Path, claude_env: dict[str, str], needs_claude: Path) -> Path:
    """A zen home whose zen.yaml runs the installed Claude Code for `--agent claude`."""
    from ruamel.yaml import YAML

    y = YAML()
    cfg_path = home / "zen.yaml"
    data = y.load(cfg_path.read_text())
    agents = data.setdefault("agents", {})
    claude = agents.get("claude") or {}
    claude["command"] = str(needs_claude)
    agents["claude"] = claude
    data.setdefault("supervisor", {})["idle_after"] = "2s"
    with cfg_path.open("w") as f:
        y.dump(data, f)
    return home


@pytest.fixture
def claude_lane(claude_home: Path, git_repo: Path, isolated_env: Path) -> Path:
    """`git_repo` registered as lane 'app' and trusted by Claude Code. Returns the repo path."""
    write_claude_json(isolated_env, trusted=[git_repo])
    r = zen("lane", "add", "app", str(git_repo))
    assert r.returncode == 0, r.stderr
    return git_repo


@pytest.fixture
def untrusted_repo(tmp_path: Path) -> Path:
    return make_repo(tmp_path / "fresh")


def run_claude_print(binary: Path, prompt: str, settings: Path, cwd: Path,
                     timeout: float = 120, extra: list[str] | None = None) -> subprocess.CompletedProcess[str]:
    """`claude -p PROMPT --settings FILE` with stream-json output; the environment is the test's."""
    argv = [str(binary), "-p", prompt, "--settings", str(settings), "--output-format", "stream-json",
            "--verbose", *(extra or [])]
    return subprocess.run(argv, cwd=cwd, capture_output=True, text=True, timeout=timeout,
                          stdin=subprocess.DEVNULL)

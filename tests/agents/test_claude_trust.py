"""Claude Code's workspace trust: `zen lane add` says when a lane is not trusted, `zen lane trust`
records it in ~/.claude.json (the test's private $HOME) and keeps everything else in that file."""

from __future__ import annotations

import json
import os
from pathlib import Path

from tests.helpers import make_repo, zen
from zen.agents.claude_trust import is_trusted, trust, trust_note


def test_lane_add_says_how_to_trust_and_lane_trust_fixes_it(home: Path, git_repo: Path,
                                                            isolated_env: Path) -> None:
    r = zen("lane", "add", "app", str(git_repo))
    assert r.returncode == 0, r.stderr
    assert "Claude Code, Codex, Gemini CLI do not trust" in r.stderr and "zen lane trust app" in r.stderr

    claude_json = isolated_env / ".claude.json"
    claude_json.write_text(json.dumps({"hasCompletedOnboarding": True, "theme": "dark",
                                       "projects": {"/elsewhere": {"allowedTools": ["Bash"]}}}))
    os.chmod(claude_json, 0o600)
    r = zen("lane", "trust", "app")
    assert r.returncode == 0, r.stderr
    assert "now trusts" in r.stdout
    data = json.loads(claude_json.read_text())
    assert data["projects"][str(git_repo.resolve())] == {"hasTrustDialogAccepted": True}
    assert data["hasCompletedOnboarding"] is True and data["theme"] == "dark"
    assert data["projects"]["/elsewhere"] == {"allowedTools": ["Bash"]}
    assert claude_json.stat().st_mode & 0o777 == 0o600  # it holds the user's account data

    assert "already trusts" in zen("lane", "trust", "app").stdout
    # a second lane on the same repository is trusted already: no note
    r = zen("lane", "add", "app2", str(git_repo))
    assert r.returncode == 0 and "not trust" not in r.stderr
    # each agent's file has it: Codex's config.toml too
    assert 'trust_level = "trusted"' in (isolated_env / ".codex" / "config.toml").read_text()


def test_trust_creates_the_file_and_keeps_a_projects_entry(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "r")
    home_dir = tmp_path / "h"
    home_dir.mkdir()
    assert not is_trusted(repo, home_dir)
    assert trust_note(repo, "r", home_dir) is not None
    assert trust(repo, home_dir) is True
    assert is_trusted(repo, home_dir) and trust_note(repo, "r", home_dir) is None
    assert trust(repo, home_dir) is False


def test_unknown_lane_is_a_clear_error(home: Path) -> None:
    r = zen("lane", "trust", "nope")
    assert r.returncode == 1 and "no lane named 'nope'" in r.stderr

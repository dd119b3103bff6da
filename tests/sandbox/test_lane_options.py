"""`zen lane add --sandbox on|off --network HOST`: what a lane says about its agents' wall."""

from __future__ import annotations

from pathlib import Path

from ruamel.yaml import YAML

from tests.helpers import one_line, zen


def _lanes(home: Path) -> dict:
    return dict(YAML(typ="safe").load((home / "zen.yaml").read_text())["lanes"])


def test_a_lane_can_turn_the_wall_off_and_is_told_what_that_costs(home: Path, git_repo: Path) -> None:
    r = zen("lane", "add", "open", str(git_repo), "--sandbox", "off")
    assert r.returncode == 0, r.stderr
    assert "without an OS sandbox" in r.stderr and "unguarded" in r.stderr
    assert _lanes(home)["open"]["sandbox"] == "off"


def test_a_lane_names_the_hosts_its_agents_may_reach(home: Path, git_repo: Path) -> None:
    r = zen("lane", "add", "net", str(git_repo), "--network", "pypi.org", "--network", "127.0.0.1:8080")
    assert r.returncode == 0, r.stderr
    assert _lanes(home)["net"]["network"] == ["pypi.org", "127.0.0.1:8080"]
    assert "sandbox" not in _lanes(home)["net"]          # the wall stays on: the default


def test_a_wall_that_is_neither_on_nor_off_is_a_usage_error(home: Path, git_repo: Path) -> None:
    r = zen("lane", "add", "odd", str(git_repo), "--sandbox", "maybe")
    assert r.returncode == 2 and one_line(r.stderr) and "on or off" in r.stderr
    assert "odd" not in (home / "zen.yaml").read_text()


def test_a_claude_job_whose_sandbox_cannot_start_fails_its_preflight(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    from zen.agents import wall

    assert wall.spawn_check("claude", "app", {"sandbox": "off"}) is None       # no wall: nothing to check
    assert wall.spawn_check("codex", "app", {}) is None                        # Codex brings its own
    if wall.works()[0] and wall.forwards_work()[0]:
        assert wall.spawn_check("claude", "app", {})[0] == "PASS"  # type: ignore[index]
    monkeypatch.setattr(wall, "works", lambda: (False, "bubblewrap is not installed (apt-get install bubblewrap)"))
    status, say = wall.spawn_check("claude", "app", {})  # type: ignore[misc]
    assert status == "FAIL" and "cannot start here: bubblewrap is not installed" in say and one_line(say)

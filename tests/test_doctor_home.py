"""zen doctor checks the home and this machine too (issues 32 and 33): every missing piece of a home
named with the command that restores it, a home others can read or enter warned of with its chmod,
and each tool zen needs found or said how to install, on Debian/Ubuntu and on macOS."""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path

from tests.helpers import zen
from zen.orchestration.home.tools import check_tools


def test_doctor_names_every_missing_piece_and_the_command_that_restores_it(home: Path) -> None:
    r = zen("doctor")
    assert r.returncode == 0, r.stdout + r.stderr
    assert f"home: {home} is complete and private to you" in r.stdout

    (home / "policy" / "autonomy.yaml").unlink()
    (home / "policy" / "guardian.yaml").unlink()
    shutil.rmtree(home / "control")
    seed = sorted((home / "incidents").glob("*.yaml"))[0]
    seed.unlink()
    r = zen("doctor", "--json")
    assert r.returncode == 1, r.stdout
    found = {f["check"]: f for f in json.loads(r.stdout)["home"]}
    restore = f"zen init {home}"
    for piece in ("policy/autonomy.yaml", "policy/guardian.yaml", "control/"):
        assert found[f"home: {piece}"]["status"] == "fault", found
        assert found[f"home: {piece}"]["fix"] == restore
    # a seed incident is an example: its absence is said, but it breaks nothing
    assert found[f"home: incidents/{seed.name}"]["status"] == "warn"
    text = zen("doctor").stdout
    assert f"policy/autonomy.yaml is missing from the home; fix: {restore}" in text, text
    # and the preflight every job passes says how to restore it, not only that it is missing
    checks = {c["check"]: c for c in json.loads(zen("preflight", "--json").stdout)["checks"]}
    assert checks["autonomy policy"]["status"] == "FAIL"
    assert f"is missing ({restore} restores the default" in checks["autonomy policy"]["message"], checks

    # the command named restores them all, and doctor is satisfied again
    assert zen("init", str(home)).returncode == 0
    r = zen("doctor")
    assert r.returncode == 0 and "complete and private" in r.stdout, r.stdout


def test_doctor_warns_of_a_home_other_users_can_read_or_enter(home: Path) -> None:
    os.chmod(home, 0o711)                        # traversable by others
    os.chmod(home / "logs", 0o755)               # readable by others
    r = zen("doctor", "--json")
    assert r.returncode == 0, r.stdout           # a warning: nothing is broken
    warned = {f["check"]: f for f in json.loads(r.stdout)["home"] if f["status"] == "warn"}
    assert warned["home: privacy of ."]["fix"] == f"chmod 700 {home}"
    assert "(mode 0711)" in warned["home: privacy of ."]["message"]
    assert warned["home: privacy of logs"]["fix"] == f"chmod 700 {home / 'logs'}"
    assert "home: privacy of control" not in warned and "home: privacy of jobs" not in warned
    text = zen("doctor").stdout
    assert f"other users can read or enter logs/ {home / 'logs'} (mode 0755); fix: chmod 700 {home / 'logs'}" in text
    os.chmod(home, 0o700)
    os.chmod(home / "logs", 0o700)
    assert "warning" not in zen("doctor").stdout


def test_doctor_says_how_to_install_each_missing_tool(home: Path, tmp_path: Path) -> None:
    bin_dir = tmp_path / "bin"                   # a PATH with git alone
    bin_dir.mkdir()
    os.symlink(shutil.which("git") or "/usr/bin/git", bin_dir / "git")
    r = zen("doctor", "--json", env={"PATH": str(bin_dir)})
    assert r.returncode == 1, r.stdout
    tools = {f["check"]: f for f in json.loads(r.stdout)["tools"]}
    assert tools["git"]["status"] == "ok" and str(bin_dir / "git") in tools["git"]["message"]
    if sys.platform.startswith("linux"):
        assert tools["tmux"] == {"check": "tmux", "status": "fault", "fix": "sudo apt-get install tmux",
                                 "where": "Debian/Ubuntu",
                                 "message": "tmux is not installed: every agent runs in a tmux session"}
        assert tools["bubblewrap"]["fix"] == "sudo apt-get install bubblewrap"
        assert tools["socat"]["fix"] == "sudo apt-get install socat"
        assert "Claude Code's native sandbox" in tools["socat"]["message"]
        # the browser serves the web tests only: a warning, not a fault
        assert tools["chromium"]["status"] == "warn"
        assert tools["chromium"]["fix"] == "sudo apt-get install chromium chromium-driver"
    text = zen("doctor", env={"PATH": str(bin_dir)}).stdout
    assert "tools: git ok\n" in text and "tmux is not installed" in text, text


def test_on_macos_the_hints_are_homebrews_and_the_linux_only_tools_are_not_asked_for() -> None:
    got = {f.check: f for f in check_tools("darwin", which=lambda name: None)}
    assert (got["git"].fix, got["git"].where) == ("brew install git", "macOS")
    assert (got["tmux"].fix, got["tmux"].status) == ("brew install tmux", "fault")
    assert got["chromium"].fix == "brew install --cask chromium chromedriver"
    for linux_only in ("bubblewrap", "socat"):
        assert got[linux_only].status == "ok" and "not needed on macOS" in got[linux_only].message
    on_linux = {f.check: f for f in check_tools("linux", which=lambda name: None)}
    assert on_linux["bubblewrap"].status == "fault" and on_linux["socat"].status == "fault"


def test_doctor_with_no_home_still_checks_the_machine(tmp_path: Path) -> None:
    r = zen("doctor", cwd=tmp_path)
    assert r.returncode == 1 and "Traceback" not in r.stderr
    assert "no zen home here or above (run zen init DIR" in r.stdout
    assert "tools: git, tmux" in r.stdout, r.stdout

"""zen's defaults ship inside its package (issue 33): the default policy and the seed incidents are
package data, equal to the repository's top-level policy/ and incidents/; `zen init` fills a home
from them, makes it private to the user (issue 32 item 4), and refuses to finish one it could not
fill (a broken install)."""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
import zlib
from importlib.metadata import version
from pathlib import Path

from tests.helpers import REPO_ROOT, zen
from zen.store import defaults

SOURCES = {"policy": ("guardian.yaml", "autonomy.yaml"),
           "incidents": tuple(sorted(p.name for p in (REPO_ROOT / "incidents").glob("*.yaml")))}


def test_the_package_ships_the_top_level_policy_and_incidents_byte_for_byte() -> None:
    assert len(SOURCES["incidents"]) == 3, SOURCES   # the seed's three incidents
    shipped = defaults.home_files()
    expected = {f"{folder}/{name}": (REPO_ROOT / folder / name).read_bytes()
                for folder, names in SOURCES.items() for name in names}
    assert shipped == expected
    # package data, not the checkout's top level: what a wheel carries is what zen reads
    for folder in SOURCES:
        assert (REPO_ROOT / "zen" / "data" / folder).resolve() == (REPO_ROOT / folder).resolve()


def test_zen_init_fills_the_home_from_the_shipped_defaults(tmp_path: Path) -> None:
    root = tmp_path / "zh"
    r = zen("init", str(root))
    assert r.returncode == 0, r.stderr
    for rel, data in defaults.home_files().items():
        assert (root / rel).read_bytes() == data, rel
    r = zen("preflight", "--json", env={"ZEN_HOME": str(root)})
    checks = {c["check"]: c for c in json.loads(r.stdout)["checks"]}
    for name in ("guardian policy", "autonomy policy", "incidents"):
        assert checks[name]["status"] == "PASS", checks[name]
    assert checks["incidents"]["message"].startswith("3 incident record(s) valid"), checks["incidents"]


def _broken_install(tmp_path: Path, missing: str) -> Path:
    """A copy of zen's package (no checkout around it) whose data lacks `missing`."""
    site = tmp_path / "site"
    shutil.copytree(REPO_ROOT / "zen", site / "zen", symlinks=False,
                    ignore=shutil.ignore_patterns("__pycache__"))
    (site / "zen" / "data" / missing).unlink()
    return site


def test_zen_init_refuses_to_finish_a_home_it_cannot_fill(tmp_path: Path) -> None:
    site = _broken_install(tmp_path, "policy/autonomy.yaml")
    root = tmp_path / "zh"
    r = subprocess.run([sys.executable, "-m", "zen", "init", str(root)], capture_output=True, text=True,
                       cwd=tmp_path, env={**os.environ, "PYTHONPATH": str(site)}, timeout=60)
    assert r.returncode == 1, (r.stdout, r.stderr)
    assert r.stderr.count("\n") == 1 and "Traceback" not in r.stderr, r.stderr
    assert "policy/autonomy.yaml" in r.stderr and "reinstall zen" in r.stderr, r.stderr
    assert not root.exists(), "a broken install made half a home"


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_zen_init_makes_the_home_and_its_records_private(tmp_path: Path) -> None:
    root = tmp_path / "zh"
    root.mkdir(mode=0o755)
    os.chmod(root, 0o755)                       # an existing folder others can enter
    r = zen("init", str(root))
    assert r.returncode == 0, r.stderr
    for rel in ("", "control", "logs", "jobs"):
        assert _mode(root / rel) == 0o700, (rel, oct(_mode(root / rel)))
    assert "made private to you" in r.stdout and "chmod 700" in r.stdout
    # again on a home someone opened up: tightened, and said
    os.chmod(root / "control", 0o755)
    os.chmod(root / "logs", 0o750)
    r = zen("init", str(root))
    assert r.returncode == 0, r.stderr
    assert _mode(root / "control") == 0o700 and _mode(root / "logs") == 0o700
    assert "control, logs" in r.stdout, r.stdout
    r = zen("init", str(root))
    assert "made private" not in r.stdout and "nothing changed" in r.stdout, r.stdout


def test_zen_version_names_the_package_and_the_policy_it_ships() -> None:
    r = zen("--version")
    assert r.returncode == 0, r.stderr
    crc = 0
    for name in SOURCES["policy"]:
        data = (REPO_ROOT / "policy" / name).read_bytes()
        assert b"\nzen: 1\n" in data, name
        crc = zlib.crc32(name.encode() + b"\0" + data + b"\0", crc)
    assert r.stdout == f"zen {version('zen-supervisor')} (default policy: schema 1, crc32 {crc:08x})\n"


def test_zen_demo_is_a_command_and_make_demo_runs_it() -> None:
    r = zen("demo", "--help")
    assert r.returncode == 0 and "three simulated agents" in r.stdout, r.stderr
    makefile = (REPO_ROOT / "Makefile").read_text()
    assert "demo: $(PY)\n\t$(BIN)/zen demo\n" in makefile


def test_shell_completion_is_typers_and_completes_commands_and_options(tmp_path: Path) -> None:
    # typer finds the shell from the parent processes (a bash in a terminal); CI runs under sh with
    # no $SHELL, so the shell is named, as typer's own tests name it
    named = {"_TYPER_COMPLETE_TEST_DISABLE_SHELL_DETECTION": "1"}
    r = zen("--show-completion", "bash", env=named)
    assert r.returncode == 0 and "_zen_completion()" in r.stdout and "_ZEN_COMPLETE=complete_bash" in r.stdout, r.stdout
    asked = {"_ZEN_COMPLETE": "complete_bash", "COMP_WORDS": "zen d", "COMP_CWORD": "1"}
    words = zen(env=asked).stdout.split()
    assert {"demo", "doctor", "dispatch", "deny"} <= set(words), words
    words = zen(env={**asked, "COMP_WORDS": "zen doctor --re", "COMP_CWORD": "2"}).stdout.split()
    assert words == ["--rebuild"], words
    r = zen("--install-completion", "bash", env={**named, "HOME": str(tmp_path), "SHELL": "/bin/bash"})
    assert r.returncode == 0 and "bash completion installed" in r.stdout, r.stdout + r.stderr
    assert "zen.sh" in (tmp_path / ".bashrc").read_text()
    assert "--install-completion" in zen("--help").stdout

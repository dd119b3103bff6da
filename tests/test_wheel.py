"""zen installed as Python CLIs are installed (issue 33): a wheel built from the checkout, installed
into a fresh venv, runs `zen init`, a job to harvested and `zen demo` from a directory far from any
checkout, with nothing of the checkout on its path.

The wheel is built once per session from a copy of the checkout's files (tracked or new, not ignored). The fresh venv gets the wheel
alone (`pip install --no-deps`) and finds zen's dependencies in this venv's site-packages through a
plain path line (no .pth of that folder is run, so this venv's editable zen is not installed there).
With ZEN_TEST_WHEEL_DEPS=registry (as CI runs it) the wheel is installed with its dependencies from
the package registry instead, the way pipx installs it.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import shutil
import subprocess
import sys
import sysconfig
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.helpers import REPO_ROOT, make_repo, wait_until

pytestmark = pytest.mark.slow

FULL_INSTALL = os.environ.get("ZEN_TEST_WHEEL_DEPS") == "registry"


def _run(argv: list[str], **kw: object) -> subprocess.CompletedProcess[str]:
    r = subprocess.run(argv, capture_output=True, text=True, check=False, **kw)  # type: ignore[call-overload]
    assert r.returncode == 0, f"{argv}: {r.stdout}\n{r.stderr}"
    return r  # type: ignore[no-any-return]


def _tracked_copy(dst: Path) -> Path:
    """The checkout's files as they are now, tracked and new but not ignored (symlinks kept as
    links): no build output, caches or venv of the checkout go into the wheel."""
    names = _run(["git", "-C", str(REPO_ROOT), "ls-files", "-z", "--cached", "--others",
                  "--exclude-standard"]).stdout.split("\0")
    for name in filter(None, names):
        src, out = REPO_ROOT / name, dst / name
        if not src.exists() and not src.is_symlink():
            continue                               # deleted in the work tree, not yet committed
        out.parent.mkdir(parents=True, exist_ok=True)
        if src.is_symlink():
            os.symlink(os.readlink(src), out)
        else:
            shutil.copy2(src, out)
    return dst


@contextlib.contextmanager
def _shared(tmp_path_factory: pytest.TempPathFactory, name: str) -> Iterator[Path]:
    """A folder all of this run's xdist workers share, made by the first one under a lock: one
    wheel and one venv per run, however many workers ask."""
    base = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        base = base.parent
    with (base / f"{name}.lock").open("a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield base / name


@pytest.fixture(scope="session")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    with _shared(tmp_path_factory, "zen-wheel") as root:
        if not (root / "dist").is_dir():
            src = _tracked_copy(root / "src")
            _run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(root / "build"), str(src)],
                 cwd=root, timeout=300)
            (root / "build").rename(root / "dist")
        [built] = (root / "dist").glob("zen_supervisor-*.whl")
    return built


@pytest.fixture(scope="session")
def venv(wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh venv (of the base interpreter, not this venv) holding the installed wheel."""
    with _shared(tmp_path_factory, "zen-venv") as where:
        if not (where / "ready").exists():
            shutil.rmtree(where, ignore_errors=True)
            _install(wheel, where)
            (where / "ready").touch()
    return where


def _install(wheel: Path, where: Path) -> None:
    base = getattr(sys, "_base_executable", sys.executable)
    _run([base, "-m", "venv", "--without-pip", str(where)], timeout=120)
    py = where / "bin" / "python"
    pip = [sys.executable, "-m", "pip", "--python", str(py), "install", "-q", "--disable-pip-version-check"]
    if FULL_INSTALL:
        _run([*pip, str(wheel)], timeout=900)
    else:
        _run([*pip, "--no-deps", "--no-index", str(wheel)], timeout=120)
        site = Path(_run([str(py), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"]).stdout.strip())
        ours = dict.fromkeys([sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]])
        (site / "zen-test-deps.pth").write_text("".join(f"{p}\n" for p in ours))


@pytest.fixture
def installed(venv: Path, tmp_path: Path) -> Iterator[dict[str, str]]:
    """The environment of a user who installed the wheel: its bin first on PATH, no PYTHONPATH."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "ZEN_HOME", "VIRTUAL_ENV")}
    env["PATH"] = f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}"
    yield env


def zen_of(env: dict[str, str], cwd: Path, *args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["zen", *args], capture_output=True, text=True, env=env, cwd=cwd, timeout=timeout,
                          check=False)


@pytest.fixture(scope="session")
def built_from(wheel: Path) -> Path:
    """The copy of the checkout the wheel was built from (the checkout itself may have moved on
    since: other work goes on in it while the suite runs)."""
    return wheel.parent.parent / "src"


def test_the_installed_zen_is_the_wheels_with_nothing_of_the_checkout_on_its_path(
        installed: dict[str, str], venv: Path, built_from: Path, tmp_path: Path) -> None:
    probe = ("import json, sys, zen, zen.store.home, zen.store.defaults as d; "
             "print(json.dumps({'zen': zen.__file__, 'path': sys.path, 'files': sorted(d.home_files())}))")
    r = _run([str(venv / "bin" / "python"), "-c", probe], env=installed, cwd=tmp_path)
    got = json.loads(r.stdout)
    assert Path(got["zen"]).is_relative_to(venv), got["zen"]
    checkout = [p for p in got["path"] if p and Path(p).resolve() in (REPO_ROOT, REPO_ROOT / "zen")]
    assert not checkout, checkout
    seeds = [f"incidents/{p.name}" for p in (built_from / "incidents").glob("*.yaml")]
    assert got["files"] == sorted(["policy/guardian.yaml", "policy/autonomy.yaml", *seeds]) and len(seeds) == 3
    # the wheel holds the files themselves, equal to the top-level sources
    data = Path(got["zen"]).parent / "data"
    for rel in got["files"]:
        path = data / rel
        assert not path.is_symlink() and path.read_bytes() == (built_from / rel).read_bytes(), rel
    version = zen_of(installed, tmp_path, "--version")
    assert version.returncode == 0 and version.stdout.startswith("zen 0.") and "default policy: schema 1" in version.stdout


def test_a_wheel_makes_a_working_home_and_runs_a_job_to_harvested(installed: dict[str, str],
                                                                   built_from: Path, tmp_path: Path) -> None:
    home = tmp_path / "zh"
    r = zen_of(installed, tmp_path, "init", str(home))
    assert r.returncode == 0, r.stderr
    for rel in ("policy/guardian.yaml", "policy/autonomy.yaml"):
        assert (home / rel).read_bytes() == (built_from / rel).read_bytes(), rel
    assert len(list((home / "incidents").glob("*.yaml"))) == 3
    env = {**installed, "ZEN_HOME": str(home)}
    doctor = zen_of(env, tmp_path, "doctor")
    assert doctor.returncode == 0 and "complete and private to you" in doctor.stdout, doctor.stdout

    repo = make_repo(tmp_path / "repo")
    assert zen_of(env, tmp_path, "lane", "add", "app", str(repo)).returncode == 0
    task = tmp_path / "task.yaml"
    task.write_text(json.dumps({"name": "from-the-wheel", "prompt": "Add a note.", "agent": "sim", "script": [
        {"write": {"path": "NOTE.md", "content": "made by an installed zen\n"}},
        {"commit": "Add a note"}, {"exit": 0}]}))
    job = zen_of(env, tmp_path, "dispatch", "--file", str(task))
    assert job.returncode == 0, job.stderr
    job_id = job.stdout.strip()
    started = zen_of(env, tmp_path, "supervise", "--detach")
    assert started.returncode == 0, started.stderr
    try:
        def state() -> str:
            r = zen_of(env, tmp_path, "show", job_id, "--json")
            s: str = json.loads(r.stdout)["state"]["state"]
            assert s not in ("failed", "cancelled"), zen_of(env, tmp_path, "log", job_id).stdout
            return s if s == "harvested" else ""
        wait_until(state, timeout=120, interval=0.5, message=f"{job_id} harvested by the installed zen")
    finally:
        zen_of(env, tmp_path, "supervise", "--stop")
    show = json.loads(zen_of(env, tmp_path, "show", job_id, "--json").stdout)
    branch = show["state"]["review_branch"]
    note = subprocess.run(["git", "-C", str(repo), "show", f"{branch}:NOTE.md"], capture_output=True, text=True)
    assert note.stdout == "made by an installed zen\n", note.stderr


def test_zen_demo_runs_from_any_directory_with_no_checkout(installed: dict[str, str], tmp_path: Path) -> None:
    far = tmp_path / "elsewhere"
    far.mkdir()
    started = time.monotonic()
    r = zen_of(installed, far, "demo", timeout=180)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr
    assert "zen demo: three simulated coding agents" in r.stdout
    assert "guardian DENIED" in r.stdout and "zen demo FAILED" not in r.stdout
    assert time.monotonic() - started < 180

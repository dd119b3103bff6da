"""Shared benchmark helpers: every figure is a ratio to a baseline measured in the same run
(these machines are noisy), medians over repeated runs, and temp homes that never touch $HOME."""

from __future__ import annotations

import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PY = sys.executable


def wall(argv: list[str], *, env: dict[str, str] | None = None, stdin: bytes | None = None,
         cwd: Path | None = None) -> float:
    t0 = time.perf_counter()
    subprocess.run(argv, input=stdin, env=env, cwd=cwd, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL, check=False)
    return time.perf_counter() - t0


def interleaved(a: Callable[[], float], b: Callable[[], float], runs: int) -> tuple[list[float], list[float]]:
    """Alternate two measurements so drift in machine load hits both alike."""
    xs, ys = [], []
    for _ in range(runs):
        xs.append(a())
        ys.append(b())
    return xs, ys


def p50(xs: list[float]) -> float:
    return statistics.median(xs)


def p95(xs: list[float]) -> float:
    s = sorted(xs)
    return s[min(len(s) - 1, round(0.95 * (len(s) - 1)))]


def row(figure: str, value: float, unit: str, target: str, ok: bool, note: str = "") -> dict:
    return {"figure": figure, "value": round(value, 4), "unit": unit, "target": target, "pass": bool(ok),
            "note": note}


@contextmanager
def bench_env() -> Iterator[dict[str, str]]:
    """A private $HOME, git identity and tmux socket dir for the benchmark's processes."""
    tmp = tempfile.mkdtemp(prefix="zb")
    try:
        home = Path(tmp) / "userhome"
        home.mkdir()
        env = {**os.environ, "HOME": str(home), "TMUX_TMPDIR": tmp, "GIT_CONFIG_NOSYSTEM": "1",
               "GIT_AUTHOR_NAME": "zen bench", "GIT_AUTHOR_EMAIL": "bench@zen.invalid",
               "GIT_COMMITTER_NAME": "zen bench", "GIT_COMMITTER_EMAIL": "bench@zen.invalid"}
        for var in ("ZEN_HOME", "ZEN_JOB_ID", "ZEN_WORKTREE", "TMUX", "TMUX_PANE"):
            env.pop(var, None)
        yield env | {"BENCH_TMP": tmp}
    finally:
        _remove(Path(tmp))


def _remove(tmp: Path, within_s: float = 10.0) -> None:
    """Remove the bench's folder; processes it stopped a moment ago (an agent's exit wrapper
    recording its status after its tmux server went, Ray's log writers) may still add a file
    while it goes, so it is tried again until a deadline rather than failing the whole group."""
    deadline = time.monotonic() + within_s
    while True:
        try:
            shutil.rmtree(tmp)
            return
        except FileNotFoundError:
            return
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.1)


def make_repo(path: Path, env: dict[str, str]) -> Path:
    path.mkdir(parents=True)
    run = lambda *a: subprocess.run(["git", "-C", str(path), *a], env=env, check=True, capture_output=True)  # noqa: E731
    run("init", "-q", "-b", "main")
    (path / "README.md").write_text("# bench\n")
    run("add", "-A")
    run("commit", "-q", "-m", "init")
    return path


def zen(*args: str, env: dict[str, str], check: bool = True) -> subprocess.CompletedProcess[str]:
    r = subprocess.run([PY, "-m", "zen", *args], env=env, capture_output=True, text=True)
    if check and r.returncode != 0:
        raise RuntimeError(f"zen {' '.join(args)} failed: {r.stderr.strip()}")
    return r


def zen_bin() -> str:
    """The console script, as users and hooks run it (falls back to -m)."""
    script = Path(PY).parent / "zen"
    return str(script) if script.exists() else f"{PY} -m zen"


def make_home(env: dict[str, str], *, max_concurrent: int = 5) -> tuple[Path, Path, dict[str, str]]:
    """A zen home with lane 'app' on a fresh repo, a queue that never fills, and the env that
    points zen at it. Returns (home, repo, env)."""
    tmp = Path(env["BENCH_TMP"])
    home = tmp / "home"
    zen("init", str(home), env=env)
    env = env | {"ZEN_HOME": str(home)}
    repo = make_repo(tmp / "repo", env)
    zen("lane", "add", "app", str(repo), env=env)
    cfg = home / "zen.yaml"
    text = cfg.read_text().replace("max_concurrent_tasks: 5", f"max_concurrent_tasks: {max_concurrent}")
    cfg.write_text(text.replace("max_queue_size: 100", "max_queue_size: 100000"))
    # the parse of the edited zen.yaml kept for the read commands, as a supervisor's start does
    from zen.store.config import Config
    from zen.store.home import Home

    Config.load(Home(home), keep=True)
    return home, repo, env

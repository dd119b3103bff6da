"""Lane checks (issue 37): the project's own commands run on what would land, before a human looks.

zen.yaml lanes.<name>:
    checks: ["make test", "ruff check ."]   # `zen lane add|set NAME --check CMD` (repeatable)
    check_timeout: 600                      # seconds per check (default 600)

What is checked is the merge zen land would make: the harvested commit merged into the base
branch's tip as it is *now* (not the base the job started from: a branch cut from a stale base can
revert what landed since and still pass on its own). The merge is computed in the object store,
checked out detached in a throwaway worktree under the job's directory, and each check runs there
with `sh -c`, inside zen's wall when the lane keeps it (the tree writable, zen's home and the
user's home hidden, no network), with a timeout. The throwaway tree is removed afterwards; the
merge commit stays a dangling object, on no branch.

Timeline: `check.started` (the checks, base, tip, merge, `stale` when the base moved since the job
started), then `check.passed` / `check.failed` per check (exit code, seconds, log path). A run is
*current* while the base's tip and the harvested commit are still the ones it checked;
`zen land` lands only on a current run that passed (or `--force`).
"""

from __future__ import annotations

import logging
import os
import shutil
import subprocess
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from zen.adapters import git as g
from zen.adapters import sandbox
from zen.agents import wall
from zen.core.events import EventType as E
from zen.errors import LandRefused, ZenError
from zen.orchestration.context import JobContext
from zen.orchestration.lanes import Lane, resolve_lane
from zen.store.atomic import atomic_write, flocked
from zen.store.config import Config
from zen.store.home import Home
from zen.store.jobs import JobStore
from zen.store.layout import CHECKS_LOCK

log = logging.getLogger(__name__)
DEFAULT_TIMEOUT_S = 600.0
CHECK_DIR = "checks"          # under the job's directory: the logs, and the throwaway tree while it runs
TREE_DIR = "tree"
_KEEP_ENV = ("PATH", "LANG", "LC_ALL", "LC_CTYPE", "TERM", "TZ")


def lane_checks(spec: Mapping[str, Any]) -> list[str]:
    raw = spec.get("checks") or []
    if isinstance(raw, str):
        raw = [raw]
    return [str(c).strip() for c in raw if str(c).strip()]


def timeout_of(spec: Mapping[str, Any]) -> float:
    try:
        value = float(spec.get("check_timeout") or DEFAULT_TIMEOUT_S)
    except (TypeError, ValueError):
        return DEFAULT_TIMEOUT_S
    return value if value > 0 else DEFAULT_TIMEOUT_S


@dataclass
class CheckRun:
    """The latest run of a job's checks, as its timeline tells it."""

    base: str | None = None          # the base tip it merged onto
    tip: str | None = None           # the harvested commit it checked
    stale: bool = False
    checks: list[str] = field(default_factory=list)
    outcomes: list[dict[str, Any]] = field(default_factory=list)

    @property
    def finished(self) -> bool:
        return len(self.outcomes) >= len(self.checks)

    @property
    def failed(self) -> dict[str, Any] | None:
        return next((o for o in self.outcomes if o.get("type") == E.CHECK_FAILED), None)

    @property
    def passed(self) -> bool:
        return self.finished and self.failed is None

    def current(self, base: str | None, tip: str | None) -> bool:
        return self.base is not None and self.base == base and self.tip == tip

    def to_json(self) -> dict[str, Any]:
        return {"base": self.base, "tip": self.tip, "stale": self.stale, "checks": self.checks,
                "passed": self.passed, "finished": self.finished,
                "results": [{"check": o.get("check"), "passed": o.get("type") == E.CHECK_PASSED,
                             "exit_code": o.get("exit_code"), "seconds": o.get("seconds"),
                             "log": o.get("log")} for o in self.outcomes]}


def latest_run(events: Sequence[Mapping[str, Any]]) -> CheckRun | None:
    """The last `check.started` and the outcomes after it, or None when checks never ran."""
    run: CheckRun | None = None
    for e in events:
        t = e.get("type")
        if t == E.CHECK_STARTED:
            run = CheckRun(e.get("base"), e.get("tip"), bool(e.get("stale")), list(e.get("checks") or []))
        elif t in (E.CHECK_PASSED, E.CHECK_FAILED) and run is not None:
            run.outcomes.append(dict(e))
    return run


def summary(run: CheckRun | None) -> str | None:
    """One line for `zen show` and review.md."""
    if run is None:
        return None
    if not run.finished:
        return f"checks running ({len(run.outcomes)} of {len(run.checks)} done)"
    failed = run.failed
    stale = " (the base had moved since the job started)" if run.stale else ""
    if failed is not None:
        return f"check `{failed.get('check')}` failed (exit {failed.get('exit_code')}): {failed.get('log')}{stale}"
    return f"{len(run.checks)} check(s) passed on the merge with {str(run.base)[:12]}{stale}"


def _env(home_dir: Path) -> dict[str, str]:
    env = {k: os.environ[k] for k in _KEEP_ENV if k in os.environ}
    env.setdefault("PATH", "/usr/local/bin:/usr/bin:/bin")
    return {**env, "HOME": str(home_dir), "TMPDIR": "/tmp", "CI": "1"}


def _argv(lane: Lane, home: Home, tree: Path, command: str) -> list[str]:
    """`sh -c command` in the throwaway tree, inside zen's wall when the lane keeps it."""
    argv = ["/bin/sh", "-c", command]
    if not wall.enabled(lane.spec):
        return argv
    ok, why = sandbox.works()
    if not ok:
        raise LandRefused(f"lane {lane.name} runs its checks inside zen's sandbox, but {why}; "
                          "or turn the wall off for the lane (sandbox: off)")
    user_home = Path(os.path.expanduser("~"))
    hide = tuple(sorted({home.root, user_home}, key=lambda p: len(p.parts)))
    common = g.common_dir(tree)
    w = sandbox.Wall(worktree=tree, hide=hide, read_only=(common,) if common else (), network="none",
                     home=user_home)
    return sandbox.argv(w, argv)


def _run_one(argv: list[str], cwd: Path, env: dict[str, str], log: Path, timeout: float) -> tuple[int | None, bool]:
    with open(log, "wb") as out:
        proc = subprocess.Popen(argv, cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=out,
                                stderr=subprocess.STDOUT, start_new_session=True)
        try:
            return proc.wait(timeout=timeout), False
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, 9)
            proc.wait()
            out.write(f"\nzen: the check ran past its {timeout:.0f} s and was stopped\n".encode())
            return None, True


def run(home: Home, job_id: str, *, actor: str = "supervisor") -> CheckRun | None:
    """Run the lane's checks on the merge of the job's harvested commit into the base's tip now,
    one run per job at a time (a second waits). None when the lane has no checks. Raises
    LandRefused when there is nothing to check."""
    store = JobStore(home)
    with flocked(store.dir(job_id) / CHECKS_LOCK):
        return _run(home, store, job_id, actor)


def due(ctx: JobContext, events: Sequence[Mapping[str, Any]]) -> bool:
    """The job's lane has checks and its latest harvest (in `events`, its timeline as the end of
    the job read it) has no run of them yet."""
    try:
        if not lane_checks(ctx.lane.spec):
            return False
    except ZenError:
        return False
    tip = next((e.get("commit") for e in reversed(events) if e.get("type") == E.HARVEST_DONE), None)
    found = latest_run(events)
    return tip is not None and (found is None or found.tip != tip)


def start_due(ctx: JobContext, events: Sequence[Mapping[str, Any]]) -> threading.Thread | None:
    """After a harvest (the supervisor): the lane's checks on it, in a thread of their own so the
    loop goes on watching; None when none are due. A run cut short (the supervisor stopped) is
    run again by `zen check` or by `zen land`, which takes only a finished run."""
    if not due(ctx, events):
        return None
    home, job_id = ctx.home, ctx.job_id

    def checked() -> None:
        try:
            run(home, job_id, actor="supervisor")
        except Exception as exc:   # a thread's error goes to the log, never lost in the thread
            log.warning("job %s: the lane's checks could not run: %s", job_id, exc)

    t = threading.Thread(target=checked, name=f"zen-check-{job_id}", daemon=True)
    t.start()
    return t


def _run(home: Home, store: JobStore, job_id: str, actor: str) -> CheckRun | None:
    snap = store.snapshot(job_id)
    lane = resolve_lane(Config.load(home), store.task(job_id))
    checks = lane_checks(lane.spec)
    if not checks:
        return None
    tip = snap.harvest_commit
    if tip is None:
        raise LandRefused(f"job {job_id} has no harvested commit to check (zen harvest {job_id} makes one)")
    repo = Path(lane.repo)
    base = g.rev(repo, f"refs/heads/{lane.base}") or g.rev(repo, lane.base)
    if base is None:
        raise LandRefused(f"the lane's base {lane.base!r} is not a branch of {repo}")
    tree_sha, conflicts = g.merge_tree(repo, base, tip)
    if tree_sha is None:
        raise LandRefused(f"job {job_id}'s work does not merge cleanly into {lane.base}: conflicts in "
                          f"{', '.join(conflicts[:5])}")
    merge = tip if g.is_ancestor(repo, base, tip) and g.tree_of(repo, tip) == tree_sha else \
        g.commit_tree(repo, tree_sha, [base, tip], f"zen check of job {job_id} (not on any branch)\n")
    stale = bool(snap.base_commit) and snap.base_commit != base
    store.append(job_id, E.CHECK_STARTED, actor=actor, checks=checks, base=base, tip=tip, merge=merge, stale=stale)
    top = store.dir(job_id) / CHECK_DIR
    top.mkdir(mode=0o700, exist_ok=True)
    tree = top / TREE_DIR
    g.fresh_worktree(repo, tree, None, merge)
    scratch_home = top / "home"
    scratch_home.mkdir(mode=0o700, exist_ok=True)
    try:
        for i, command in enumerate(checks, 1):
            log = top / f"{i}.log"
            started = time.monotonic()
            code, timed_out = _run_one(_argv(lane, home, tree, command), tree, _env(scratch_home), log,
                                       timeout_of(lane.spec))
            seconds = round(time.monotonic() - started, 3)
            ok = code == 0 and not timed_out
            store.append(job_id, E.CHECK_PASSED if ok else E.CHECK_FAILED, actor=actor, check=command,
                         exit_code=code, seconds=seconds, log=str(log), timed_out=timed_out)
            if not ok:
                break
    finally:
        g.drop_scratch_worktree(repo, tree)
        shutil.rmtree(scratch_home, ignore_errors=True)
    store.snapshot(job_id)
    found = latest_run(store.events(job_id))
    _note_in_review(store, job_id, found)
    return found


REVIEW_HEADING = "## Checks"


def _note_in_review(store: JobStore, job_id: str, found: CheckRun | None) -> None:
    """review.md's checks section, as the last run left it (a harvest writes review.md anew)."""
    path = store.paths(job_id).review
    try:
        text = path.read_text()
    except OSError:
        return
    text = text.split(f"\n{REVIEW_HEADING}\n", 1)[0].rstrip("\n") + "\n"
    lines = [f"\n{REVIEW_HEADING}\n", f"{summary(found)}\n" if found else "none ran\n"]
    for o in (found.outcomes if found else []):
        mark = "passed" if o.get("type") == E.CHECK_PASSED else "FAILED"
        lines.append(f"- {mark} `{o.get('check')}` (exit {o.get('exit_code')}, {o.get('seconds')} s, log {o.get('log')})\n")
    atomic_write(path, text + "".join(lines))


def gate(home: Home, job_id: str, base: str, tip: str) -> None:
    """For zen land: pass when the lane has no checks or a current run passed; run them again when
    the base moved since (or they never ran); raise LandRefused naming the failed check and its log."""
    store = JobStore(home)
    lane = resolve_lane(Config.load(home), store.task(job_id))
    if not lane_checks(lane.spec):
        return
    found = latest_run(store.events(job_id))
    if found is None or not found.current(base, tip) or not found.finished:
        found = run(home, job_id, actor="land")
    if found is None or found.passed:
        return
    failed = found.failed or {}
    raise LandRefused(f"check `{failed.get('check')}` failed on the merge with {lane.base} "
                      f"(exit {failed.get('exit_code')}{', timed out' if failed.get('timed_out') else ''}); "
                      f"its log: {failed.get('log')}. Fix it, or land anyway with zen land {job_id} --force")


__all__ = ["CheckRun", "gate", "lane_checks", "latest_run", "run", "summary"]

"""`zen doctor`: the home's pieces and privacy, the tools this machine needs (zen.orchestration.
tools), and every job's record checked line by line, and rebuilt from it on request.

The home: every folder and file `zen init` makes, each missing one named with the command that
restores it; the home, control/, logs/ and jobs/ warned of when other users can read or enter
them, with the chmod that fixes it.

Each line of a timeline is checked against the event catalogue (zen.core.events.validate): is
it JSON, a known type with its fields of the right kinds, this job's, the next seq. state.json
is checked against the timeline it caches (an offset past the timeline's end, a seq it cannot
have read). Every problem names its line. A rebuild skips a bad line (the reducers never fold
one) and reports it: it never stops at one.

A torn last line (a crash mid-write) is noted but is no fault: readers skip it and the next
append closes it off.
"""

from __future__ import annotations

import json
import shlex
import stat
from dataclasses import dataclass, field
from typing import Any

from zen.core.events import validate
from zen.errors import ZenError
from zen.observe import snapshot as metrics_snapshot
from zen.orchestration.home.tools import FAULT, OK, WARN, Found, check_tools
from zen.orchestration.insight.replay import drift
from zen.orchestration.read.query import resolve_job
from zen.store import defaults
from zen.store import events as ev_store
from zen.store.home import PRIVATE_DIRS, Home
from zen.store.jobs import JobStore
from zen.store.layout import CONFIG, INCIDENTS, POLICY, SUBDIRS

__all__ = ["Doctor", "JobCheck", "check_home", "check_jobs", "check_tools", "doctor"]


@dataclass(frozen=True)
class Problem:
    line: int | None          # the timeline's line (from 1); None for the record as a whole
    problem: str
    fault: bool = True        # False: a note (a torn last line), not a damaged record


@dataclass(frozen=True)
class JobCheck:
    job: str
    events: int               # complete, readable events
    gap_free: bool
    state: str
    rebuilt: bool
    problems: list[Problem] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.gap_free and not any(p.fault for p in self.problems)

    def to_json(self) -> dict[str, Any]:
        return {"job": self.job, "events": self.events, "gap_free": self.gap_free, "state": self.state,
                "rebuilt": self.rebuilt, "ok": self.ok,
                "problems": [{"line": p.line, "problem": p.problem, "fault": p.fault} for p in self.problems]}


def check_lines(job_id: str, path: Any) -> tuple[list[Problem], int, bool, int]:
    """(problems, readable events, gap-free, last seq) of one timeline, line by line."""
    problems: list[Problem] = []
    count, expect, gap_free = 0, 1, True
    for number, ev, complete in ev_store.scan_lines(path):
        if not complete:
            problems.append(Problem(number, "cut short at the end (a crash mid-write; readers skip it and "
                                            "the next append closes it off)", fault=False))
            break
        if ev is None:
            problems.append(Problem(number, "not a JSON object (readers skip it)"))
            continue
        for text in validate(ev):
            problems.append(Problem(number, text))
        if ev.get("job") not in (None, job_id):
            problems.append(Problem(number, f"belongs to job {ev.get('job')!r}, not {job_id}"))
        seq = ev.get("seq")
        if type(seq) is not int:
            continue
        count += 1
        if seq != expect:
            gap_free = False
            what = f"repeats seq {seq}" if seq < expect else f"seq {seq} where {expect} was due ({seq - expect} missing)"
            problems.append(Problem(number, what))
        expect = max(expect, seq + 1)
    return problems, count, gap_free, expect - 1


def check_state(store: JobStore, job_id: str, last_seq: int) -> list[Problem]:
    """state.json against the timeline it caches."""
    paths = store.paths(job_id)
    try:
        raw = json.loads(paths.state.read_text())
    except FileNotFoundError:
        return []
    except (OSError, ValueError):
        return [Problem(None, "state.json is unreadable (zen doctor --rebuild rewrites it)")]
    if not isinstance(raw, dict):
        return [Problem(None, "state.json is not a JSON object (zen doctor --rebuild rewrites it)")]
    out = []
    try:
        size = paths.events.stat().st_size
    except FileNotFoundError:
        size = 0
    offset = raw.get("_offset")
    if isinstance(offset, int) and offset > size:
        out.append(Problem(None, f"state.json has read {offset} bytes of a {size}-byte timeline (the timeline "
                                 "was cut short or replaced; readers rebuild it, zen doctor --rebuild rewrites it)"))
    seq = raw.get("seq")
    if isinstance(seq, int) and seq > last_seq:
        out.append(Problem(None, f"state.json has folded seq {seq} but the timeline ends at {last_seq}"))
    return out


def check_job(home: Home, store: JobStore, job_id: str, *, rebuild: bool) -> JobCheck:
    paths = store.paths(job_id)
    problems: list[Problem] = []
    if not paths.events.exists():
        problems.append(Problem(None, "the timeline events.jsonl is missing: the record cannot be rebuilt"))
    try:
        store.task(job_id)
    except ZenError as exc:
        problems.append(Problem(None, f"task.yaml: {exc}"))
    line_problems, count, gap_free, last = check_lines(job_id, paths.events)
    problems += line_problems
    state_problems = check_state(store, job_id, last)
    if rebuild and paths.events.exists():
        # the rebuild repairs what was wrong with state.json: said, but no longer a fault
        state_problems = [Problem(p.line, f"{p.problem}: rebuilt", fault=False) for p in state_problems]
    problems += state_problems
    if rebuild and paths.events.exists():
        snap = store.rebuild(job_id)
        metrics_snapshot.rebuild(store.dir(job_id), job_id)
    else:
        snap = store.snapshot(job_id, write=False)
    return JobCheck(job_id, count, gap_free, snap.state.value, rebuild and paths.events.exists(), problems)


def check_jobs(home: Home, ref: str | None = None, *, rebuild: bool = False) -> list[JobCheck]:
    """Every job's record checked (see the module docstring); with `rebuild`, state.json and
    metrics.json rebuilt from its timeline."""
    store = JobStore(home)
    return [check_job(home, store, job_id, rebuild=rebuild)
            for job_id in ([resolve_job(home, ref)] if ref else store.ids())]


def check_home(home: Home) -> list[Found]:
    """Every piece of the home zen init makes (each missing one named, with `zen init HOME`, which
    restores it and never touches an edited file), then its privacy."""
    out: list[Found] = []
    restore = f"zen init {shlex.quote(str(home.root))}"
    try:
        shipped = list(defaults.home_files())
    except ZenError as exc:    # a broken install: name what is there to check against, and that
        out.append(Found("home: defaults", FAULT, str(exc), "pipx reinstall zen-supervisor"))
        shipped = [f"{POLICY}/{name}" for name in defaults.POLICY_FILES]
    for rel in [CONFIG, *(d + "/" for d in SUBDIRS), *shipped]:
        path = home.root / rel
        if (path.is_dir() if rel.endswith("/") else path.is_file()):
            continue
        seed = rel.startswith(INCIDENTS + "/")
        out.append(Found(f"home: {rel}", WARN if seed else FAULT,
                         f"{rel}{', a seed incident,' if seed else ''} is missing from the home", restore))
    for rel in PRIVATE_DIRS:
        path = home.root / rel if rel else home.root
        try:
            mode = stat.S_IMODE(path.stat().st_mode)
        except OSError:
            continue                            # missing: named above
        if mode & 0o077:
            name = f"{rel}/" if rel else "the home"
            out.append(Found(f"home: privacy of {rel or '.'}", WARN,
                             f"other users can read or enter {name} {path} (mode {mode:04o})",
                             f"chmod 700 {shlex.quote(str(path))}"))
    if not out:
        out.append(Found("home", OK, f"{home.root} is complete and private to you"))
    return out


@dataclass(frozen=True)
class Doctor:
    home: list[Found]
    tools: list[Found]
    jobs: list[JobCheck]

    @property
    def ok(self) -> bool:
        return (all(f.status != FAULT for f in (*self.home, *self.tools))
                and all(j.ok for j in self.jobs))

    def to_json(self) -> dict[str, Any]:
        return {"ok": self.ok, "home": [f.to_json() for f in self.home],
                "tools": [f.to_json() for f in self.tools], "jobs": [j.to_json() for j in self.jobs]}


def doctor(home: Home | None, ref: str | None = None, *, rebuild: bool = False,
           no_home: str = "") -> Doctor:
    """The whole check: the home (`no_home` says why there is none), the tools, the jobs."""
    tools = check_tools()
    if home is None:
        return Doctor([Found("home", FAULT, no_home or "no zen home here or above (run zen init DIR)")], tools, [])
    status, message = drift(home)      # hand-edited rules replayed over the last week (issue 38)
    found = check_home(home) + ([] if status == "PASS" else [
        Found("home: policy on history", WARN, message, "zen policy simulate --since 7d")])
    return Doctor(found, tools, check_jobs(home, ref, rebuild=rebuild))

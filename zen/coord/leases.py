"""Leases on paths of a lane (DESIGN section 10): who is editing what, readable with `cat`.

    coord/<lane>/leases/<hash>.json
      {"v": 1, "id", "lane", "job", "path", "glob", "mode": "exclusive" | "shared", "reason", "by",
       "created", "expires", "ttl_s", "fixed", "revision"}

- A path is relative to the lane's root (`src/app.py`); a glob (`src/auth/**`, `*.md`) is matched
  with fnmatch rules, where `*` also crosses `/`; a path ending in `/` means everything below it.
- The file name is a hash of the path (`g` in front for a glob); an exclusive lease is the only
  file of that name, created with O_EXCL semantics (temp + link), so two jobs can never both hold
  one. A shared lease adds a hash of its job to the name, so several jobs may share a path.
- Every change (take, renew, release, reap) happens under the lane's flock (`coord/<lane>/.lock`);
  renewal replaces the file atomically with `expires` moved on and `revision` + 1. Readers (the
  guardian's hook) take no lock: they see the old or the new file, never a mix.
- A lease dies when its job ends (the supervisor releases it the moment it records the end, and
  reconciles on start); `expires` is only the backstop for a supervisor that is down. A lease
  whose job has ended or whose expiry has passed is ignored by every reader and reaped by the
  next writer.
- Each take and release is recorded in the holder's timeline (`lock.acquired`, `lock.released`).

Lean: the guard hook imports this module on every write an agent makes (stdlib and the lean
zen.store modules only; blake2 straight from the builtin `_blake2`, since hashlib would load
OpenSSL, 1.5 ms the hook does not need).
"""

from __future__ import annotations

import json
import os
import posixpath
import time
from collections.abc import Callable, Iterable
from fnmatch import fnmatchcase
from pathlib import Path
from typing import Any

from zen.core import jobstate
from zen.core.events import EventType as E
from zen.core.events import timestamp
from zen.errors import AmbiguousLease, LeaseConflict, LeaseError, LeaseNotFound
from zen.store import events as ev_store
from zen.store import layout
from zen.store.atomic import atomic_write, create_exclusive, flocked
from zen.store.readers import read_state

try:
    from _blake2 import blake2b
except ImportError:  # a Python built without it: the same digest, through OpenSSL
    from hashlib import blake2b

VERSION = 1
EXCLUSIVE, SHARED = "exclusive", "shared"
MODES = (EXCLUSIVE, SHARED)
ENDED = frozenset(jobstate.ENDED)   # states whose leases are dead
DEFAULT_TTL_S = 300.0
_GLOB_CHARS = ("*", "?", "[")

Lease = dict[str, Any]

__all__ = ["EXCLUSIVE", "SHARED", "Lease", "LeaseConflict", "LeaseError", "acquire", "all_leases", "blocking", "holder_alive",
           "is_glob", "lane_leases", "lane_slug", "live", "normalize", "overlaps", "reconcile", "release",
           "release_id", "release_job", "renew_job"]


# -- names -----------------------------------------------------------------------------------

def _digest(text: str, size: int) -> str:
    return blake2b(text.encode("utf-8", "surrogateescape"), digest_size=size).hexdigest()


def lane_slug(lane: str) -> str:
    """The folder of a lane under coord/: its name, or a stable slug for a `repo:` path."""
    if lane and "/" not in lane and not lane.startswith(".") and lane != layout.OUTBOX and len(lane) <= 100:
        return lane
    return "repo-" + _digest(lane, 8)


def leases_dir(home: str | os.PathLike[str], lane: str) -> str:
    return os.path.join(home, layout.COORD, lane_slug(lane), layout.COORD_LEASES)


def _lane_lock(home: str | os.PathLike[str], lane: str) -> Path:
    d = Path(home) / layout.COORD / lane_slug(lane)
    (d / layout.COORD_LEASES).mkdir(parents=True, exist_ok=True)
    return d / layout.COORD_LANE_LOCK


def is_glob(path: str) -> bool:
    return any(c in path for c in _GLOB_CHARS)


def normalize(path: str) -> str:
    """A lane-relative path or glob in one spelling: `./src//a.py` -> `src/a.py`, `src/` ->
    `src/**`. Raises LeaseError for an absolute path, `..` or the repository itself."""
    text = str(path).strip()
    if not text:
        raise LeaseError("a lease needs a path")
    if text.startswith("/"):
        raise LeaseError(f"{text!r} is absolute; a lease names a path inside the repository (e.g. src/app.py)")
    below = text.endswith("/")
    norm = posixpath.normpath(text)
    if norm in (".", "") or norm == ".." or norm.startswith("../"):
        raise LeaseError(f"{text!r} is not a path inside the repository")
    return norm + "/**" if below else norm


def lease_id(path: str, mode: str, job: str) -> str:
    """The file name (without .json) of `job`'s lease on `path`."""
    base = ("g" if is_glob(path) else "") + _digest(path, 10)
    return base if mode == EXCLUSIVE else f"{base}.{_digest(job, 4)}"


# -- matching ----------------------------------------------------------------------------------

def _fixed_ends(glob: str) -> tuple[str, str]:
    """The literal text before the first and after the last wildcard."""
    first = min(i for i in (glob.find(c) for c in _GLOB_CHARS) if i >= 0)
    last = max(glob.rfind(c) for c in _GLOB_CHARS)
    tail = glob[last + 1:]
    if glob[last] == "[":
        tail = ""
    elif "]" in tail and "[" in glob:
        tail = tail[tail.index("]") + 1:]
    return glob[:first], tail


def overlaps(a: str, b: str) -> bool:
    """Whether two lease paths can name a common file. Exact for a path against a path or a glob;
    for two globs, a conservative test: their literal heads and tails must be compatible."""
    ga, gb = is_glob(a), is_glob(b)
    if not ga and not gb:
        return a == b
    if ga and not gb:
        return fnmatchcase(b, a)
    if gb and not ga:
        return fnmatchcase(a, b)
    if a == b or fnmatchcase(a, b) or fnmatchcase(b, a):
        return True
    (ha, ta), (hb, tb) = _fixed_ends(a), _fixed_ends(b)
    return (ha.startswith(hb) or hb.startswith(ha)) and (ta.endswith(tb) or tb.endswith(ta))


# -- reading -----------------------------------------------------------------------------------

def _read(path: str) -> Lease | None:
    try:
        with open(path, "rb") as f:
            data = json.loads(f.read())
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) and isinstance(data.get("path"), str) else None


def lane_leases(home: str | os.PathLike[str], lane: str) -> list[Lease]:
    d = leases_dir(home, lane)
    try:
        names = sorted(n for n in os.listdir(d) if n.endswith(".json") and not n.startswith("."))
    except FileNotFoundError:
        return []
    return [x for n in names if (x := _read(os.path.join(d, n))) is not None]


def lanes(home: str | os.PathLike[str]) -> list[str]:
    """Folders under coord/ that hold leases (lane slugs)."""
    try:
        return sorted(n for n in os.listdir(os.path.join(home, layout.COORD))
                      if not n.startswith(".") and n != layout.OUTBOX)
    except FileNotFoundError:
        return []


def all_leases(home: str | os.PathLike[str], lane: str | None = None) -> list[Lease]:
    """Every lease file of the home (or of one lane), whether live or not."""
    if lane is not None:
        return lane_leases(home, lane)
    out: list[Lease] = []
    for slug in lanes(home):
        d = os.path.join(home, layout.COORD, slug, layout.COORD_LEASES)
        try:
            names = sorted(n for n in os.listdir(d) if n.endswith(".json") and not n.startswith("."))
        except (FileNotFoundError, NotADirectoryError):
            continue
        out += [x for n in names if (x := _read(os.path.join(d, n))) is not None]
    return out


def holder_alive(home: str | os.PathLike[str], job: str) -> bool:
    """Whether the lease's job may still act: its record exists and it has not ended."""
    state = read_state(str(home), job)
    if state is None:
        return os.path.isfile(os.path.join(home, layout.JOBS, job, layout.TASK))
    return state.get("state") not in ENDED


def live(home: str | os.PathLike[str], lease: Lease, now: str | None = None,
         alive: Callable[[str], bool] | None = None) -> bool:
    """Not expired, and its job alive."""
    if str(lease.get("expires") or "") <= (now or timestamp()):
        return False
    return (alive or (lambda j: holder_alive(home, j)))(str(lease.get("job") or ""))


def blocking(home: str | os.PathLike[str], lane: str, job: str, targets: Iterable[str],
             group: str | None = None) -> tuple[list[tuple[str, Lease]], set[str], set[str]]:
    """The guardian's question for a write by `job` to `targets` (lane-relative paths or globs):
    (target, lease) pairs another live job holds exclusively, the targets covered by a live
    lease of `job` itself, and the targets another live job holds shared. Reads only the lease
    files that can match: the ones named by each path's hash, and the glob leases. A lease of
    another attempt of `group` (one prompt's attempts, zen dispatch --attempts) stands in no
    one's way: they change the same files by design, and only one of them lands."""
    d = leases_dir(home, lane)
    try:
        names = os.listdir(d)
    except FileNotFoundError:
        return [], set(), set()
    if not names:
        return [], set(), set()
    globs = [n for n in names if n.startswith("g") and n.endswith(".json")]
    cache: dict[str, Lease | None] = {}
    now = timestamp()
    alive: dict[str, bool] = {job: True}
    conflicts: list[tuple[str, Lease]] = []
    own: set[str] = set()
    shared: set[str] = set()
    for target in targets:
        if is_glob(target):
            cands = [n for n in names if n.endswith(".json") and not n.startswith(".")]
        else:
            h = _digest(target, 10)
            cands = [n for n in names if n.startswith(h)] + globs
        for n in cands:
            if n not in cache:
                cache[n] = _read(os.path.join(d, n))
            lease = cache[n]
            if lease is None or not overlaps(target, lease["path"]) or str(lease.get("expires") or "") <= now:
                continue
            holder = str(lease.get("job") or "")
            if holder == job:
                own.add(target)
                continue
            if group and lease.get("group") == group:
                continue
            if holder not in alive:
                alive[holder] = holder_alive(home, holder)
            if not alive[holder]:
                continue
            if lease.get("mode") == EXCLUSIVE:
                conflicts.append((target, lease))
            else:
                shared.add(target)
    return conflicts, own, shared


# -- writing -----------------------------------------------------------------------------------

def record_event(home: str | os.PathLike[str], job: str, etype: str, **fields: Any) -> None:
    d = Path(home) / layout.JOBS / job
    if layout.valid_job_id(job) and (d / layout.TASK).is_file():
        by = fields.get("by")
        ev_store.append(d, job, etype, by if by in ("guard", "human") else "supervisor", **fields)


def _publish(path: Path, lease: Lease, *, new: bool, durable: bool = True) -> bool:
    data = json.dumps(lease, indent=2) + "\n"
    if new:
        return create_exclusive(path, data)
    atomic_write(path, data, durable=durable)
    return True


def acquire(home: str | os.PathLike[str], lane: str, job: str, path: str, *, mode: str = EXCLUSIVE,
            ttl_s: float = DEFAULT_TTL_S, reason: str = "", by: str = "human", fixed: bool = False,
            alive: Callable[[str], bool] | None = None, group: str | None = None) -> Lease:
    """Take (or renew) `job`'s lease on `path`. Raises Conflict naming the holder when another
    live job's lease stands in the way (an exclusive one, or any one for an exclusive request);
    a lease of another attempt of `group` does not (see blocking)."""
    path = normalize(path)
    if mode not in MODES:
        raise LeaseError(f"mode must be exclusive or shared, not {mode!r}")
    d = Path(leases_dir(home, lane))
    with flocked(_lane_lock(home, lane)):
        now = timestamp()
        alive_fn = alive or (lambda j: holder_alive(home, j))
        mine: Lease | None = None
        for lease in _candidates(d, path):
            if not overlaps(path, lease["path"]):
                continue
            if lease.get("job") == job:
                if lease["path"] == path:
                    mine = lease
                continue
            if group and lease.get("group") == group:
                continue
            if not live(home, lease, now, alive_fn):
                _unlink(home, d, lease, "expired" if str(lease.get("expires") or "") <= now else "holder ended")
                continue
            if mode == EXCLUSIVE or lease.get("mode") == EXCLUSIVE:
                raise LeaseConflict(describe_holder(lease, path), lease)
        return _take(home, d, lane, job, path, mode, ttl_s, reason, by, fixed, mine, group)


def _take(home: str | os.PathLike[str], d: Path, lane: str, job: str, path: str, mode: str, ttl_s: float,
          reason: str, by: str, fixed: bool, mine: Lease | None, group: str | None = None) -> Lease:
    now_s = time.time()
    if mine is not None and mine.get("mode") != mode:
        _unlink(home, d, mine, f"changed to {mode}", record=False)
        mine = None
    lease: Lease = {"v": VERSION, "id": lease_id(path, mode, job), "lane": lane, "job": job, "path": path,
                    "glob": is_glob(path), "mode": mode, "reason": reason, "by": by,
                    "created": (mine or {}).get("created") or timestamp(now_s),
                    "expires": timestamp(now_s + ttl_s), "ttl_s": ttl_s, "fixed": fixed,
                    "revision": int((mine or {}).get("revision") or 0) + 1}
    if group:
        lease["group"] = group
    target = d / f"{lease['id']}.json"
    if mine is None and not _publish(target, lease, new=True):
        # the name is taken: a lease of ours from an earlier process, or a stale one
        old = _read(str(target))
        if old is not None and old.get("job") != job:
            raise LeaseConflict(describe_holder(old, path), old)
        lease["created"] = (old or {}).get("created") or lease["created"]
        lease["revision"] = int((old or {}).get("revision") or 0) + 1
        mine = old
        _publish(target, lease, new=False)
    elif mine is not None:
        _publish(target, lease, new=False)
    record_event(home, job, E.LOCK_ACQUIRED, lease=lease["id"], path=path, mode=mode, expires=lease["expires"],
            by=by, lane=lane, reason=reason, **({"renewed": True} if mine is not None else {}))
    return lease


def _candidates(d: Path, path: str) -> list[Lease]:
    """The lease files that can overlap `path`: every one for a glob, else its hash's and the globs."""
    try:
        names = [n for n in os.listdir(d) if n.endswith(".json") and not n.startswith(".")]
    except FileNotFoundError:
        return []
    if not is_glob(path):
        h = _digest(path, 10)
        names = [n for n in names if n.startswith(h) or n.startswith("g")]
    return [x for n in sorted(names) if (x := _read(str(d / n))) is not None]


def _unlink(home: str | os.PathLike[str], d: Path, lease: Lease, why: str, *, record: bool = True) -> bool:
    try:
        os.unlink(d / f"{lease['id']}.json")
    except FileNotFoundError:
        return False
    if record:
        record_event(home, str(lease.get("job") or ""), E.LOCK_RELEASED, lease=str(lease["id"]), path=lease["path"],
                why=why, lane=str(lease.get("lane") or ""))
    return True


def describe_holder(lease: Lease, path: str) -> str:
    """"src/a.py is leased exclusive by job J until T", for a target that is the lease's path, lies
    under its glob, or (a glob itself) reaches it."""
    held = str(lease["path"])
    how = f"leased {lease.get('mode', EXCLUSIVE)} by job {lease.get('job')} until {lease.get('expires')}"
    if held == path:
        return f"{path} is {how}"
    if is_glob(path) and not is_glob(held):
        return f"{path} reaches {held}, which is {how}"
    return f"{path} falls under {held}, which is {how}"


def release(home: str | os.PathLike[str], lease: Lease, why: str, *, exact: bool = False) -> bool:
    """End one lease (True when this call removed it). With `exact`, only the revision seen:
    a lease renewed meanwhile stays."""
    lane = str(lease.get("lane") or "")
    with flocked(_lane_lock(home, lane)):
        d = Path(leases_dir(home, lane))
        current = _read(str(d / f"{lease['id']}.json"))
        if current is None or current.get("job") != lease.get("job"):
            return False
        if exact and current.get("revision") != lease.get("revision"):
            return False
        return _unlink(home, d, current, why)


def release_id(home: str | os.PathLike[str], lease_ref: str, why: str = "released by a human") -> Lease:
    """End the lease whose id is `lease_ref` (or a unique prefix of it), in any lane."""
    hits = [x for x in all_leases(home) if str(x.get("id", "")).startswith(lease_ref)]
    if not hits:
        raise LeaseNotFound(f"no lease {lease_ref!r} (zen locks lists them)")
    if len(hits) > 1:
        raise AmbiguousLease(f"{lease_ref!r} names {len(hits)} leases; give more of the id")
    release(home, hits[0], why)
    return hits[0]


def release_job(home: str | os.PathLike[str], job: str, why: str, paths: Iterable[str] | None = None
                ) -> list[Lease]:
    """End every lease of `job` (or those on `paths`); the leases removed."""
    wanted = None if paths is None else {normalize(p) for p in paths}
    done = []
    for lease in all_leases(home):
        if lease.get("job") != job or (wanted is not None and lease["path"] not in wanted):
            continue
        if release(home, lease, why):
            done.append(lease)
    return done


def renew_job(home: str | os.PathLike[str], job: str | Iterable[str], ttl_s: float | None = None) -> int:
    """Move the expiry of the leases of `job` (one id, or several) on, each by its own ttl
    (leases taken with a fixed ttl keep theirs). The number renewed."""
    jobs = {job} if isinstance(job, str) else set(job)
    n = 0
    by_lane: dict[str, list[Lease]] = {}
    for lease in all_leases(home):
        if lease.get("job") in jobs and not lease.get("fixed"):
            by_lane.setdefault(str(lease.get("lane") or ""), []).append(lease)
    for lane, found in by_lane.items():
        with flocked(_lane_lock(home, lane)):
            d = Path(leases_dir(home, lane))
            for lease in found:
                current = _read(str(d / f"{lease['id']}.json"))
                if current is None or current.get("job") != lease.get("job"):
                    continue  # released meanwhile: never bring it back
                ttl = float(ttl_s if ttl_s is not None else current.get("ttl_s") or DEFAULT_TTL_S)
                current["expires"] = timestamp(time.time() + ttl)
                current["revision"] = int(current.get("revision") or 0) + 1
                _publish(d / f"{current['id']}.json", current, new=False, durable=False)
                n += 1
    return n


def reconcile(home: str | os.PathLike[str], alive: Callable[[str], bool] | None = None) -> list[Lease]:
    """Release every lease whose job has ended (or whose expiry passed). The leases removed."""
    now = timestamp()
    done = []
    alive_fn = alive or (lambda j: holder_alive(home, j))
    for lease in all_leases(home):
        expired = str(lease.get("expires") or "") <= now
        if not expired and alive_fn(str(lease.get("job") or "")):
            continue
        if release(home, lease, "expired" if expired else "job ended", exact=True):
            done.append(lease)
    return done

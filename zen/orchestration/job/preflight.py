"""Preflight (DESIGN section 7): everything that must hold before an agent starts, each check
PASS / WARN / FAIL with a sentence. `zen preflight` runs it; the supervisor runs it before
every spawn and records `preflight.failed` with the report instead of starting the agent."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from zen.adapters import git_probe
from zen.agents.common import zen_argv
from zen.agents.unguarded import lane_check
from zen.core.ids import parse_iso, utcnow
from zen.core.model import Level
from zen.core.sizes import format_size
from zen.errors import ZenError
from zen.guard.policy.load import integrations, load_policy_errors, source_paths
from zen.orchestration.read.query import pending_tasks
from zen.orchestration.read.status import supervisor_pid
from zen.orchestration.remote.lanes import checks as remote_checks
from zen.orchestration.safety.autonomy import level_of, read_evidence, read_policy
from zen.orchestration.safety.incidents import check, valid
from zen.store.config import Config
from zen.store.home import Home
from zen.store.layout import SUBDIRS

PASS, WARN, FAIL = "PASS", "WARN", "FAIL"
# The hook must deny this (a credential store read plus a home-wide delete) and allow that.
KNOWN_BAD = "rm -rf ~/.ssh"
KNOWN_GOOD = "git status"
HEARTBEAT_STALE_S = 30.0


@dataclass
class Check:
    name: str
    status: str
    message: str

    def as_dict(self) -> dict[str, str]:
        return {"check": self.name, "status": self.status, "message": self.message}


@dataclass
class Report:
    checks: list[Check] = field(default_factory=list)

    def add(self, name: str, status: str, message: str) -> None:
        self.checks.append(Check(name, status, message))

    @property
    def ok(self) -> bool:
        return all(c.status != FAIL for c in self.checks)

    @property
    def failures(self) -> list[Check]:
        return [c for c in self.checks if c.status == FAIL]

    def as_dict(self) -> dict[str, Any]:
        return {"ok": self.ok, "checks": [c.as_dict() for c in self.checks]}


def run(home: Home, *, lane: str | None = None, hook_argv: list[str] | None = None,
        settings_file: Path | None = None, settings: dict[str, Any] | None = None) -> Report:
    """All checks; `lane` narrows the lane checks; `settings_file` / `settings` is the hook
    registration a job will get, whose Bash hook command is the one self-tested."""
    report = Report()
    _layout(home, report)
    try:
        cfg = Config.load(home)
    except Exception as exc:
        report.add("config", FAIL, str(exc))
        return report
    report.add("config", PASS, "zen.yaml parses")
    _policy(home, report)
    _incidents(home, report)
    if settings is not None:
        argv = hook_command_from_data(settings)
        if argv is None:
            report.add("guardian self-test", FAIL, "the job's settings register no PreToolUse hook for Bash: "
                       "commands would run unchecked")
        else:
            _guardian_selftest(home, report, argv, None)
    else:
        _guardian_selftest(home, report, hook_argv, settings_file)
    lanes = cfg.lanes
    names = [lane] if lane else sorted(lanes)
    for name in names:
        _lane(home, report, name, lanes.get(name))
        if lanes.get(name) is not None:
            report.add(f"lane {name}: unguarded agents", *lane_check(lanes[name]))
        if (lanes.get(name) or {}).get("executor"):
            for check, ok, message in remote_checks(cfg, name, lanes.get(name)):
                report.add(check, PASS if ok else FAIL, message)
    _heartbeat(home, report)
    _autonomy(home, report)
    _integrations(home, report)
    _deadlines(home, report)
    _disk(home, report, cfg)
    for tool in ("git", "tmux"):
        found = shutil.which(tool)
        report.add(f"tool {tool}", PASS if found else FAIL,
                   f"{tool} found at {found}" if found else f"{tool} is not installed (apt-get install {tool})")
    _incident_checks(home, report, names, lanes)
    return report


def _layout(home: Home, report: Report) -> None:
    missing = [d for d in SUBDIRS if not (home.root / d).is_dir()]
    if missing:
        report.add("home layout", FAIL, f"missing {', '.join(missing)} (zen init {home.root} restores them)")
    else:
        report.add("home layout", PASS, f"{home.root} has every directory")


def _policy(home: Home, report: Report) -> None:
    path = home.guardian_policy
    if not path.is_file():
        report.add("guardian policy", WARN, f"{path} is missing: only the built-in rules apply "
                   f"(zen init {home.root} restores the documented default)")
    else:
        errors = _policy_errors(home)
        if errors:
            report.add("guardian policy", FAIL, f"{errors[0]} (the guardian denies everything until it is fixed)")
        else:
            report.add("guardian policy", PASS, "policy/guardian.yaml and incident rules compile")
    if not home.autonomy_policy.is_file():
        report.add("autonomy policy", FAIL, f"{home.autonomy_policy} is missing "
                   f"(zen init {home.root} restores the default; zen doctor names what else is missing)")
        return
    try:
        policy = read_policy(home)
        for domain in (policy.get("domains") or {}):
            level_of(policy, str(domain))
        report.add("autonomy policy", PASS, "policy/autonomy.yaml parses")
    except Exception as exc:
        report.add("autonomy policy", FAIL, str(exc))


_COMPILED: dict[str, tuple[tuple[Any, ...], Any]] = {}


def _stat_key(paths: list[str] | list[Path]) -> tuple[Any, ...]:
    """What says that one of `paths` changed: each one's (path, mtime_ns, size, inode)."""
    key: list[Any] = []
    for p in paths:
        try:
            st = os.stat(p)
            key.append((str(p), st.st_mtime_ns, st.st_size, st.st_ino))
        except OSError:
            key.append((str(p), None))
    return tuple(key)


def _kept(what: str, paths: list[str], compute: Any) -> Any:
    """`compute()`, done again only when one of `paths` changed."""
    key = _stat_key(paths)
    hit = _COMPILED.get(what)
    if hit is not None and hit[0] == key:
        return hit[1]
    value = compute()
    _COMPILED[what] = (key, value)
    return value


def _policy_errors(home: Home) -> list[str]:
    """The guardian's compile of every policy source (guardian.yaml, autonomy.yaml, incidents):
    ~30 ms of pure-Python YAML a time, and each spawn's preflight asks."""
    return list(_kept(f"errors {home.root}", source_paths(str(home.root)), lambda: load_policy_errors(home.root)))


def _integration_items(home: Home) -> list[dict[str, Any]]:
    """The integration gates of policy/guardian.yaml (~7 ms a compile)."""
    items = _kept(f"integrations {home.root}", [str(home.guardian_policy)], lambda: integrations(home.root))
    return [dict(i) for i in items]


def _incidents(home: Home, report: Report) -> None:
    results = check(home)
    bad = [r for r in results if not r.ok]
    if bad:
        first = bad[0]
        report.add("incidents", FAIL, f"{Path(first.path).name}: {first.problems[0]}")
    else:
        report.add("incidents", PASS, f"{len(results)} incident record(s) valid, controls compile")


def hook_command_from_settings(settings_file: Path) -> list[str] | None:
    """The PreToolUse Bash hook command a settings file registers (what the agent will run)."""
    try:
        return hook_command_from_data(json.loads(settings_file.read_text()))
    except (OSError, ValueError):
        return None


def hook_command_from_data(data: Any) -> list[str] | None:
    try:
        for group in data["hooks"]["PreToolUse"]:
            if "Bash" in str(group.get("matcher", "")).split("|"):
                return ["sh", "-c", group["hooks"][0]["command"]]
    except (KeyError, IndexError, TypeError):
        return None
    return None


_SPAWN_CACHE: dict[tuple[Any, ...], tuple[float, Report]] = {}
SPAWN_CACHE_TTL_S = 30.0


def _sources_key(home: Home) -> tuple[Any, ...]:
    """What a preflight result depends on that can change between spawns."""
    return _stat_key([home.config_path, home.kill_file, *sorted(home.policy.glob("*.yaml")),
                      *sorted(home.incidents.glob("*.yaml"))])


def for_spawn(home: Home, lane: str | None, settings: dict[str, Any]) -> Report:
    """Preflight before a spawn. A passing report is reused for a short while when nothing it
    depends on changed (policy, incidents, zen.yaml, the kill switch, the hook command), so a
    burst of spawns does not pay for the guardian self-test every time; failures are never reused."""
    key = (str(home.root), lane, json.dumps(settings, sort_keys=True), _sources_key(home))
    hit = _SPAWN_CACHE.get(key)
    now = time.monotonic()
    if hit is not None and now - hit[0] < SPAWN_CACHE_TTL_S:
        return hit[1]
    report = run(home, lane=lane, settings=settings)
    if report.ok:
        _SPAWN_CACHE.clear()
        _SPAWN_CACHE[key] = (now, report)
    return report


def default_hook_argv() -> list[str]:
    return [*zen_argv(), "guard", "hook"]


def _guardian_selftest(home: Home, report: Report, hook_argv: list[str] | None, settings_file: Path | None) -> None:
    """Through the real hook subprocess: a known-bad command must be blocked, a known-good allowed."""
    if settings_file is not None:
        argv = hook_command_from_settings(settings_file)
        if argv is None:
            report.add("guardian self-test", FAIL, f"{settings_file} registers no PreToolUse hook for Bash: "
                       "commands would run unchecked")
            return
    else:
        argv = hook_argv or default_hook_argv()
    worktree = home.worktrees / "preflight-selftest"
    env = {k: v for k, v in os.environ.items() if k not in ("ZEN_JOB_ID",)}
    env.update({"ZEN_HOME": str(home.root), "ZEN_WORKTREE": str(worktree)})

    def ask(command: str) -> tuple[int, str]:
        payload = {"session_id": "preflight", "hook_event_name": "PreToolUse", "tool_name": "Bash",
                   "tool_input": {"command": command}, "cwd": str(worktree)}
        try:
            r = subprocess.run(argv, input=json.dumps(payload), capture_output=True, text=True, env=env,
                               timeout=15)
        except (OSError, subprocess.TimeoutExpired) as exc:
            return -1, str(exc)
        return r.returncode, (r.stderr or r.stdout).strip()

    bad_rc, bad_out = ask(KNOWN_BAD)
    if bad_rc != 2:
        report.add("guardian self-test", FAIL,
                   f"the hook did not block {KNOWN_BAD!r} (exit {bad_rc}; agents treat that as allow): "
                   f"{bad_out[:160] or 'no output'}")
        return
    good_rc, good_out = ask(KNOWN_GOOD)
    if good_rc != 0:
        report.add("guardian self-test", FAIL,
                   f"the hook blocks even {KNOWN_GOOD!r} (exit {good_rc}): {good_out[:160] or 'no output'}")
        return
    report.add("guardian self-test", PASS, f"hook blocks {KNOWN_BAD!r} and allows {KNOWN_GOOD!r}")


def _lane(home: Home, report: Report, name: str, spec: dict[str, Any] | None) -> None:
    if spec is None:
        report.add(f"lane {name}", FAIL, f"no lane named {name!r} in zen.yaml")
        return
    path = Path(str(spec.get("path", "")))
    if not path.is_dir():
        report.add(f"lane {name}", FAIL, f"{path} does not exist (zen lane remove {name}, or restore it)")
    # one git process when all is well (every spawn runs this): the base resolving proves the repo
    elif git_probe.resolve_commit(path, str(spec.get("base", "HEAD"))) is None:
        if not git_probe.is_repo(path):
            report.add(f"lane {name}", FAIL, f"{path} is not a git repository")
        else:
            report.add(f"lane {name}", FAIL, f"base {spec.get('base')!r} does not resolve in {path}")
    else:
        report.add(f"lane {name}", PASS, f"{path} @ {spec.get('base')}")


def _heartbeat(home: Home, report: Report) -> None:
    pid = supervisor_pid(home)
    beat = home.heartbeat
    if pid is None:
        report.add("supervisor", WARN, "no supervisor is running (zen supervise --detach); tasks wait in the spool")
        return
    try:
        age = time.time() - beat.stat().st_mtime
    except FileNotFoundError:
        report.add("supervisor", WARN, f"supervisor pid {pid} holds the lock but has written no heartbeat yet")
        return
    if age > HEARTBEAT_STALE_S:
        report.add("supervisor", FAIL, f"supervisor pid {pid} has not written a heartbeat for {age:.0f}s: it may be hung")
    else:
        report.add("supervisor", PASS, f"supervisor pid {pid}, heartbeat {age:.1f}s ago")


def _autonomy(home: Home, report: Report) -> None:
    """A domain above `suggest` should have a recorded promotion or override behind it."""
    try:
        policy = read_policy(home)
        odd = []
        for domain in (policy.get("domains") or {}):
            level = level_of(policy, str(domain))
            if level > Level.suggest:
                kinds = {r.get("kind") for r in read_evidence(home, str(domain))}
                if not kinds & {"promoted", "override"}:
                    odd.append(f"{domain} ({level.label})")
        if odd:
            report.add("autonomy", WARN, "levels above suggest with no promotion in evidence/: " + ", ".join(odd))
        else:
            report.add("autonomy", PASS, "levels are consistent with evidence")
        if home.kill_file.exists():
            report.add("kill switch", WARN, "engaged: every domain is observe-only (zen kill-switch --release)")
    except Exception as exc:
        report.add("autonomy", FAIL, str(exc))


def _integrations(home: Home, report: Report) -> None:
    try:
        items = _integration_items(home)
    except Exception as exc:
        report.add("integrations", FAIL, str(exc))
        return
    missing = [i["name"] for i in items if i.get("credential_env") and not os.environ.get(i["credential_env"])]
    if missing:
        report.add("integrations", WARN, "no credential in the environment for " + ", ".join(missing))
    else:
        report.add("integrations", PASS, f"{len(items)} integration gate(s) configured")


def _deadlines(home: Home, report: Report) -> None:
    late = []
    for task in pending_tasks(home):
        try:
            if (utcnow() - parse_iso(task.created_at)).total_seconds() > task.timeout_s:
                late.append(task.name)
        except ValueError:
            continue
    if late:
        report.add("deadlines", WARN, "tasks queued for longer than their timeout: " + ", ".join(late[:5]))
    else:
        report.add("deadlines", PASS, "no queued task is past its deadline")


def _disk(home: Home, report: Report, cfg: Config) -> None:
    try:
        min_free = cfg.size("limits", "min_free_disk")
    except ZenError as exc:   # no floor known: fail closed, as for too little room
        report.add("disk", FAIL, str(exc))
        return
    free = shutil.disk_usage(home.root).free
    gib = free / 2**30
    if free < min_free:
        report.add("disk", FAIL, f"only {format_size(free)} free under {home.root} (limits.min_free_disk is "
                                 f"{format_size(min_free)})")
    elif free < 4 * min_free:
        report.add("disk", WARN, f"{gib:.1f} GiB free under {home.root}")
    else:
        report.add("disk", PASS, f"{gib:.0f} GiB free")


def _incident_checks(home: Home, report: Report, lane_names: list[str], lanes: dict[str, dict[str, Any]]) -> None:
    for incident in valid(home):
        for chk in incident.controls.preflight_checks:
            targets = [n for n in lane_names if n in lanes and (not incident.lanes or n in incident.lanes)]
            if chk.kind in ("env_absent", "env_present"):
                targets = targets[:1] or [""]
            for name in targets:
                status, msg = _run_incident_check(chk, Path(str(lanes.get(name, {}).get("path", "."))))
                label = f"incident {incident.id}: {chk.id}" + (f" ({name})" if name and chk.kind not in ("env_absent", "env_present") else "")
                sev = status if status == PASS else (FAIL if chk.severity == "fail" else WARN)
                report.add(label, sev, msg if status == PASS else f"{chk.description}: {msg}")


def _run_incident_check(chk: Any, lane_path: Path) -> tuple[str, str]:
    if chk.kind == "env_absent":
        value = os.environ.get(chk.var or "")
        if value is None or (chk.pattern and not re.search(chk.pattern, value)):
            return PASS, f"${chk.var} is not set to anything risky"
        return FAIL, f"${chk.var} is set" + (f" and matches {chk.pattern!r}" if chk.pattern else "")
    if chk.kind == "env_present":
        return (PASS, f"${chk.var} is set") if os.environ.get(chk.var or "") else (FAIL, f"${chk.var} is not set")
    if chk.kind in ("file_absent", "file_present"):
        exists = (lane_path / (chk.path or "")).exists()
        want = chk.kind == "file_present"
        return (PASS, f"{chk.path} {'exists' if exists else 'is absent'}") if exists == want else \
            (FAIL, f"{chk.path} {'exists' if exists else 'is missing'} in {lane_path}")
    try:
        # any git it runs runs none of the lane's hooks (zen's own git never does: git_probe.SAFE_CONFIG)
        r = subprocess.run(["sh", "-c", chk.run or "false"], cwd=lane_path, capture_output=True, text=True,
                           timeout=chk.timeout_s, env={**os.environ, **git_probe.safe_config()})
    except subprocess.TimeoutExpired:
        return FAIL, f"`{chk.run}` took longer than {chk.timeout_s:g}s"
    except OSError as exc:
        return FAIL, str(exc)
    tail = (r.stdout + r.stderr).strip().splitlines()[-1:] or [""]
    return (PASS, f"`{chk.run}` passed") if r.returncode == 0 else (FAIL, f"`{chk.run}` exited {r.returncode} {tail[0][:120]}")

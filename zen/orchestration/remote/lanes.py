"""A lane's executor and shared remote in zen.yaml (`zen lane add/set ... --executor ray
--ray-address URL --remote REMOTE`), and the preflight checks of a lane whose turns run on Ray."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from zen.adapters import git as g
from zen.adapters.ray import RayJobs, normalise
from zen.core.remote import LOCAL, RAY, parse_executor
from zen.errors import ExecutorError, RayError, ZenError
from zen.orchestration.lanes import edit_lane
from zen.store.config import Config, lane_path
from zen.store.home import Home

PROBE_TIMEOUT_S = 3.0


@dataclass(frozen=True)
class ExecutorChange:
    """What `--executor/--ray-address/--ray-resource/--remote` ask for (None: leave as is)."""

    kind: str | None = None
    address: str | None = None
    resources: dict[str, float] = field(default_factory=dict)
    remote: str | None = None

    @property
    def empty(self) -> bool:
        return self.kind is None and self.address is None and not self.resources and self.remote is None


def parse_resources(items: list[str]) -> dict[str, float]:
    """`zen_slot=1` ... -> {"zen_slot": 1.0}; a clear sentence for anything else."""
    out: dict[str, float] = {}
    for item in items:
        name, sep, value = item.partition("=")
        try:
            amount = float(value) if sep else 1.0
        except ValueError:
            amount = -1.0
        if not name.strip() or amount < 0:
            raise ZenError(f"--ray-resource {item!r} must be NAME=AMOUNT, e.g. zen_slot=1")
        out[name.strip()] = amount
    return out


def _remote_value(remote: str) -> str:
    """A local path becomes absolute and must be a git repository; a URL is taken as it is."""
    if "://" in remote or (":" in remote.split("/", 1)[0] and not remote.startswith("/")):
        return remote  # ssh://, https://, host:path: checked by preflight, not here
    path = Path(remote).expanduser().absolute()
    if not (path / "HEAD").is_file() and not (path / ".git").exists():
        raise ZenError(f"{path} is not a git repository (create the lane's shared remote with "
                       f"git init --bare {path}, or give its URL)")
    return str(path)


def apply(current: dict[str, Any], change: ExecutorChange, lane: str) -> dict[str, Any]:
    """The lane's spec with the change applied, checked (a ray executor needs an address and a remote)."""
    spec = dict(current)
    old = spec.get("executor")
    ex = dict(old) if isinstance(old, dict) else ({"kind": old} if isinstance(old, str) else {})
    if change.kind is not None:
        if change.kind not in (LOCAL, RAY):
            raise ZenError(f"--executor {change.kind!r} must be local or ray")
        ex["kind"] = change.kind
    if change.address is not None:
        try:
            ex["address"] = normalise(change.address)
        except RayError as exc:
            raise ZenError(str(exc)) from None
        ex.setdefault("kind", RAY)
    if change.resources:
        ex["resources"] = {**dict(ex.get("resources") or {}), **change.resources}  # type: ignore[arg-type]
    if change.remote is not None:
        spec["remote"] = _remote_value(change.remote)
    if ex.get("kind", LOCAL) == LOCAL:
        spec.pop("executor", None)
    else:
        try:
            parse_executor(ex, f"lane {lane}'s executor")
        except ExecutorError as exc:
            raise ZenError(f"{exc} (--ray-address URL)") from None
        if not spec.get("remote"):
            raise ZenError(f"lane {lane} runs on Ray, so it needs --remote: a bare repository its nodes "
                           "clone from and push to (git init --bare PATH)")
        spec["executor"] = ex
    return spec


def set_lane(home: Home, name: str, change: ExecutorChange) -> dict[str, Any]:
    """`zen lane set NAME ...`: the lane's executor and remote, rewritten in zen.yaml."""
    return edit_lane(home, name, lambda spec: apply(spec, change, name))


def describe(spec: dict[str, Any]) -> str:
    """Where a lane's turns run, for `zen lane list/add/set`."""
    try:
        ex = parse_executor(spec.get("executor"))
    except ExecutorError as exc:
        return f"invalid executor: {exc}"
    if not ex.remote:
        return LOCAL
    return f"ray {ex.address} (remote {spec.get('remote') or 'missing'})"


# -- preflight --------------------------------------------------------------------------------------

def checks(cfg: Config, name: str, spec: dict[str, Any] | None) -> list[tuple[str, bool, str]]:
    """(check name, ok, sentence) for a lane whose turns run on Ray; nothing for a local lane."""
    if not spec:
        return []
    try:
        ex = parse_executor(spec.get("executor"), f"zen.yaml lanes.{name}.executor")
    except ExecutorError as exc:
        return [(f"lane {name} executor", False, str(exc))]
    if not ex.remote:
        return []
    out: list[tuple[str, bool, str]] = []
    try:
        with RayJobs(str(ex.address), timeout_s=PROBE_TIMEOUT_S) as jobs:
            version = jobs.version()
        out.append((f"lane {name} ray cluster", True, f"{jobs.address} answers (Ray {version.get('ray_version')})"))
    except RayError as exc:
        out.append((f"lane {name} ray cluster", False, f"{exc}; the lane's tasks wait until it answers"))
    remote = str(spec.get("remote") or "")
    if not remote:
        out.append((f"lane {name} remote", False, f"no remote: set (zen lane set {name} --remote PATH_OR_URL)"))
    else:
        try:
            why = g.remote_ok(lane_path(spec), remote)
        except ZenError as exc:
            why = str(exc)
        out.append((f"lane {name} remote", why is None, why or f"{remote} can be read"))
    return out


__all__ = ["ExecutorChange", "apply", "checks", "describe", "parse_resources", "set_lane"]

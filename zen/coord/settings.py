"""The coordinator's settings (zen.yaml `coordinator:`), read two ways.

- `hook_settings(home)`: the three the guardian's hook needs on every write (leases on or off,
  lock_timeout, conflict_resolution), read line by line without a YAML parser (the hook's path
  stays lean; ruamel only for a flow-style block the line reader cannot follow), with defaults
  for anything missing or unreadable: a zen.yaml mid-edit never turns enforcement off.
- `Settings.load(home)`: every setting, typed, through zen.store.config (supervisor, CLI).
"""

from __future__ import annotations

import os
from typing import Any

from zen.core.durations import parse_duration
from zen.errors import ZenError
from zen.store import layout
from zen.store.readers import scalar

SECTION = "coordinator"
RESOLUTIONS = ("deny", "warn", "last-write-wins")
DEFAULT_RESOLUTION = "deny"
DEFAULT_TIMEOUT_S = 300.0
WEBHOOK_EVENTS = ("waiting", "finished", "failed", "denied", "conflict", "kill-switch")

_CACHE: dict[tuple[str, int, int], dict[str, str]] = {}


def _block(home: str) -> dict[str, str]:
    """The scalars of zen.yaml's `coordinator:` block, as text."""
    path = os.path.join(home, layout.CONFIG)
    try:
        st = os.stat(path)
        key = (path, st.st_mtime_ns, st.st_size)
        if key in _CACHE:
            return _CACHE[key]
        with open(path, encoding="utf-8") as f:
            lines = f.read().splitlines()
    except (OSError, UnicodeDecodeError):
        return {}
    out: dict[str, str] = {}
    inside = False
    first: int | None = None
    for raw in lines:
        stripped = raw.strip()
        if not stripped or stripped.startswith("#"):
            continue
        indented = raw[:1] in (" ", "\t")
        if not indented:
            if inside:
                break
            if raw.startswith(SECTION + ":"):
                rest = scalar(raw[len(SECTION) + 1:])
                if rest not in ("", "{}"):
                    out = _ruamel_block(path)     # flow style: let the real parser read it
                    break
                inside = True
            continue
        if inside:
            indent = len(raw) - len(raw.lstrip())
            first = indent if first is None else first
            if indent != first:
                continue
            k, sep, v = stripped.partition(":")
            if sep and (not v or v[0] in " \t") and k.strip() not in out:
                out[k.strip()] = scalar(v)
    _CACHE.clear()
    _CACHE[key] = out
    return out


def _ruamel_block(path: str) -> dict[str, str]:
    try:
        # only for a zen.yaml the line reader cannot follow: ruamel costs the hook 30 ms
        from ruamel.yaml import YAML

        with open(path, encoding="utf-8") as f:
            data = YAML(typ="safe", pure=True).load(f.read()) or {}
        block = data.get(SECTION) or {}
        return {str(k): str(v).lower() if isinstance(v, bool) else str(v) for k, v in block.items()}
    except Exception:
        return {}


class HookSettings:
    __slots__ = ("leases", "lock_timeout_s", "resolution")

    def __init__(self, leases: bool, lock_timeout_s: float, resolution: str) -> None:
        self.leases = leases
        self.lock_timeout_s = lock_timeout_s
        self.resolution = resolution


def hook_settings(home: str) -> HookSettings:
    block = _block(home)
    leases = block.get("leases", "true").strip().lower() not in ("false", "no", "off", "0")
    try:
        timeout = parse_duration(block.get("lock_timeout") or DEFAULT_TIMEOUT_S)
    except ValueError:
        timeout = DEFAULT_TIMEOUT_S
    resolution = (block.get("conflict_resolution") or DEFAULT_RESOLUTION).strip().lower()
    if resolution not in RESOLUTIONS:
        resolution = DEFAULT_RESOLUTION        # an unknown word must not weaken enforcement
    return HookSettings(leases, max(1.0, timeout), resolution)


def secret_value(raw: str) -> str:
    """`notification_secret` as given, or from the environment for `env:NAME`."""
    raw = str(raw or "")
    if raw.startswith("env:"):
        return os.environ.get(raw[4:], "")
    return raw


class Settings:
    """Every coordinator setting, typed (for the supervisor and the CLI)."""

    def __init__(self, section: dict[str, Any]) -> None:
        self.leases = bool(section.get("leases", True))
        self.lock_timeout_s = max(1.0, parse_duration(section.get("lock_timeout", "5m")))
        resolution = str(section.get("conflict_resolution") or DEFAULT_RESOLUTION)
        self.resolution = resolution if resolution in RESOLUTIONS else DEFAULT_RESOLUTION
        self.scan_interval_s = max(0.2, parse_duration(section.get("scan_interval", "3s")))
        self.webhook = str(section.get("notification_webhook") or "").strip()
        self.secret = secret_value(str(section.get("notification_secret") or ""))
        events = section.get("notification_events")
        self.events = tuple(str(e) for e in (WEBHOOK_EVENTS if events is None else events))
        self.lanes = tuple(str(x) for x in section.get("notification_lanes") or ())
        self.webhook_timeout_s = parse_duration(section.get("webhook_timeout", "10s"))
        self.webhook_retries = max(1, int(section.get("webhook_retries", 10)))
        self.webhook_backoff_s = parse_duration(section.get("webhook_backoff", "2s"))
        self.webhook_backoff_cap_s = parse_duration(section.get("webhook_backoff_cap", "10m"))

    @classmethod
    def load(cls, home: Any) -> Settings:
        # here, not at the top: the hook imports this module and needs only hook_settings
        from zen.store.config import Config

        cfg = Config.load(home)
        try:
            return cls(cfg.section(SECTION))
        except (ValueError, TypeError) as exc:
            raise ZenError(f"zen.yaml {SECTION}: {exc}") from None

"""The circuit breaker per kind of automatic work (DESIGN 13): agents' spawns, goal continuations,
automatic recoveries and worker turns, each counted in the breaker's window with its own limit
(zen.yaml breaker.limits). Over a limit, that kind opens for breaker.hold: its work is held (a
spawn refused, a continuation or recovery postponed) until then. Nothing a human asks for is
counted or held. The counts live in control/breaker.json beside the automatic starts (the
breaker on automatic work as a whole: zen.yaml breaker.max_automatic), under the same lock, so
they survive restarts and read with `cat`. This module is the one reader and writer of that
file (the scheduler, zen status and the team tools ask it).
"""

from __future__ import annotations

import json
from typing import Any

from zen.core.breaker import CONTROL_VERSION
from zen.core.breaker import breaker as automatic_breaker
from zen.errors import ZenError
from zen.store.atomic import atomic_write, flocked
from zen.store.config import Config
from zen.store.home import Home

SPAWN = "spawn"
CONTINUATION = "continuation"
RECOVERY = "recovery"
WORKER_TURN = "worker_turn"
KINDS = (SPAWN, CONTINUATION, RECOVERY, WORKER_TURN)
DEFAULT_LIMITS = {SPAWN: 20, CONTINUATION: 60, RECOVERY: 5, WORKER_TURN: 120}


def limits(cfg: Config) -> dict[str, int]:
    raw = dict(cfg.section("breaker").get("limits") or {})
    out = dict(DEFAULT_LIMITS)
    for kind, value in raw.items():
        if kind not in KINDS:
            raise ZenError(f"zen.yaml breaker.limits.{kind}: not a kind of automatic work "
                           f"(one of {', '.join(KINDS)})")
        try:
            out[kind] = int(value)
        except (TypeError, ValueError):
            raise ZenError(f"zen.yaml breaker.limits.{kind}: {value!r} is not a whole number") from None
    return out


def load_breaker(home: Home) -> dict[str, Any]:
    """control/breaker.json as it is (empty when missing or unreadable)."""
    try:
        data = json.loads(home.breaker.read_text())
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _save(home: Home, data: dict[str, Any]) -> None:
    """control/breaker.json rewritten (under home.breaker_lock: the caller holds it)."""
    atomic_write(home.breaker, json.dumps({**data, "v": CONTROL_VERSION}) + "\n", durable=False)


def _kinds(data: dict[str, Any]) -> dict[str, dict[str, Any]]:
    kinds = data.get("kinds")
    return {k: dict(v) for k, v in kinds.items() if isinstance(v, dict)} if isinstance(kinds, dict) else {}


def try_kind(home: Home, cfg: Config, kind: str, now: float) -> float | None:
    """Count one piece of `kind` work if its breaker is closed: None = go ahead; else the time
    (epoch seconds) the breaker reopens (it has just opened, or already was)."""
    window = cfg.seconds("breaker", "window")
    limit = limits(cfg)[kind]
    with flocked(home.breaker_lock):
        data = load_breaker(home)
        kinds = _kinds(data)
        entry = kinds.get(kind, {})
        until = entry.get("open_until")
        if isinstance(until, int | float) and until > now:
            return float(until)
        recent = [float(t) for t in entry.get("at", []) if now - float(t) <= window]
        if len(recent) + 1 > limit:
            until = now + cfg.seconds("breaker", "hold")
        else:
            recent.append(now)
            until = None
        kinds[kind] = {"at": recent, "open_until": until}
        _save(home, {**data, "kinds": kinds})
    return None if until is None else float(until)


# -- the breaker on automatic work as a whole ------------------------------------------------------
def automatic_until(home: Home, cfg: Config, now: float, data: dict[str, Any] | None = None) -> float | None:
    """When the breaker on automatic work reopens (epoch seconds), None while it is closed."""
    data = load_breaker(home) if data is None else data
    return automatic_breaker(
        [float(t) for t in data.get("automatic_starts", [])], now=now,
        window_s=cfg.seconds("breaker", "window"), limit=int(cfg.get("breaker", "max_automatic")),
        hold_s=cfg.seconds("breaker", "hold"), open_until=data.get("open_until"),
    )


def try_automatic(home: Home, cfg: Config, now: float) -> bool:
    """May one more piece of automatic work start now? Counts it when yes; when it would go
    over the limit, opens the breaker for the hold period and says no."""
    with flocked(home.breaker_lock):
        data = load_breaker(home)
        window = cfg.seconds("breaker", "window")
        limit = int(cfg.get("breaker", "max_automatic"))
        starts = [float(t) for t in data.get("automatic_starts", []) if now - float(t) <= window]
        until = data.get("open_until")
        if until is not None and until > now:
            return False
        allowed = len(starts) + 1 <= limit
        if allowed:
            starts.append(now)
            until = None
        else:
            until = now + cfg.seconds("breaker", "hold")
        _save(home, {**data, "automatic_starts": starts, "open_until": until})   # the kinds kept as they are
    return allowed


def overall(home: Home, cfg: Config, now: float) -> dict[str, Any]:
    """What zen status and the dashboard show: the breaker on automatic work, and each kind's."""
    data = load_breaker(home)
    window = cfg.seconds("breaker", "window")
    recent = [t for t in data.get("automatic_starts", []) if now - float(t) <= window]
    until = automatic_until(home, cfg, now, data)
    return {"open": until is not None, "open_until": until, "automatic_in_window": len(recent),
            "limit": int(cfg.get("breaker", "max_automatic")), "window_s": window,
            "kinds": status(home, cfg, now, data)}


def status(home: Home, cfg: Config, now: float, data: dict[str, Any] | None = None) -> dict[str, dict[str, Any]]:
    """Per kind: how many in the window, the limit, open or closed, and when held work resumes."""
    window = cfg.seconds("breaker", "window")
    kinds = _kinds(load_breaker(home) if data is None else data)
    out = {}
    for kind, limit in limits(cfg).items():
        entry = kinds.get(kind, {})
        raw = entry.get("open_until")
        until = float(raw) if isinstance(raw, int | float) else None
        is_open = until is not None and until > now
        out[kind] = {"count": sum(1 for t in entry.get("at", []) if now - float(t) <= window), "limit": limit,
                     "open": is_open, "resumes_at": until if is_open else None}
    return out

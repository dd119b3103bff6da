"""Durations as humans type them ("30m", "1h30m", "90s", "2.5s", "7d") to seconds."""

from __future__ import annotations

import re

_UNITS = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0, "w": 604800.0}
_PART = re.compile(r"(\d+(?:\.\d+)?)(ms|s|m|h|d|w)")
# spaces may stand between parts ("1h 30m") and before a unit ("10 s"), never inside a number ("1 2")
_SPLIT_NUMBER = re.compile(r"[\d.]\s+[\d.]")


def parse_duration(text: str | int | float) -> float:
    """Seconds in `text`; a bare number is seconds. Raises ValueError with a readable message."""
    if isinstance(text, bool):
        raise ValueError(f"{text!r} is not a duration")
    if isinstance(text, int | float):
        if text < 0:
            raise ValueError(f"{text!r} is negative")
        return float(text)
    if _SPLIT_NUMBER.search(str(text)):
        raise ValueError(f"{text!r} is not a duration: a space inside a number (try 90s, 30m, 1h30m, 7d)")
    s = str(text).strip().lower().replace(" ", "")
    if not s:
        raise ValueError("empty duration")
    try:
        value = float(s)
    except ValueError:
        pass
    else:
        if value < 0:
            raise ValueError(f"{text!r} is negative")
        return value
    pos = 0
    total = 0.0
    for m in _PART.finditer(s):
        if m.start() != pos:
            break
        total += float(m.group(1)) * _UNITS[m.group(2)]
        pos = m.end()
    if pos != len(s) or pos == 0:
        raise ValueError(f"{text!r} is not a duration (try 90s, 30m, 1h30m, 7d)")
    return total


def format_duration(seconds: float) -> str:
    """Compact human form: 45s, 3m, 2h05m, 3d."""
    seconds = max(0.0, seconds)
    if seconds < 60:
        return f"{int(seconds)}s"
    if seconds < 3600:
        return f"{int(seconds // 60)}m"
    if seconds < 86400:
        h, rem = divmod(int(seconds), 3600)
        return f"{h}h{rem // 60:02d}m"
    return f"{int(seconds // 86400)}d"

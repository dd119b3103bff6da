"""Sizes as humans type them ("1MiB", "512KiB", "2GB", "200000") to bytes."""

from __future__ import annotations

import re

_UNITS = {"": 1, "b": 1, "k": 1000, "kb": 1000, "kib": 1024, "m": 1000**2, "mb": 1000**2, "mib": 1024**2,
          "g": 1000**3, "gb": 1000**3, "gib": 1024**3}
_SIZE = re.compile(r"(\d+(?:\.\d+)?)([a-z]*)")
_SPLIT_NUMBER = re.compile(r"[\d.]\s+[\d.]")   # "10 KB" is a size, "1 2" is not


def parse_size(text: str | int | float) -> int:
    """Bytes in `text`; a bare number is bytes. Raises ValueError with a readable message."""
    if isinstance(text, bool):
        raise ValueError(f"{text!r} is not a size")
    if isinstance(text, int | float):
        if text < 0:
            raise ValueError(f"{text!r} is negative")
        return int(text)
    m = _SIZE.fullmatch(str(text).strip().lower().replace(" ", ""))
    if m is None or m.group(2) not in _UNITS or _SPLIT_NUMBER.search(str(text)):
        raise ValueError(f"{text!r} is not a size (try 200000, 512KiB, 1MiB, 2GiB)")
    return int(float(m.group(1)) * _UNITS[m.group(2)])


def format_size(n: int) -> str:
    """1048576 -> '1 MiB', 204800 -> '200 KiB', 999 -> '999 bytes'."""
    for unit, size in (("GiB", 1024**3), ("MiB", 1024**2), ("KiB", 1024)):
        if n >= size:
            value = n / size
            return f"{value:.0f} {unit}" if value == int(value) or value >= 10 else f"{value:.1f} {unit}"
    return f"{n} bytes"

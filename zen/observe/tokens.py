"""Token counts by billing class, and one API call's worth of them.

The classes are Anthropic's, which bill each separately: fresh input, output, cache reads, and
cache writes that live 5 minutes or 1 hour (priced differently: peers that price every write at
the 5-minute rate undercount). Other agents map onto them (zen/observe/codex_rollout.py).

A null, missing, negative or non-numeric count is zero, never a crash: transcripts and payloads
come from other programs, of many versions. Stdlib only: the hook's fast path imports this.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

# names as they appear in usage / api.request events and in `zen metrics --json`
INPUT, OUTPUT, CACHE_READ = "input_tokens", "output_tokens", "cache_read_input_tokens"
CACHE_WRITE = "cache_creation_input_tokens"            # 5 m + 1 h: the sum, as Anthropic reports it
CACHE_WRITE_1H = "cache_creation_1h_input_tokens"      # the 1-hour part of it
FIELDS = (INPUT, OUTPUT, CACHE_READ, CACHE_WRITE, CACHE_WRITE_1H)


def count(value: Any) -> int:
    """A token count from whatever a producer wrote: ints, floats, numeric strings; else 0."""
    if isinstance(value, bool) or value is None:
        return 0
    if isinstance(value, int):
        return value if value > 0 else 0
    if isinstance(value, float):
        return int(value) if math.isfinite(value) and value > 0 else 0
    if isinstance(value, str):
        try:
            return count(float(value)) if "." in value or "e" in value.lower() else count(int(value))
        except ValueError:
            return 0
    return 0


def signed(value: Any) -> int:
    """Like `count`, but a negative number stays negative (a correction in a usage event)."""
    if isinstance(value, int | float) and not isinstance(value, bool) and value < 0:
        return -count(-value)
    return count(value)


class Tokens:
    """Counts per class (each >= 0 unless it is a difference, see `minus`)."""

    __slots__ = ("cache_read", "cache_write_1h", "cache_write_5m", "input", "output")

    def __init__(self, input: int = 0, output: int = 0, cache_read: int = 0, cache_write_5m: int = 0,
                 cache_write_1h: int = 0) -> None:
        self.input = input
        self.output = output
        self.cache_read = cache_read
        self.cache_write_5m = cache_write_5m
        self.cache_write_1h = cache_write_1h

    def astuple(self) -> tuple[int, int, int, int, int]:
        return (self.input, self.output, self.cache_read, self.cache_write_5m, self.cache_write_1h)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Tokens) and self.astuple() == other.astuple()

    def __hash__(self) -> int:
        return hash(self.astuple())

    def __repr__(self) -> str:
        return "Tokens({}, {}, {}, {}, {})".format(*self.astuple())

    @property
    def cache_write(self) -> int:
        return self.cache_write_5m + self.cache_write_1h

    @property
    def prompt(self) -> int:
        """Everything the request sent: fresh input plus cache reads and writes (the figure the
        long-context tier is decided on)."""
        return self.input + self.cache_read + self.cache_write_5m + self.cache_write_1h

    @property
    def total(self) -> int:
        return self.prompt + self.output

    def __bool__(self) -> bool:
        return any(self.astuple())

    def plus(self, other: Tokens) -> Tokens:
        return Tokens(*(a + b for a, b in zip(self.astuple(), other.astuple(), strict=True)))

    def minus(self, other: Tokens) -> Tokens:
        return Tokens(*(a - b for a, b in zip(self.astuple(), other.astuple(), strict=True)))

    def widest(self, other: Tokens) -> Tokens:
        """Class by class the larger: two copies of one response, one written mid-stream."""
        return Tokens(*(max(a, b) for a, b in zip(self.astuple(), other.astuple(), strict=True)))

    def fields(self) -> dict[str, int]:
        """As event / JSON fields (`cache_creation_input_tokens` is the 5 m + 1 h sum)."""
        return {INPUT: self.input, OUTPUT: self.output, CACHE_READ: self.cache_read,
                CACHE_WRITE: self.cache_write, CACHE_WRITE_1H: self.cache_write_1h}

    @classmethod
    def from_fields(cls, data: Mapping[str, Any]) -> Tokens:
        """The inverse of `fields`. Signed: a usage event may carry a correction."""
        write, one_hour = signed(data.get(CACHE_WRITE)), signed(data.get(CACHE_WRITE_1H))
        return cls(signed(data.get(INPUT)), signed(data.get(OUTPUT)), signed(data.get(CACHE_READ)),
                   write - one_hour, one_hour)

    def tolist(self) -> list[int]:
        return list(self.astuple())

    @classmethod
    def fromlist(cls, data: Any) -> Tokens:
        if not isinstance(data, list | tuple) or len(data) != 5:
            return cls()
        return cls(*(int(x) if isinstance(x, int) and not isinstance(x, bool) else 0 for x in data))


def anthropic_usage(usage: Any) -> Tokens:
    """An Anthropic `usage` object (Messages API, Claude Code transcripts).

    `cache_creation_input_tokens` is the sum of the writes; `cache_creation` splits it into
    `ephemeral_5m_input_tokens` and `ephemeral_1h_input_tokens` where the producer knows. Without
    the split every write is a 5-minute one; a split that falls short of the sum leaves the rest
    at 5 minutes, and one that exceeds it wins (it is the more detailed figure).
    """
    if not isinstance(usage, Mapping):
        return Tokens()
    total = count(usage.get("cache_creation_input_tokens"))
    split = usage.get("cache_creation")
    five = one = 0
    if isinstance(split, Mapping):
        five = count(split.get("ephemeral_5m_input_tokens"))
        one = count(split.get("ephemeral_1h_input_tokens"))
    five += max(0, total - five - one)
    return Tokens(count(usage.get("input_tokens")), count(usage.get("output_tokens")),
                  count(usage.get("cache_read_input_tokens")), five, one)

"""The sum of a set of API calls: tokens by class, cost, calls, errors, per model.

Each parser (Claude Code transcripts, Codex rollouts) reduces its lines to distinct API calls;
`Totals` adds them up, pricing every call on its own (its own model, its own long-context tier),
so a subagent on a cheaper model and one call over the tier threshold are both priced right.
A recorder (zen/observe/record.py) turns the change between two `Totals` into a usage event.

Stdlib only: the hook's fast path uses this.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from zen.observe import prices as price_table
from zen.observe.tokens import Tokens, signed

# a usage event's fields besides the token classes
COST, CALLS, ERRORS, MODEL = "cost_usd", "api_calls", "api_errors", "model"


class Totals:
    """Tokens, cost in USD, API calls and errors; `models` maps a model to its calls."""

    __slots__ = ("api_calls", "api_errors", "cost_usd", "models", "tokens", "unpriced")

    def __init__(self) -> None:
        self.tokens = Tokens()
        self.cost_usd = 0.0
        self.api_calls = 0
        self.api_errors = 0
        self.models: dict[str, int] = {}
        self.unpriced: set[str] = set()

    def add_call(self, model: str, tokens: Tokens, prices: Mapping[str, Any] | None,
                 cache: dict[str, price_table.Price | None] | None = None) -> float:
        """Count one call; returns its cost. `cache` memoises price lookups across calls."""
        if cache is not None and model in cache:
            price = cache[model]
        else:
            price = price_table.lookup(model, prices)
            if cache is not None:
                cache[model] = price
        if price is None or not price_table.known(model, prices):
            self.unpriced.add(model)
        usd = price_table.cost(model, tokens, price=price) if price is not None else 0.0
        self.tokens = self.tokens.plus(tokens)
        self.cost_usd += usd
        self.api_calls += 1
        self.models[model] = self.models.get(model, 0) + 1
        return usd

    def fields(self) -> dict[str, Any]:
        """As usage-event fields (cost unrounded to 1e-10: events are summed, and rounding each
        to the cent's ten-thousandth would drift)."""
        out: dict[str, Any] = dict(self.tokens.fields())
        out[COST] = round(self.cost_usd, 10)
        out[CALLS] = self.api_calls
        out[ERRORS] = self.api_errors
        return out

    def minus(self, before: Mapping[str, Any]) -> dict[str, Any] | None:
        """What these totals add over `before` (fields of the totals already recorded), or None
        when nothing changed. A count may go down (a replay found to be one): it is then negative,
        so the recorded events still sum to the truth."""
        was = Tokens.from_fields(before)
        delta: dict[str, Any] = dict(self.tokens.minus(was).fields())
        delta[CALLS] = self.api_calls - signed(before.get(CALLS))
        delta[ERRORS] = self.api_errors - signed(before.get(ERRORS))
        try:
            spent = float(before.get(COST) or 0.0)
        except (TypeError, ValueError):
            spent = 0.0
        delta[COST] = round(self.cost_usd - spent, 10)
        if not any(delta[k] for k in delta if k != COST) and abs(delta[COST]) < 1e-10:
            return None
        return delta


_COUNTED = (*Tokens().fields(), CALLS, ERRORS)


def add_fields(into: dict[str, Any], fields: Mapping[str, Any]) -> dict[str, Any]:
    """Sum usage-event fields (the token classes, cost, calls, errors) into `into`. (Run for
    every event of every timeline a metrics rebuild reads: the common case, ints, goes first.)"""
    for key in _COUNTED:
        v = fields.get(key)
        if type(v) is int:
            into[key] = into.get(key, 0) + v
        elif v is not None:
            into[key] = into.get(key, 0) + signed(v)
        else:
            into.setdefault(key, 0)
    v = fields.get(COST)
    if type(v) is float or type(v) is int:
        into[COST] = into.get(COST, 0.0) + v
    else:
        try:
            into[COST] = into.get(COST, 0.0) + float(v or 0.0)
        except (TypeError, ValueError):
            into.setdefault(COST, 0.0)
    return into


def total_of(calls: Iterable[tuple[str, Tokens]], prices: Mapping[str, Any] | None = None,
             errors: int = 0) -> Totals:
    out = Totals()
    cache: dict[str, price_table.Price | None] = {}
    for model, tokens in calls:
        out.add_call(model, tokens, prices, cache)
    out.api_errors = errors
    return out
